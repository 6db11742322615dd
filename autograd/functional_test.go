package autograd_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// matrix returns a float64 CPU tensor of shape, uniform in [-1, 1], that
// does not require grad.
func matrix(shape ...int) *T { return tensor.New(uniform(layout.Numel(shape), -1, 1), shape...) }

// TestJacobianClosedForms compares Jacobian with known Jacobians: a
// linear map, softmax (diag(s) - s sᵀ), a matrix product with respect
// to both factors, and an integer input, which gets none.
func TestJacobianClosedForms(t *testing.T) {
	seed(10, 1)
	t.Run("A·x", func(t *testing.T) {
		a, x := matrix(4, 3), matrix(3)
		jac := autograd.Jacobian(func(xs []*T) *T { return a.MatMul(xs[0]) }, []*T{x})
		approx.Check(t, "J", jac[0].Float64s(), a.Float64s(), approx.Tol{Rel: 1e-15, Scale: 1})
	})
	t.Run("softmax", func(t *testing.T) {
		x := matrix(5)
		jac := autograd.Jacobian(func(xs []*T) *T { return xs[0].Softmax(0) }, []*T{x})
		s := x.Softmax(0).Float64s()
		want := make([]float64, 25)
		for i := range 5 {
			for j := range 5 {
				want[i*5+j] = -s[i] * s[j]
				if i == j {
					want[i*5+j] += s[i]
				}
			}
		}
		if !slices.Equal(jac[0].Shape(), []int{5, 5}) {
			t.Fatalf("shape %v", jac[0].Shape())
		}
		approx.Check(t, "J", jac[0].Float64s(), want, approx.Tol{Rel: 1e-15, Scale: 1})
	})
	t.Run("x·w with an index", func(t *testing.T) {
		x, w := matrix(2, 3), matrix(3, 4)
		idx := index([]int{0, 1, 1}, 3)
		f := func(xs []*T) *T { return xs[0].MatMul(xs[1].IndexSelect(0, xs[2])) }
		jac := autograd.Jacobian(f, []*T{x, w, idx})
		if !slices.Equal(jac[0].Shape(), []int{2, 4, 2, 3}) || !slices.Equal(jac[1].Shape(), []int{2, 4, 3, 4}) || jac[2] != nil {
			t.Fatalf("shapes %v %v, index %v", jac[0].Shape(), jac[1].Shape(), jac[2])
		}
		xv, wv, sel := x.Float64s(), w.Float64s(), []int{0, 1, 1}
		wantX, wantW := make([]float64, 2*4*2*3), make([]float64, 2*4*3*4)
		for i := range 2 {
			for j := range 4 {
				for k := range 3 { // y[i,j] = Σₖ x[i,k] w[sel k, j]
					wantX[((i*4+j)*2+i)*3+k] = wv[sel[k]*4+j]
					wantW[((i*4+j)*3+sel[k])*4+j] += xv[i*3+k]
				}
			}
		}
		approx.Check(t, "∂y/∂x", jac[0].Float64s(), wantX, approx.Tol{Rel: 1e-15, Scale: 1})
		approx.Check(t, "∂y/∂w", jac[1].Float64s(), wantW, approx.Tol{Rel: 1e-15, Scale: 1})
	})
}

