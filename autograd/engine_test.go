package autograd_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

func vals(xs ...float64) []float64 { return xs }

// mapf applies f to each of xs.
func mapf(xs []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

var x0 = vals(0.5, -1.25, 2, 0.75, -0.3)

// TestAccumulateSelf: x used twice by one op gets both gradients.
func TestAccumulateSelf(t *testing.T) {
	x := param(x0)
	autograd.Backward(x.Mul(x).Sum())
	approx.Check(t, "d Σx²", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 2 * v }), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestAccumulateBranches: x used by two branches gets their sum.
func TestAccumulateBranches(t *testing.T) {
	x := param(x0)
	autograd.Backward(x.Exp().Sum().Add(x.Sin().Sum()))
	approx.Check(t, "d Σ(eˣ + sin x)", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return math.Exp(v) + math.Cos(v) }), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestAccumulateAcrossBackward: Grad adds up over Backward calls until
// it is cleared, as in PyTorch.
func TestAccumulateAcrossBackward(t *testing.T) {
	x := param(x0)
	for range 2 {
		autograd.Backward(x.Square().Sum())
	}
	approx.Check(t, "after two backwards", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 4 * v }), approx.Tol{Rel: 1e-15, Scale: 1})
	x.SetGrad(nil)
	autograd.Backward(x.Square().Sum())
	approx.Check(t, "after SetGrad(nil)", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 2 * v }), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestSharedGradients covers gradients that one rule hands to several
// inputs (Add passes g to both operands): summing into one of them must
// not release the tensor the other still holds, and a tensor returned by
// Grad must stay alive whatever the walk does after.
func TestSharedGradients(t *testing.T) {
	av, bv := vals(1, 2, -0.5), vals(3, 4, 1.5)
	// d/da (a+b)·ab = 2ab + b², d/db = a² + 2ab
	wantA := []float64{2*1*3 + 9, 2*2*4 + 16, 2*-0.5*1.5 + 2.25}
	wantB := []float64{1 + 2*1*3, 4 + 2*2*4, 0.25 + 2*-0.5*1.5}
	for _, order := range []string{"(a+b)·ab", "ab·(a+b)"} {
		t.Run(order, func(t *testing.T) {
			a, b := param(av), param(bv)
			s, p := a.Add(b), a.Mul(b)
			y := s.Mul(p)
			if order == "ab·(a+b)" {
				y = p.Mul(s)
			}
			if err := tensor.Catch(func() { autograd.Backward(y.Sum()) }); err != nil {
				t.Fatal(err)
			}
			approx.Check(t, "a.Grad", a.Grad().Float64s(), wantA, approx.Tol{Rel: 1e-15, Scale: 1})
			approx.Check(t, "b.Grad", b.Grad().Float64s(), wantB, approx.Tol{Rel: 1e-15, Scale: 1})
		})
	}
	t.Run("Grad of an intermediate", func(t *testing.T) {
		a, b := param(av), param(bv)
		c := a.Add(b)
		var gs []*tensor.Tensor
		if err := tensor.Catch(func() { gs = autograd.Grad(c.Square().Sum(), []*tensor.Tensor{c, a}) }); err != nil {
			t.Fatal(err)
		}
		want := []float64{2 * 4, 2 * 6, 2 * 1}
		approx.Check(t, "dc", gs[0].Float64s(), want, approx.Tol{Rel: 1e-15, Scale: 1})
		approx.Check(t, "da", gs[1].Float64s(), want, approx.Tol{Rel: 1e-15, Scale: 1})
	})
}

