package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// gradInput is one float64 input of a finite-difference check.
type gradInput struct {
	shape []int
	vals  []float64
	diff  bool // check the gradient with respect to this input
}

func randInput(r *rand.Rand, lo, hi float64, diff bool, shape ...int) gradInput {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
	}
	return gradInput{shape: shape, vals: v, diff: diff}
}

// checkGrad compares the gradients autograd computes for the scalar f
// with central differences (step 1e-6) in float64. A non-scalar f is
// reduced by a fixed random weighting first.
func checkGrad(t *testing.T, name string, ins []gradInput, f func(xs []*tensor.Tensor) *tensor.Tensor) {
	t.Helper()
	var weights *tensor.Tensor
	eval := func(xs []*tensor.Tensor) *tensor.Tensor {
		y := f(xs)
		if y.Numel() == 1 {
			return y.Reshape()
		}
		if weights == nil {
			r := rand.New(rand.NewPCG(7, uint64(y.Numel())))
			w := make([]float64, y.Numel())
			for i := range w {
				w[i] = r.Float64()*2 - 1
			}
			weights = tensor.New(w, y.Shape()...)
		}
		return y.Mul(weights).Sum()
	}
	build := func(grad bool) []*tensor.Tensor {
		xs := make([]*tensor.Tensor, len(ins))
		for i, in := range ins {
			xs[i] = tensor.New(in.vals, in.shape...)
			if grad && in.diff {
				xs[i].SetRequiresGrad(true)
			}
		}
		return xs
	}
	xs := build(true)
	autograd.Backward(eval(xs))
	const h = 1e-6
	worst := 0.0
	for i, in := range ins {
		if !in.diff {
			continue
		}
		got := make([]float64, len(in.vals))
		if g := xs[i].Grad(); g != nil {
			got = g.Float64s()
		}
		for j := range in.vals {
			v := in.vals[j]
			in.vals[j] = v + h
			fp := eval(build(false)).Item()
			in.vals[j] = v - h
			fm := eval(build(false)).Item()
			in.vals[j] = v
			num := (fp - fm) / (2 * h)
			d := math.Abs(got[j] - num)
			worst = max(worst, d)
			if d > 1e-6+1e-5*math.Abs(num) || math.IsNaN(got[j]) {
				t.Errorf("%s: d/dx%d[%d]: autograd %.10g, finite differences %.10g", name, i, j, got[j], num)
				return
			}
		}
	}
	t.Logf("%-40s max |autograd - finite differences| %.2e", name, worst)
}

func int32s(v ...int32) []int32 { return v }

func TestLossGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tgt := tensor.New(int32s(0, 4, 2, 2, -100, 3), 6)
	tgt2 := tensor.New(int32s(0, 4, 2, 2, 1, 3), 6)
	cw := tensor.New([]float64{0.5, 1, 2, 0.25, 1.5})
	for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
		checkGrad(t, "CrossEntropy/"+red.String(), []gradInput{randInput(r, -3, 3, true, 6, 5)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropy(x[0], tgt, nn.Reduce(red))
		})
		checkGrad(t, "CrossEntropy/weighted/"+red.String(), []gradInput{randInput(r, -3, 3, true, 6, 5)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return nn.CrossEntropy(x[0], tgt, nn.Reduce(red), nn.Weight(cw))
		})
		checkGrad(t, "NLLLoss/"+red.String(), []gradInput{randInput(r, -4, 0, true, 6, 5)}, func(x []*tensor.Tensor) *tensor.Tensor {
			return nn.NLLLoss(x[0], tgt2, nn.Reduce(red), nn.IgnoreIndex(2))
		})
		checkGrad(t, "MSELoss/"+red.String(), []gradInput{randInput(r, -2, 2, true, 3, 4), randInput(r, -2, 2, true, 3, 4)},
			func(x []*tensor.Tensor) *tensor.Tensor { return nn.MSELoss(x[0], x[1], nn.Reduce(red)) })
		bceX := randInput(r, -6, 6, true, 3, 5)
		bceX.vals[0], bceX.vals[1], bceX.vals[2] = 0, 45, -45 // the kink of |x| forms, and past the softplus threshold
		checkGrad(t, "BinaryCrossEntropyWithLogits/"+red.String(),
			[]gradInput{bceX, randInput(r, 0, 1, true, 3, 5), randInput(r, 0.1, 2, true, 1, 5)},
			func(x []*tensor.Tensor) *tensor.Tensor {
				return nn.BinaryCrossEntropyWithLogits(x[0], x[1], nn.Reduce(red), nn.Weight(x[2]))
			})
	}
	checkGrad(t, "CrossEntropy/1-D", []gradInput{randInput(r, -3, 3, true, 7)}, func(x []*tensor.Tensor) *tensor.Tensor {
		return nn.CrossEntropy(x[0], tensor.New(int32s(3)).Reshape())
	})
	spatial := tensor.New(int32s(0, 2, 1, -100, 2, 2, 0, 1), 2, 4)
	checkGrad(t, "CrossEntropy/(N,C,d)", []gradInput{randInput(r, -3, 3, true, 2, 3, 4)}, func(x []*tensor.Tensor) *tensor.Tensor {
		return nn.CrossEntropy(x[0], spatial)
	})
	checkGrad(t, "LayerNorm", []gradInput{randInput(r, -2, 2, true, 3, 2, 5), randInput(r, 0.5, 1.5, true, 2, 5), randInput(r, -1, 1, true, 2, 5)},
		func(x []*tensor.Tensor) *tensor.Tensor { return nn.LayerNorm(x[0], []int{2, 5}, x[1], x[2], 1e-5) })
	checkGrad(t, "Linear", []gradInput{randInput(r, -2, 2, true, 2, 3, 5), randInput(r, -1, 1, true, 4, 5), randInput(r, -1, 1, true, 4)},
		func(x []*tensor.Tensor) *tensor.Tensor { return nn.Linear(x[0], x[1], x[2]) })
	idx := tensor.New(int32s(3, 0, 3, 1), 2, 2)
	checkGrad(t, "Embedding", []gradInput{randInput(r, -1, 1, true, 5, 3)},
		func(x []*tensor.Tensor) *tensor.Tensor { return nn.Embedding(x[0], idx) })
}