// TestHessianClosedForms compares Hessian with known Hessians: a
// quadratic form (A + Aᵀ), and Σ x²·y over two inputs, whose blocks are
// diag(2y), diag(2x) and 0.
func TestHessianClosedForms(t *testing.T) {
	seed(10, 2)
	t.Run("xᵀAx", func(t *testing.T) {
		a, x := matrix(4, 4), matrix(4)
		f := func(xs []*T) *T { return xs[0].MatMul(a).MatMul(xs[0]) }
		h := autograd.Hessian(f, []*T{x})
		want := a.Add(a.T()).Float64s()
		approx.Check(t, "H", h[0][0].Float64s(), want, approx.Tol{Rel: 1e-15, Scale: 1})
		_, hv := autograd.HVP(f, []*T{x}, []*T{x})
		approx.Check(t, "H·x", hv[0].Float64s(), a.Add(a.T()).MatMul(x).Float64s(), approx.Tol{Rel: 1e-14, Scale: 1})
	})
	t.Run("Σ x²·y", func(t *testing.T) {
		x, y := matrix(3), matrix(3)
		h := autograd.Hessian(func(xs []*T) *T { return xs[0].Square().Mul(xs[1]).Sum() }, []*T{x, y})
		diag := func(v []float64) []float64 {
			out := make([]float64, 9)
			for i, e := range v {
				out[i*4] = 2 * e
			}
			return out
		}
		approx.Check(t, "H_xx", h[0][0].Float64s(), diag(y.Float64s()), approx.Tol{Rel: 1e-15, Scale: 1})
		approx.Check(t, "H_xy", h[0][1].Float64s(), diag(x.Float64s()), approx.Tol{Rel: 1e-15, Scale: 1})
		approx.Check(t, "H_yx", h[1][0].Float64s(), diag(x.Float64s()), approx.Tol{Rel: 1e-15, Scale: 1})
		approx.Check(t, "H_yy", h[1][1].Float64s(), make([]float64, 9), approx.Tol{Rel: 0, Scale: 1})
	})
}

// TestJacobianChunks: a Jacobian pushed in several chunks of basis
// vectors (a tangent budget smaller than one push of all of them) equals
// the one pushed at once.
func TestJacobianChunks(t *testing.T) {
	seed(10, 3)
	x := matrix(5, 7)
	f := func(xs []*T) *T { return xs[0].Tanh().MatMul(xs[0].T()).Softmax(1) }
	whole := autograd.Jacobian(f, []*T{x})[0].Float64s()
	defer autograd.SetBasisBudget(autograd.SetBasisBudget(3 * 35))
	chunked := autograd.Jacobian(f, []*T{x})[0].Float64s()
	approx.Check(t, "chunked Jacobian", chunked, whole, approx.Tol{Rel: 1e-15, Scale: 1})
	wholeH := autograd.Hessian(func(xs []*T) *T { return f(xs).Square().Sum() }, []*T{x})[0][0].Float64s()
	autograd.SetBasisBudget(1)
	chunkedH := autograd.Hessian(func(xs []*T) *T { return f(xs).Square().Sum() }, []*T{x})[0][0].Float64s()
	approx.Check(t, "Hessian one basis vector at a time", chunkedH, wholeH, approx.Tol{Rel: 1e-13, Scale: 1})
}

// TestForwardComposes: when something outside requires grad, JVP's
// results keep their graph, so forward mode composes with either mode.
func TestForwardComposes(t *testing.T) {
	seed(10, 4)
	x, v := matrix(6), matrix(6)
	xv, vv := x.Float64s(), v.Float64s()
	f := func(xs []*T) *T { return xs[0].Sin() }
	t.Run("reverse over forward, in a parameter", func(t *testing.T) {
		w := leaf(-1, 1, 6)
		wv := w.Float64s()
		// jv = cos(w x)·w·v; d/dw Σ jv = v (cos(wx) - sin(wx)·w x)
		_, jv := autograd.JVP(func(xs []*T) *T { return f([]*T{xs[0].Mul(w)}) }, []*T{x}, []*T{v})
		g := autograd.Grad(jv.Sum(), []*T{w})[0]
		want := make([]float64, 6)
		for i := range want {
			want[i] = vv[i] * (math.Cos(wv[i]*xv[i]) - math.Sin(wv[i]*xv[i])*wv[i]*xv[i])
		}
		approx.Check(t, "d Σ jv/dw", g.Float64s(), want, approx.Tol{Rel: 1e-14, Scale: 1})
	})
	t.Run("reverse over forward, in the input", func(t *testing.T) {
		xg := x.Detach().SetRequiresGrad(true)
		y, jv := autograd.JVP(f, []*T{xg}, []*T{v})
		if !y.RequiresGrad() || !jv.RequiresGrad() {
			t.Fatal("the input requires grad, the results do not")
		}
		g := autograd.Grad(jv.Sum(), []*T{xg})[0] // d Σ cos(x)v / dx = -sin(x) v
		approx.Check(t, "d Σ jv/dx", g.Float64s(), mapf2(xv, vv, func(a, b float64) float64 { return -math.Sin(a) * b }), approx.Tol{Rel: 1e-15, Scale: 1})
	})
	t.Run("forward over forward", func(t *testing.T) {
		inner := func(xs []*T) *T { _, jv := autograd.JVP(f, xs, []*T{v}); return jv }
		_, jj := autograd.JVP(inner, []*T{x}, []*T{v}) // vᵀ ∇² sin v = -sin(x) v²
		approx.Check(t, "second directional derivative", jj.Float64s(), mapf2(xv, vv, func(a, b float64) float64 { return -math.Sin(a) * b * b }), approx.Tol{Rel: 1e-15, Scale: 1})
	})
	t.Run("under NoGrad", func(t *testing.T) {
		var jv *T
		tensor.NoGrad(func() { _, jv = autograd.JVP(f, []*T{x}, []*T{v}) })
		approx.Check(t, "jv", jv.Float64s(), mapf2(xv, vv, func(a, b float64) float64 { return math.Cos(a) * b }), approx.Tol{Rel: 1e-15, Scale: 1})
		if !tensor.GradEnabled() {
			t.Error("grad mode was left off")
		}
	})
	t.Run("in another context", func(t *testing.T) {
		c := tensor.NewContext()
		xc, vc := tensor.From(xv, []int{6}, tensor.In(c)), tensor.From(vv, []int{6}, tensor.In(c))
		var jv *T
		c.NoGrad(func() {
			_, jv = autograd.JVP(f, []*T{xc}, []*T{vc})
			if c.GradEnabled() {
				t.Error("JVP left grad mode on in the context")
			}
		})
		approx.Check(t, "jv", jv.Float64s(), mapf2(xv, vv, func(a, b float64) float64 { return math.Cos(a) * b }), approx.Tol{Rel: 1e-15, Scale: 1})
		if jv.Context() != c {
			t.Errorf("jv is in context %p, want %p", jv.Context(), c)
		}
	})
}