// TestGradsAreOwned: the Grad a leaf receives is its own contiguous
// tensor, even when the engine passed one gradient to several inputs
// (Add) or as an expanded view (Sum), so in-place updates of one Grad
// (clipping, zeroing) leave the others and GradOutput alone.
func TestGradsAreOwned(t *testing.T) {
	a, b, c := param(x0), param(x0), param(vals(1, 2, 3, 4, 5))
	seedGrad := tensor.Ones([]int{5}, tensor.Of(tensor.Float64))
	autograd.Backward(a.Add(b).Add(c.Sum()), autograd.GradOutput(seedGrad))
	for name, p := range map[string]*tensor.Tensor{"a": a, "b": b, "c": c} {
		g := p.Grad()
		if !g.IsContiguous() {
			t.Errorf("%s.Grad() is not contiguous: strides %v", name, g.Strides())
		}
		if g.SharesStorage(seedGrad) {
			t.Errorf("%s.Grad() shares storage with GradOutput", name)
		}
	}
	if a.Grad().SharesStorage(b.Grad()) {
		t.Error("a.Grad() and b.Grad() share storage")
	}
	if err := tensor.Catch(func() {
		tensor.NoGrad(func() {
			a.Grad().MulScalarInPlace(10)
			c.Grad().MulScalarInPlace(10)
		})
	}); err != nil {
		t.Fatalf("in-place update of a Grad: %v", err)
	}
	approx.Check(t, "a.Grad", a.Grad().Float64s(), vals(10, 10, 10, 10, 10), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "b.Grad", b.Grad().Float64s(), vals(1, 1, 1, 1, 1), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "c.Grad", c.Grad().Float64s(), vals(50, 50, 50, 50, 50), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "GradOutput", seedGrad.Float64s(), vals(1, 1, 1, 1, 1), approx.Tol{Rel: 0, Scale: 1})
}

// TestGradLeavesGradAlone: Grad returns gradients and touches no Grad.
func TestGradLeavesGradAlone(t *testing.T) {
	x, w := param(x0), param(vals(1, 2, 3, 4, 5))
	prev := tensor.New(vals(9, 9, 9, 9, 9))
	w.SetGrad(prev)
	gs := autograd.Grad(x.Mul(w).Sum(), []*tensor.Tensor{x})
	approx.Check(t, "dx", gs[0].Float64s(), vals(1, 2, 3, 4, 5), approx.Tol{Rel: 0, Scale: 1})
	if x.Grad() != nil {
		t.Errorf("x.Grad() = %v after Grad, want nil", x.Grad())
	}
	if w.Grad() != prev {
		t.Errorf("w.Grad() changed by Grad")
	}
}

