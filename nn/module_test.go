package nn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

func f64(opts ...tensor.Option) []tensor.Option {
	return append([]tensor.Option{tensor.Of(tensor.Float64)}, opts...)
}

// wantPanic checks that f panics with a *tensor.Error wrapping kind.
func wantPanic(t *testing.T, what string, kind error, f func()) {
	t.Helper()
	err := tensor.Catch(f)
	if !errors.Is(err, kind) {
		t.Errorf("%s: got %v, want a %v panic", what, err, kind)
	}
}

// TestCrossEntropyReference checks the options nn.json does not cover
// (class weights, (N,C,d) inputs, 1-D inputs) against torch's formula
// evaluated in float64.
func TestCrossEntropyReference(t *testing.T) {
	g := tensor.NewGenerator(3)
	x := tensor.Uniform([]int{2, 3, 4}, -3, 3, f64(tensor.WithGenerator(g))...)
	y := []int32{0, 2, 1, -100, 2, 2, 0, 1}
	w := []float64{0.5, 2, 1.25}
	xv := x.Float64s()
	var num, den float64
	none := make([]float64, 8)
	for n := 0; n < 2; n++ {
		for d := 0; d < 4; d++ {
			c := y[n*4+d]
			if c == -100 {
				continue
			}
			var z float64
			for k := 0; k < 3; k++ {
				z += math.Exp(xv[n*12+k*4+d])
			}
			l := -w[c] * (xv[n*12+int(c)*4+d] - math.Log(z))
			none[n*4+d] = l
			num += l
			den += w[c]
		}
	}
	tgt := tensor.New(y, 2, 4)
	wt := tensor.New(w)
	approx.Require(t, "weighted mean", []float64{nn.CrossEntropy(x, tgt, nn.Weight(wt)).Item()}, []float64{num / den}, approx.Rel1(1e-14))
	approx.Require(t, "weighted sum", []float64{nn.CrossEntropy(x, tgt, nn.Weight(wt), nn.Reduce(nn.ReduceSum)).Item()}, []float64{num}, approx.Rel1(1e-14))
	approx.Require(t, "weighted none", nn.CrossEntropy(x, tgt, nn.Weight(wt), nn.Reduce(nn.ReduceNone)).Float64s(), none, approx.Rel1(1e-14))

	// A 1-D input is one sample.
	row := x.Select(0, 0).Select(1, 0) // (3)
	rv := row.Float64s()
	want := -(rv[2] - math.Log(math.Exp(rv[0])+math.Exp(rv[1])+math.Exp(rv[2])))
	approx.Require(t, "1-D", []float64{nn.CrossEntropy(row, tensor.New(int32s(2)).Reshape()).Item()}, []float64{want}, approx.Rel1(1e-14))

	all := tensor.New(int32s(-100, -100), 2)
	if v := nn.CrossEntropy(x.Select(2, 0), all).Item(); !math.IsNaN(v) {
		t.Errorf("all targets ignored: mean %v, want NaN", v)
	}
}

func TestLossMisuse(t *testing.T) {
	x := tensor.Zeros([]int{4, 3})
	wantPanic(t, "float target", tensor.ErrDType, func() { nn.CrossEntropy(x, tensor.Zeros([]int{4})) })
	wantPanic(t, "target shape", tensor.ErrShape, func() { nn.CrossEntropy(x, tensor.New(int32s(0, 1, 2))) })
	wantPanic(t, "target out of range", tensor.ErrIndex, func() { nn.CrossEntropy(x, tensor.New(int32s(0, 1, 3, 0))) })
	wantPanic(t, "0-d input", tensor.ErrShape, func() { nn.NLLLoss(tensor.Scalar(1, tensor.Float32, tensor.CPU), tensor.New(int32s(0)).Reshape()) })
	wantPanic(t, "class weight shape", tensor.ErrShape, func() {
		nn.CrossEntropy(x, tensor.New(int32s(0, 1, 2, 0)), nn.Weight(tensor.Ones([]int{4})))
	})
	wantPanic(t, "MSE shapes", tensor.ErrShape, func() { nn.MSELoss(x, tensor.Zeros([]int{4, 1})) })
	wantPanic(t, "MSE IgnoreIndex", tensor.ErrArgument, func() { nn.MSELoss(x, x, nn.IgnoreIndex(0)) })
	wantPanic(t, "BCE weight", tensor.ErrShape, func() { nn.BinaryCrossEntropyWithLogits(x, x, nn.Weight(tensor.Ones([]int{2}))) })
	wantPanic(t, "Linear", tensor.ErrShape, func() { nn.Linear(x, tensor.Zeros([]int{2, 4}), nil) })
	wantPanic(t, "LayerNorm", tensor.ErrShape, func() { nn.LayerNorm(x, []int{4}, nil, nil, 1e-5) })
	wantPanic(t, "Embedding", tensor.ErrDType, func() { nn.Embedding(x, tensor.Zeros([]int{2})) })
	wantPanic(t, "Dropout p", tensor.ErrArgument, func() { nn.Dropout(x, 1.5, true, nil) })
}