func mapf2(a, b []float64, f func(float64, float64) float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = f(a[i], b[i])
	}
	return out
}

// TestForwardBadInput: mismatched tangents and functions that return
// what the call cannot use are typed errors naming the call.
func TestForwardBadInput(t *testing.T) {
	x, idx := matrix(3), index([]int{0, 2}, 2)
	sq := func(xs []*T) *T { return xs[0].Square() }
	for _, c := range []struct {
		name string
		kind error
		call func()
	}{
		{"too few tangents", tensor.ErrArgument, func() { autograd.JVP(sq, []*T{x}, nil) }},
		{"tangent shape", tensor.ErrShape, func() { autograd.JVP(sq, []*T{x}, []*T{matrix(4)}) }},
		{"tangent dtype", tensor.ErrDType, func() { autograd.JVP(sq, []*T{x}, []*T{x.Cast(tensor.Float32)}) }},
		{"tangent of an index", tensor.ErrDType, func() {
			autograd.JVP(func(xs []*T) *T { return xs[0].Gather(0, xs[1]) }, []*T{x, idx}, []*T{x, idx})
		}},
		{"nil input", tensor.ErrArgument, func() { autograd.Jacobian(sq, []*T{nil}) }},
		{"nil result", tensor.ErrArgument, func() { autograd.JVP(func([]*T) *T { return nil }, []*T{x}, []*T{x}) }},
		{"HVP of a vector", tensor.ErrShape, func() { autograd.HVP(sq, []*T{x}, []*T{x}) }},
		{"Hessian of a vector", tensor.ErrShape, func() { autograd.Hessian(sq, []*T{x}) }},
		{"VJP without u", tensor.ErrShape, func() { autograd.VJP(sq, []*T{x}, nil) }},
		{"VJP u shape", tensor.ErrShape, func() { autograd.VJP(sq, []*T{x}, matrix(1, 3)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := mustPanic(t, c.call)
			if !errors.Is(err, c.kind) {
				t.Errorf("got %v, want %v", err, c.kind)
			}
		})
	}
	if !tensor.GradEnabled() {
		t.Error("a failed call left grad mode off")
	}
}

// TestForwardZeros: outputs that do not depend on the inputs get zero
// derivatives of the right shape, and nil tangents count as zero.
func TestForwardZeros(t *testing.T) {
	x, c := matrix(3), matrix(2)
	f := func(xs []*T) *T { return c.Exp() }
	y, jv := autograd.JVP(f, []*T{x}, []*T{x})
	approx.Check(t, "y", y.Float64s(), c.Exp().Float64s(), approx.Tol{Rel: 0, Scale: 1})
	approx.Check(t, "jv", jv.Float64s(), []float64{0, 0}, approx.Tol{Rel: 0, Scale: 1})
	_, jv = autograd.JVP(func(xs []*T) *T { return xs[0].Exp() }, []*T{x}, []*T{nil})
	approx.Check(t, "jv of a nil tangent", jv.Float64s(), []float64{0, 0, 0}, approx.Tol{Rel: 0, Scale: 1})
	jac := autograd.Jacobian(f, []*T{x})
	if !slices.Equal(jac[0].Shape(), []int{2, 3}) {
		t.Errorf("Jacobian shape %v", jac[0].Shape())
	}
	approx.Check(t, "Jacobian", jac[0].Float64s(), make([]float64, 6), approx.Tol{Rel: 0, Scale: 1})
	_, vjp := autograd.VJP(f, []*T{x}, c)
	approx.Check(t, "vjp", vjp[0].Float64s(), []float64{0, 0, 0}, approx.Tol{Rel: 0, Scale: 1})
	_, hv := autograd.HVP(func(xs []*T) *T { return xs[0].Sum() }, []*T{x}, []*T{x})
	approx.Check(t, "H·v of a linear function", hv[0].Float64s(), []float64{0, 0, 0}, approx.Tol{Rel: 0, Scale: 1})
}

// TestForwardTies: at ties, where the derivative is not defined, forward
// mode makes the choice reverse mode makes (the transpose of the same
// map): Maximum gives each side half, Amax shares among the tied
// elements, MaxDim follows the index it returns.
func TestForwardTies(t *testing.T) {
	x := tensor.New([]float64{1, 3, 3, 0})
	y := tensor.New([]float64{1, 2, 5, 0})
	vx, vy := tensor.New([]float64{1, 2, 3, 4}), tensor.New([]float64{10, 20, 30, 40})
	for _, c := range []struct {
		name string
		f    func([]*T) *T
		want []float64
	}{
		{"Maximum", func(xs []*T) *T { return xs[0].Maximum(xs[1]) }, []float64{5.5, 2, 30, 22}},
		{"Amax", func(xs []*T) *T { return xs[0].Add(xs[1].MulScalar(0)).Amax([]int{0}, false) }, []float64{2.5}},
		{"MaxDim", func(xs []*T) *T { v, _ := xs[0].Add(xs[1].MulScalar(0)).MaxDim(0, false); return v }, []float64{2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, jv := autograd.JVP(c.f, []*T{x, y}, []*T{vx, vy})
			approx.Check(t, "J·v", jv.Float64s(), c.want, approx.Tol{Rel: 1e-15, Scale: 1})
			u := tensor.OnesLike(jv)
			_, vjp := autograd.VJP(c.f, []*T{x, y}, u)
			lhs, _ := dot(u.Float64s(), jv.Float64s())
			a, _ := dot(vjp[0].Float64s(), vx.Float64s())
			b, _ := dot(vjp[1].Float64s(), vy.Float64s())
			if math.Abs(lhs-(a+b)) > 1e-12 {
				t.Errorf("⟨u, J v⟩ = %g, ⟨Jᵀ u, v⟩ = %g", lhs, a+b)
			}
		})
	}
}

// TestForwardResultOwnsMemory: a result that is a view of an input
// stays valid after the caller releases the input (the leaf JVP made to
// stand for the input is gone by then, and views of it held no memory
// of their own).
func TestForwardResultOwnsMemory(t *testing.T) {
	data := uniform(6, -1, 1)
	x := tensor.New(data, 2, 3)
	want := []float64{data[0], data[3], data[1], data[4], data[2], data[5]}
	y, _ := autograd.JVP(func(xs []*T) *T { return xs[0].T() }, []*T{x}, []*T{matrix(2, 3)})
	x.Release()
	if err := tensor.Catch(func() { approx.Check(t, "y", y.Float64s(), want, approx.Tol{Rel: 0, Scale: 1}) }); err != nil {
		t.Fatal(err)
	}
}