// TestGradUnusedInput: an input y does not depend on gets nil.
func TestGradUnusedInput(t *testing.T) {
	x, u := param(x0), param(vals(1, 2))
	gs := autograd.Grad(x.Exp().Sum(), []*tensor.Tensor{u, x})
	if gs[0] != nil {
		t.Errorf("gradient of an unused input = %v, want nil", gs[0])
	}
	approx.Check(t, "dx", gs[1].Float64s(), mapf(x0, math.Exp), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestGradRunsOnlyWhatItNeeds: Grad with respect to an intermediate runs
// (and frees) only the nodes between y and it, as torch.autograd.grad.
func TestGradRunsOnlyWhatItNeeds(t *testing.T) {
	x := param(x0)
	h := x.Exp()
	y := h.Square().Sum()
	gs := autograd.Grad(y, []*tensor.Tensor{h})
	approx.Check(t, "dh", gs[0].Float64s(), mapf(x0, func(v float64) float64 { return 2 * math.Exp(v) }), approx.Tol{Rel: 1e-14, Scale: 1})
	if h.Source().Freed() {
		t.Error("Grad freed the node of h, which it did not need to run")
	}
	if !y.Source().Freed() {
		t.Error("Grad did not free the nodes it ran")
	}
	// The graph below h is intact: another backward through it works.
	autograd.Backward(h.Sum())
	approx.Check(t, "x.Grad", x.Grad().Float64s(), mapf(x0, math.Exp), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestNonScalarNeedsGradOutput: as PyTorch, "grad can be implicitly
// created only for scalar outputs".
func TestNonScalarNeedsGradOutput(t *testing.T) {
	x := param(x0)
	y := x.MulScalar(3)
	e := mustPanic(t, func() { autograd.Backward(y) })
	if !errors.Is(e, tensor.ErrAutograd) || !strings.Contains(e.Error(), "scalar") {
		t.Errorf("error %q, want ErrAutograd about scalar outputs", e)
	}
	autograd.Backward(y, autograd.GradOutput(tensor.FullLike(y, 2)))
	approx.Check(t, "x.Grad", x.Grad().Float64s(), vals(6, 6, 6, 6, 6), approx.Tol{Rel: 0, Scale: 1})
	e = mustPanic(t, func() {
		autograd.Backward(x.MulScalar(3), autograd.GradOutput(tensor.Ones([]int{2}, tensor.Of(tensor.Float64))))
	})
	if !errors.Is(e, tensor.ErrAutograd) {
		t.Errorf("GradOutput of the wrong shape: %v, want ErrAutograd", e)
	}
	e = mustPanic(t, func() {
		autograd.Backward(x.MulScalar(3), autograd.GradOutput(tensor.Ones([]int{5}, tensor.Of(tensor.Float32))))
	})
	if !errors.Is(e, tensor.ErrAutograd) {
		t.Errorf("GradOutput of the wrong dtype: %v, want ErrAutograd", e)
	}
}

// TestBackwardTwice: the second backward through a freed graph is a
// clear ErrAutograd error; RetainGraph allows it.
func TestBackwardTwice(t *testing.T) {
	x := param(x0)
	y := x.Exp().Sum()
	autograd.Backward(y)
	err := tensor.Catch(func() { autograd.Backward(y) })
	if !errors.Is(err, tensor.ErrAutograd) || !strings.Contains(err.Error(), "second time") || !strings.Contains(err.Error(), "RetainGraph") {
		t.Fatalf("second Backward: %v, want ErrAutograd naming the second time and RetainGraph", err)
	}
	approx.Check(t, "x.Grad after the failed backward", x.Grad().Float64s(), mapf(x0, math.Exp), approx.Tol{Rel: 1e-15, Scale: 1})

	x.SetGrad(nil)
	y = x.Exp().Sum()
	autograd.Backward(y, autograd.RetainGraph())
	if err := tensor.Catch(func() { autograd.Backward(y) }); err != nil {
		t.Fatalf("second Backward after RetainGraph: %v", err)
	}
	approx.Check(t, "x.Grad after two", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 2 * math.Exp(v) }), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestCreateGraph: gradients recorded with CreateGraph differentiate
// again: d²/dx² x³ = 6x, d³/dx³ x³ = 6.
func TestCreateGraph(t *testing.T) {
	for name, cube := range map[string]func(x *tensor.Tensor) *tensor.Tensor{
		"x·x·x":     func(x *tensor.Tensor) *tensor.Tensor { return x.Mul(x).Mul(x) },
		"PowScalar": func(x *tensor.Tensor) *tensor.Tensor { return x.PowScalar(3) },
	} {
		t.Run(name, func(t *testing.T) {
			x := param(x0)
			xs := []*tensor.Tensor{x}
			g1 := autograd.Grad(cube(x).Sum(), xs, autograd.CreateGraph())[0]
			approx.Check(t, "d/dx", g1.Float64s(), mapf(x0, func(v float64) float64 { return 3 * v * v }), approx.Tol{Rel: 1e-15, Scale: 1})
			if !g1.RequiresGrad() {
				t.Fatal("the gradient from CreateGraph does not require grad")
			}
			g2 := autograd.Grad(g1.Sum(), xs, autograd.CreateGraph())[0]
			approx.Check(t, "d²/dx²", g2.Float64s(), mapf(x0, func(v float64) float64 { return 6 * v }), approx.Tol{Rel: 1e-15, Scale: 1})
			g3 := autograd.Grad(g2.Sum(), xs)[0]
			approx.Check(t, "d³/dx³", g3.Float64s(), vals(6, 6, 6, 6, 6), approx.Tol{Rel: 1e-15, Scale: 1})
			if x.Grad() != nil {
				t.Error("Grad set x.Grad()")
			}
		})
	}
	t.Run("Backward", func(t *testing.T) {
		// Backward with CreateGraph leaves a differentiable x.Grad.
		x := param(x0)
		autograd.Backward(x.PowScalar(3).Sum(), autograd.CreateGraph())
		g := x.Grad()
		if !g.RequiresGrad() {
			t.Fatal("x.Grad() from Backward with CreateGraph does not require grad")
		}
		d2 := autograd.Grad(g.Sum(), []*tensor.Tensor{x})[0]
		approx.Check(t, "d²/dx²", d2.Float64s(), mapf(x0, func(v float64) float64 { return 6 * v }), approx.Tol{Rel: 1e-15, Scale: 1})
	})
}

// TestHooks: a hook sees the gradient and may replace it.
func TestHooks(t *testing.T) {
	x := param(x0)
	h := x.Exp()
	var seen []float64
	h.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { seen = g.Float64s(); return nil })
	h.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { return g.MulScalar(3) })
	x.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { return g.Neg() })
	autograd.Backward(h.Sum())
	approx.Check(t, "gradient the observer saw", seen, vals(1, 1, 1, 1, 1), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "x.Grad", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return -3 * math.Exp(v) }), approx.Tol{Rel: 1e-15, Scale: 1})
}

