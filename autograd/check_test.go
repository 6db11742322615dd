package autograd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// wrongExp is exp with a gradient 1+ε times too large on element 3 of
// its second input: a hook corrupts what flows back.
func wrongExp(eps float64) func(xs []*tensor.Tensor) *tensor.Tensor {
	return func(xs []*tensor.Tensor) *tensor.Tensor {
		h := xs[1].MulScalar(1)
		h.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor {
			scale := make([]float64, g.Numel())
			for i := range scale {
				scale[i] = 1
			}
			scale[3] += eps
			return g.Mul(tensor.New(scale, g.Shape()...))
		})
		return xs[0].Add(h.Exp())
	}
}

// TestCheckFindsWrongGradient: Check names the input, the element and
// both values of a wrong gradient, and accepts the right one.
func TestCheckFindsWrongGradient(t *testing.T) {
	seed(7, 7)
	xs := []*tensor.Tensor{leaf(-1, 1, 2, 3), leaf(-1, 1, 2, 3)}
	if err := autograd.Check(wrongExp(0), xs, autograd.CheckOptions{}); err != nil {
		t.Fatalf("a correct gradient: %v", err)
	}
	err := autograd.Check(wrongExp(1e-2), xs, autograd.CheckOptions{})
	if err == nil {
		t.Fatal("Check accepted a gradient 1% off")
	}
	for _, want := range []string{"input 1", "element 3", "index [1 0]", "analytic", "numeric"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The tolerance is what decides: 1e-2 relative passes with Rtol 0.1.
	if err := autograd.Check(wrongExp(1e-2), xs, autograd.CheckOptions{Rtol: 0.1}); err != nil {
		t.Errorf("with Rtol 0.1: %v", err)
	}
	if xs[0].Grad() != nil || xs[1].Grad() != nil {
		t.Error("Check set Grad on its inputs")
	}
}

// TestCheckSecondOrderFindsWrongGradient: a first-order gradient that is
// right in value but cut from the graph (a hook detaches it) passes
// Check and fails CheckSecondOrder.
func TestCheckSecondOrderFindsWrongGradient(t *testing.T) {
	seed(7, 8)
	xs := []*tensor.Tensor{leaf(-1, 1, 5)}
	square := func(detach bool) func(xs []*tensor.Tensor) *tensor.Tensor {
		return func(xs []*tensor.Tensor) *tensor.Tensor {
			h := xs[0].MulScalar(1)
			if detach {
				h.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { return g.Detach() })
			}
			return h.Square()
		}
	}
	if err := autograd.CheckSecondOrder(square(false), xs, autograd.CheckOptions{}); err != nil {
		t.Fatalf("square: %v", err)
	}
	if err := autograd.Check(square(true), xs, autograd.CheckOptions{}); err != nil {
		t.Fatalf("first order with a detached gradient: %v", err)
	}
	err := autograd.CheckSecondOrder(square(true), xs, autograd.CheckOptions{})
	if err == nil || !strings.Contains(err.Error(), "CheckSecondOrder") {
		t.Errorf("second order with a detached gradient: %v, want an error", err)
	}
}

// TestCheckInputs: constants ride along unchecked; no input requiring
// grad is an error; a failure of f is an error, not a panic.
func TestCheckInputs(t *testing.T) {
	seed(7, 9)
	x := leaf(-1, 1, 3, 5)
	idx := index([]int{4, 0, 2}, 3)
	f := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].IndexSelect(1, xs[1]).Sin() }
	if err := autograd.Check(f, []*tensor.Tensor{x, idx}, autograd.CheckOptions{}); err != nil {
		t.Errorf("with an index input: %v", err)
	}
	if err := autograd.Check(f, []*tensor.Tensor{x.Detach(), idx}, autograd.CheckOptions{}); err == nil {
		t.Error("no input requires grad: no error")
	}
	bad := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].MatMul(xs[0]) }
	err := autograd.Check(bad, []*tensor.Tensor{x}, autograd.CheckOptions{})
	if !errors.Is(err, tensor.ErrShape) {
		t.Errorf("f panics with ErrShape: Check returned %v", err)
	}
}

// TestCheckConstantOutput: an output that does not depend on the inputs
// has a zero gradient, and so must the numeric one.
func TestCheckConstantOutput(t *testing.T) {
	x := leaf(-1, 1, 4)
	c := tensor.New([]float64{1, 2, 3, 4})
	if err := autograd.Check(func([]*tensor.Tensor) *tensor.Tensor { return c }, []*tensor.Tensor{x}, autograd.CheckOptions{}); err != nil {
		t.Errorf("constant output: %v", err)
	}
	// x·0 through Detach: the numeric gradient is 1, the analytic 0.
	leak := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].Detach().MulScalar(1) }
	if err := autograd.Check(leak, []*tensor.Tensor{x}, autograd.CheckOptions{}); err == nil {
		t.Error("a function that detaches its input passed")
	}
}

// TestCheckFloat32: float32 inputs pass with the looser options the doc
// recommends, and the defaults are too tight for them.
func TestCheckFloat32(t *testing.T) {
	seed(7, 10)
	a := tensor.New([]float32{0.5, -1, 2, 0.25, -0.75, 1.5, 0.1}).SetRequiresGrad(true)
	f := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].Tanh().Mul(xs[0]) }
	if err := autograd.Check(f, []*tensor.Tensor{a}, autograd.CheckOptions{Eps: 1e-3, Atol: 1e-3, Rtol: 1e-2}); err != nil {
		t.Errorf("float32 with loose options: %v", err)
	}
	if err := autograd.Check(f, []*tensor.Tensor{a}, autograd.CheckOptions{}); err == nil {
		t.Error("float32 passed with the float64 defaults (eps 1e-6 is below float32's resolution): suspicious")
	}
}

// TestCheckRepeatedInput: a tensor passed twice is one variable.
func TestCheckRepeatedInput(t *testing.T) {
	seed(7, 11)
	x := leaf(-1, 1, 3, 5)
	f := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].Mul(xs[1].Sin()) }
	if err := autograd.Check(f, []*tensor.Tensor{x, x}, autograd.CheckOptions{}); err != nil {
		t.Error(err)
	}
}