func TestDropout(t *testing.T) {
	x := tensor.Ones([]int{200, 100}, tensor.Of(tensor.Float64)).SetRequiresGrad(true)
	if nn.Dropout(x, 0.3, false, nil) != x || nn.Dropout(x, 0, true, nil) != x {
		t.Error("eval mode and p = 0 must return the input itself")
	}
	y := nn.Dropout(x, 0.3, true, tensor.NewGenerator(11))
	vals := y.Float64s()
	zeros := 0
	for _, v := range vals {
		switch {
		case v == 0:
			zeros++
		case math.Abs(v-1/0.7) > 1e-15:
			t.Fatalf("kept value %v, want 1/0.7", v)
		}
	}
	// 20000 Bernoulli(0.3) draws: the standard deviation of the fraction is 0.0032.
	if frac := float64(zeros) / float64(len(vals)); math.Abs(frac-0.3) > 0.015 {
		t.Errorf("dropped fraction %.4f, want 0.3", frac)
	}
	again := nn.Dropout(x, 0.3, true, tensor.NewGenerator(11)).Float64s()
	approx.Require(t, "same seed", again, vals, approx.Rel1(0))
	autograd.Backward(y.Sum())
	approx.Require(t, "gradient is the scaled mask", x.Grad().Float64s(), vals, approx.Rel1(0))
	if v := nn.Dropout(x, 1, true, nil).Sum().Item(); v != 0 {
		t.Errorf("p = 1: sum %v, want 0", v)
	}
}

func TestLinearLayerInit(t *testing.T) {
	l := nn.NewLinear(50, 400, tensor.WithGenerator(tensor.NewGenerator(5)))
	bound := 1 / math.Sqrt(50)
	for _, p := range nn.Parameters(l) {
		if !p.IsLeaf() || !p.RequiresGrad() || p.DType() != tensor.Float32 {
			t.Fatalf("parameter %v: want a Float32 leaf that requires grad", p.Shape())
		}
	}
	w := l.Weight.Float64s()
	var sq float64
	for _, v := range w {
		if math.Abs(v) > bound {
			t.Fatalf("weight %v outside ±%v", v, bound)
		}
		sq += v * v
	}
	// U(-b, b) has variance b²/3.
	if v := sq / float64(len(w)); math.Abs(v-bound*bound/3)/(bound*bound/3) > 0.05 {
		t.Errorf("weight variance %v, want %v", v, bound*bound/3)
	}
	y := l.Forward(tensor.Ones([]int{2, 7, 50}))
	if got := y.Shape(); len(got) != 3 || got[2] != 400 {
		t.Errorf("output shape %v", got)
	}
	nn.To(l, tensor.CPU)
	if len(nn.Parameters(l)) != 2 {
		t.Error("To(CPU) lost parameters")
	}
	e := nn.NewEmbedding(1000, 20, tensor.WithGenerator(tensor.NewGenerator(6)))
	ev := e.Weight.Float64s()
	var m, s float64
	for _, v := range ev {
		m += v
		s += v * v
	}
	m /= float64(len(ev))
	if s = s/float64(len(ev)) - m*m; math.Abs(m) > 0.03 || math.Abs(s-1) > 0.05 {
		t.Errorf("embedding mean %v variance %v, want N(0, 1)", m, s)
	}
}

func TestSequentialMLP(t *testing.T) {
	mlp := nn.NewMLP([]int{4, 8, 3}, (*tensor.Tensor).ReLU, f64()...)
	if len(mlp.Layers) != 3 || len(nn.Parameters(mlp)) != 4 {
		t.Fatalf("MLP has %d layers and %d parameters, want 3 and 4", len(mlp.Layers), len(nn.Parameters(mlp)))
	}
	x := tensor.Uniform([]int{5, 4}, -1, 1, f64()...)
	l0, l2 := mlp.Layers[0].(*nn.LinearLayer), mlp.Layers[2].(*nn.LinearLayer)
	want := nn.Linear(nn.Linear(x, l0.Weight, l0.Bias).ReLU(), l2.Weight, l2.Bias)
	approx.Require(t, "MLP", mlp.Forward(x).Float64s(), want.Float64s(), approx.Rel1(0))

	d := nn.NewDropout(0.5)
	s := nn.NewSequential(nn.NewLayerNorm([]int{4}, f64()...), d)
	nn.Eval(s)
	if d.Training {
		t.Error("Eval did not reach the dropout layer")
	}
	ln := nn.LayerNorm(x, []int{4}, nil, nil, 1e-5)
	approx.Require(t, "LayerNorm layer", s.Forward(x).Float64s(), ln.Float64s(), approx.Rel1(1e-15))

	// Parameters survive a Scope; temporaries do not.
	var loss *tensor.Tensor
	tensor.Scope(func() {
		loss = nn.MSELoss(mlp.Forward(x), tensor.Zeros([]int{5, 3}, f64()...))
		autograd.Backward(loss)
	})
	for _, p := range nn.Parameters(mlp) {
		_ = p.Float64s() // panics if released
		if p.Grad() == nil {
			t.Fatal("no gradient after backward")
		}
		_ = p.Grad().Float64s()
	}
	if tensor.Catch(func() { loss.Item() }) == nil {
		t.Error("the loss should have been released by the Scope")
	}
}

// The modules implement the interfaces they document.
var (
	_ nn.Layer  = (*nn.LinearLayer)(nil)
	_ nn.Layer  = (*nn.LayerNormLayer)(nil)
	_ nn.Layer  = (*nn.DropoutLayer)(nil)
	_ nn.Layer  = (*nn.Sequential)(nil)
	_ nn.Layer  = nn.Func(nil)
	_ nn.Layer  = (*nn.EmbeddingLayer)(nil)
	_ nn.Module = (*nn.RNNCell)(nil)
	_ nn.Module = (*nn.LSTMCell)(nil)
	_ nn.Module = (*nn.LSTM)(nil)
)