// TestRetainGrad: a non-leaf that called RetainGrad receives its
// gradient; other non-leaves do not.
func TestRetainGrad(t *testing.T) {
	x := param(x0)
	h := x.Exp()
	h.RetainGrad()
	k := h.MulScalar(2)
	autograd.Backward(k.Square().Sum())
	// y = Σ(2h)², dy/dh = 8h
	approx.Check(t, "h.Grad", h.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 8 * math.Exp(v) }), approx.Tol{Rel: 1e-15, Scale: 1})
	if k.Grad() != nil {
		t.Error("a non-leaf without RetainGrad got a Grad")
	}
	approx.Check(t, "x.Grad", x.Grad().Float64s(), mapf(x0, func(v float64) float64 { return 8 * math.Exp(2*v) }), approx.Tol{Rel: 1e-14, Scale: 1})
}

// TestNoGrad: nothing is recorded under NoGrad.
func TestNoGrad(t *testing.T) {
	x := param(x0)
	var y *tensor.Tensor
	tensor.NoGrad(func() { y = x.Exp().Mul(x).Sum() })
	if y.RequiresGrad() || y.Source() != nil {
		t.Fatalf("NoGrad recorded: RequiresGrad %v, Source %v", y.RequiresGrad(), y.Source())
	}
	if e := mustPanic(t, func() { autograd.Backward(y) }); !errors.Is(e, tensor.ErrAutograd) {
		t.Errorf("Backward of an unrecorded tensor: %v, want ErrAutograd", e)
	}
	if !tensor.GradEnabled() {
		t.Error("grad mode is still off after NoGrad")
	}
}

// TestDetach: Detach cuts the graph.
func TestDetach(t *testing.T) {
	x := param(x0)
	d := x.Detach()
	if d.RequiresGrad() || !d.IsLeaf() || !d.SharesStorage(x) {
		t.Fatalf("Detach: RequiresGrad %v, IsLeaf %v, SharesStorage %v", d.RequiresGrad(), d.IsLeaf(), d.SharesStorage(x))
	}
	autograd.Backward(d.Mul(x).Sum()) // d(x̄·x)/dx = x̄, not 2x
	approx.Check(t, "x.Grad", x.Grad().Float64s(), x0, approx.Tol{Rel: 0, Scale: 1})
}

