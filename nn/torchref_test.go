package nn_test

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/reftensor"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// opt returns in[i], or nil when the case has fewer inputs.
func opt(in []*tensor.Tensor, i int) *tensor.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

func reduction(c torchref.Case) nn.LossOption {
	switch c.String("reduction") {
	case "sum":
		return nn.Reduce(nn.ReduceSum)
	case "none":
		return nn.Reduce(nn.ReduceNone)
	}
	return nn.Reduce(nn.ReduceMean)
}

// nnOps runs each op of testdata/torch/nn.json with Tessera.
var nnOps = map[string]func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor{
	"softmax":     func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor { return in[0].Softmax(c.Int("dim")) },
	"log_softmax": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor { return in[0].LogSoftmax(c.Int("dim")) },
	"cross_entropy": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor {
		return nn.CrossEntropy(in[0], in[1], reduction(c), nn.IgnoreIndex(c.Int("ignore_index")))
	},
	"nll_loss": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor {
		return nn.NLLLoss(in[0], in[1], reduction(c), nn.IgnoreIndex(c.Int("ignore_index")))
	},
	"mse_loss": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor {
		return nn.MSELoss(in[0], in[1], reduction(c))
	},
	"binary_cross_entropy_with_logits": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor {
		opts := []nn.LossOption{reduction(c)}
		if w := opt(in, 2); w != nil {
			opts = append(opts, nn.Weight(w))
		}
		return nn.BinaryCrossEntropyWithLogits(in[0], in[1], opts...)
	},
	"embedding": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor { return nn.Embedding(in[0], in[1]) },
	"layer_norm": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor {
		return nn.LayerNorm(in[0], c.Ints("normalized_shape"), opt(in, 1), opt(in, 2), c.Float("eps"))
	},
	"linear": func(c torchref.Case, in []*tensor.Tensor) *tensor.Tensor { return nn.Linear(in[0], in[1], opt(in, 2)) },
}

// input builds the base leaf of a reference input and applies its view
// chain, so the gradient lands on the base as in the reference.
func input(t *testing.T, r torchref.Tensor) (base, in *tensor.Tensor) {
	t.Helper()
	base, err := reftensor.Base(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.RequiresGrad {
		base.SetRequiresGrad(true)
	}
	return base, applyViewOps(t, base, r)
}

// applyViewOps applies r's view chain to base.
func applyViewOps(t *testing.T, base *tensor.Tensor, r torchref.Tensor) *tensor.Tensor {
	t.Helper()
	in, err := reftensor.Views(base, r)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// tol is an absolute and a relative tolerance.
type tol struct{ abs, rel float64 }

var (
	tol64 = tol{1e-12, 1e-10}
	tol32 = tol{1e-5, 1e-5}
)

// diffStats records the largest differences seen per op.
type diffStats map[string]*[2]float64

func (s diffStats) add(op string, d [2]float64) {
	if s[op] == nil {
		s[op] = new([2]float64)
	}
	s[op][0], s[op][1] = max(s[op][0], d[0]), max(s[op][1], d[1])
}

// compare checks got against want (NaN-aware, infinities exact) and
// returns the largest absolute and relative differences.
func compare(t *testing.T, what string, got *tensor.Tensor, want torchref.Tensor, tl tol) [2]float64 {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), want.Shape)
		return [2]float64{}
	}
	var worst [2]float64
	g := got.Float64s()
	for i, w := range want.Data {
		v := g[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(v):
			if math.IsNaN(w) != math.IsNaN(v) {
				t.Errorf("%s[%d] = %v, want %v", what, i, v, w)
			}
			continue
		case math.IsInf(w, 0) || math.IsInf(v, 0):
			if v != w {
				t.Errorf("%s[%d] = %v, want %v", what, i, v, w)
			}
			continue
		}
		d := math.Abs(v - w)
		worst[0] = max(worst[0], d)
		if w != 0 {
			worst[1] = max(worst[1], d/math.Abs(w))
		}
		if d > tl.abs+tl.rel*math.Abs(w) {
			t.Errorf("%s[%d] = %.17g, want %.17g (diff %.3g)", what, i, v, w, d)
			return worst
		}
	}
	return worst
}

func TestTorchNN(t *testing.T) {
	cases := torchref.MustLoad(t, "nn")
	fwd, bwd := diffStats{}, diffStats{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			run := nnOps[c.Op]
			if run == nil {
				t.Skipf("no handler for %s (TestTorchNNComplete fails)", c.Op)
			}
			tl, key := tol64, c.Op+" f64"
			if strings.Contains(c.Name, "f32") {
				tl, key = tol32, c.Op+" f32"
			}
			bases := make([]*tensor.Tensor, len(c.Inputs))
			ins := make([]*tensor.Tensor, len(c.Inputs))
			for i, r := range c.Inputs {
				bases[i], ins[i] = input(t, r)
			}
			out := run(c, ins)
			if len(c.Outputs) != 1 {
				t.Fatalf("%d outputs", len(c.Outputs))
			}
			if want := c.Outputs[0].DType; want != out.DType().String() {
				t.Errorf("dtype %v, want %s", out.DType(), want)
			}
			fwd.add(key, compare(t, "output", out, c.Outputs[0], tl))
			if len(c.GradOutputs) == 0 {
				return
			}
			_, gout := input(t, c.GradOutputs[0])
			autograd.Backward(out.Mul(gout).Sum())
			for i, want := range c.Grads {
				if want == nil {
					continue
				}
				got := bases[i].Grad()
				if got == nil {
					got = tensor.ZerosLike(bases[i])
				}
				bwd.add(key, compare(t, fmt.Sprintf("grad[%d]", i), got, *want, tl))
			}
		})
	}
	ops := make([]string, 0, len(fwd))
	for op := range fwd {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		b := bwd[op]
		if b == nil {
			b = new([2]float64)
		}
		t.Logf("%-38s max |diff| forward %.2e (rel %.2e), gradients %.2e (rel %.2e)", op, fwd[op][0], fwd[op][1], b[0], b[1])
	}
}

// TestTorchNNComplete fails when nn.json has an op without a handler here,
// or a handler has no case in the file.
func TestTorchNNComplete(t *testing.T) {
	seen := map[string]int{}
	for _, c := range torchref.MustLoad(t, "nn") {
		seen[c.Op]++
		if nnOps[c.Op] == nil {
			t.Errorf("case %s: op %q has no test handler", c.Name, c.Op)
		}
	}
	for op := range nnOps {
		if seen[op] == 0 {
			t.Errorf("handler %q has no case in nn.json", op)
		}
	}
}