// TestInplaceCheck: a tensor saved for backward and modified in place
// since makes backward fail, as PyTorch's version-counter check; one the
// rule does not read may change.
func TestInplaceCheck(t *testing.T) {
	inplace := func(t *tensor.Tensor) { tensor.NoGrad(func() { t.AddScalarInPlace(1) }) }
	fails := []struct {
		name string
		f    func(x *tensor.Tensor) *tensor.Tensor // builds the loss, modifying something it saved
	}{
		{"output saved by Exp", func(x *tensor.Tensor) *tensor.Tensor {
			y := x.Exp()
			inplace(y)
			return y.Sum()
		}},
		{"input saved by Log", func(x *tensor.Tensor) *tensor.Tensor {
			h := x.MulScalar(2)
			y := h.Log().Sum()
			inplace(h)
			return y
		}},
		{"leaf saved by Mul (an optimizer step before backward)", func(x *tensor.Tensor) *tensor.Tensor {
			y := x.Mul(x.MulScalar(3)).Sum()
			inplace(x)
			return y
		}},
		{"through a view of the saved tensor", func(x *tensor.Tensor) *tensor.Tensor {
			h := x.MulScalar(2)
			y := h.Log().Sum()
			inplace(h.Detach().Slice(0, 1, 3, 1))
			return y
		}},
	}
	for _, c := range fails {
		t.Run(c.name, func(t *testing.T) {
			x := param(mapf(x0, math.Abs))
			y := c.f(x)
			e := mustPanic(t, func() { autograd.Backward(y) })
			if !errors.Is(e, tensor.ErrAutograd) || !strings.Contains(e.Error(), "modified by an inplace operation") {
				t.Errorf("got %v, want ErrAutograd: ... modified by an inplace operation", e)
			}
		})
	}
	t.Run("operand of Add is not saved", func(t *testing.T) {
		x := param(x0)
		h := x.MulScalar(2)
		y := h.Add(x).Sum()
		inplace(h)
		if err := tensor.Catch(func() { autograd.Backward(y) }); err != nil {
			t.Fatalf("Backward: %v", err)
		}
		approx.Check(t, "x.Grad", x.Grad().Float64s(), vals(3, 3, 3, 3, 3), approx.Tol{Rel: 0, Scale: 1})
	})
}

// TestSavedTensorsFreed: backward frees what the forward pass saved,
// unless RetainGraph keeps it, and a freed node forgets its inputs.
func TestSavedTensorsFreed(t *testing.T) {
	x := param(x0)
	y := x.Exp().Tanh().Square().Sum()
	var nodes []*tensor.Node
	for t := y; t.Source() != nil; t = t.Source().Inputs[0] {
		nodes = append(nodes, t.Source())
	}
	if len(nodes) < 4 {
		t.Fatalf("%d nodes, want at least 4", len(nodes))
	}
	autograd.Backward(y, autograd.RetainGraph())
	for _, n := range nodes {
		if n.Freed() {
			t.Errorf("%v was freed despite RetainGraph", n.Op)
		}
	}
	autograd.Backward(y)
	for _, n := range nodes {
		if !n.Freed() || n.Inputs != nil {
			t.Errorf("%v after backward: Freed %v, Inputs %v", n.Op, n.Freed(), n.Inputs)
		}
	}
}

// TestTies: where the derivative is undefined, the gradient follows
// PyTorch: Maximum and Minimum split it evenly between equal operands,
// Amax and Amin share it among tied extrema, MaxDim gives it to the
// index it returned.
func TestTies(t *testing.T) {
	a, b := param(vals(1, 2, 5)), param(vals(1, 3, 4))
	autograd.Backward(a.Maximum(b).Sum().Add(a.Minimum(b).Sum().MulScalar(10)))
	approx.Check(t, "a.Grad", a.Grad().Float64s(), vals(0.5+5, 0+10, 1+0), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "b.Grad", b.Grad().Float64s(), vals(0.5+5, 1+0, 0+10), approx.Tol{Rel: 0, Scale: 1})

	x := param(vals(1, 3, 3, -2, -2))
	autograd.Backward(x.Max().Add(x.Min()))
	approx.Check(t, "Max+Min", x.Grad().Float64s(), vals(0, 0.5, 0.5, 0.5, 0.5), approx.Tol{Rel: 0, Scale: 1})

	m := param(vals(3, 1, 3, 0, 0, 0), 2, 3)
	v, i := m.MaxDim(1, false)
	autograd.Backward(v.Sum())
	got := m.Grad().Float64s()
	idx := i.Int32s()
	want := make([]float64, 6)
	want[idx[0]] = 1
	want[3+idx[1]] = 1
	approx.Check(t, "MaxDim", got, want, approx.Tol{Rel: 0, Scale: 1})
}

// TestWorkedExample: y = Σ x² + 5x + 4 has dy/dx = 2x + 5, exactly.
func TestWorkedExample(t *testing.T) {
	x := param(vals(3, 1, 4))
	y := x.Square().Add(x.MulScalar(5)).AddScalar(4).Sum()
	if got := y.Item(); got != 78 {
		t.Errorf("y = %g, want 78", got)
	}
	autograd.Backward(y)
	approx.Check(t, "dy/dx", x.Grad().Float64s(), vals(11, 7, 13), approx.Tol{Rel: 0, Scale: 1})
}

// TestStolenGradsStayApart checks that gradients stored without a copy
// (a fresh gradient that owns its memory becomes the leaf's Grad) never
// alias: Add hands one gradient to both inputs, so at most one may take
// it, and clipping one Grad in place leaves the other alone.
func TestStolenGradsStayApart(t *testing.T) {
	a := tensor.Zeros([]int{3, 4}).SetRequiresGrad(true)
	b := tensor.Zeros([]int{3, 4}).SetRequiresGrad(true)
	w := tensor.Ones([]int{3, 4}).SetRequiresGrad(true)
	autograd.Backward(a.Add(b).Mul(w).Sum())
	if a.Grad().SharesStorage(b.Grad()) {
		t.Fatal("a.Grad() and b.Grad() share storage")
	}
	a.Grad().MulScalarInPlace(0)
	for _, v := range b.Grad().Float32s() {
		if v != 1 {
			t.Fatalf("b.Grad() changed with a.Grad(): %v", b.Grad())
		}
	}
	// A second backward adds to the stolen gradient.
	autograd.Backward(w.MulScalar(3).Sum())
	for _, v := range w.Grad().Float32s() {
		if v != 3 { // d/dw of sum((a+b)·w) is a+b = 0, then 3
			t.Fatalf("w.Grad() = %v, want all 3", w.Grad())
		}
	}
}

// TestRemovedHookIsNotCalled: a hook taken off with its handle's Remove
// is skipped by backward; the others still run, in order.
func TestRemovedHookIsNotCalled(t *testing.T) {
	x := tensor.New([]float64{1, 2}).SetRequiresGrad(true)
	var calls []string
	first := x.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { calls = append(calls, "first"); return g.MulScalar(10) })
	x.RegisterHook(func(g *tensor.Tensor) *tensor.Tensor { calls = append(calls, "second"); return nil })
	first.Remove()
	first.Remove() // idempotent
	autograd.Backward(x.Mul(x).Sum())
	if len(calls) != 1 || calls[0] != "second" {
		t.Fatalf("hooks called: %v, want only the second", calls)
	}
	if got := x.Grad().Float64s(); got[0] != 2 || got[1] != 4 {
		t.Fatalf("grad %v, want [2 4]: the removed hook's scaling must not apply", got)
	}
	if n := len(x.Hooks()); n != 1 {
		t.Fatalf("Hooks has %d entries after a removal, want 1", n)
	}
}
