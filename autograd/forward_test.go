package autograd_test

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// Every case of TestRules (ruleCases: at least one per differentiable
// op, with broadcasting, non-contiguous inputs and inputs kept away from
// kinks) also checks the op's forward rule, here.

// forwardCase is a rule case's inputs as JVP takes them: the inputs
// that require grad in the case are detached (JVP's common use: nothing
// outside requires grad) and get a random tangent; the others (indices,
// masks) get none. The detached views borrow the memory of the case's
// leaves, which are kept (they require grad): the caller keeps orig
// alive while it uses xs.
func forwardCase(c ruleCase) (xs, vs, orig []*T) {
	orig = c.xs()
	xs, vs = slices.Clone(orig), make([]*T, len(orig))
	for i, x := range orig {
		if x.RequiresGrad() {
			xs[i], vs[i] = x.Detach(), randomLike(x)
		}
	}
	return xs, vs, orig
}

// randomLike returns values uniform in ±[0.5, 1.5) with x's shape, dtype
// and device.
func randomLike(x *T) *T {
	v := uniform(x.Numel(), 0.5, 1.5)
	for i := range v {
		if rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return tensor.From(v, x.Shape()).Cast(x.DType()).To(x.Device())
}

// moved returns xs + s·vs (inputs without a tangent unchanged), new
// contiguous tensors of the inputs' dtypes.
func moved(xs, vs []*T, s float64) []*T {
	out := make([]*T, len(xs))
	for i, x := range xs {
		out[i] = x
		if vs[i] == nil {
			continue
		}
		d, dv := x.Float64s(), vs[i].Float64s()
		for k := range d {
			d[k] += s * dv[k]
		}
		out[i] = tensor.From(d, x.Shape()).Cast(x.DType()).To(x.Device())
	}
	return out
}

// valuesOf evaluates f at xs with grad mode off.
func valuesOf(f func([]*T) *T, xs []*T) []float64 {
	var out []float64
	tensor.NoGrad(func() { out = f(xs).Float64s() })
	return out
}

// numericJVP is the central difference (f(x + eps·v) - f(x - eps·v)) / 2eps.
func numericJVP(f func([]*T) *T, xs, vs []*T, eps float64) []float64 {
	hi, lo := valuesOf(f, moved(xs, vs, eps)), valuesOf(f, moved(xs, vs, -eps))
	for k := range hi {
		hi[k] = (hi[k] - lo[k]) / (2 * eps)
	}
	return hi
}

// dot returns Σ a·b and Σ |a·b| (the scale of its rounding error).
func dot(a, b []float64) (sum, scale float64) {
	for k := range a {
		sum += a[k] * b[k]
		scale += math.Abs(a[k] * b[k])
	}
	return sum, scale
}

// options returns the case's CheckOptions with the defaults filled in,
// and the relative tolerance of an exact identity in its precision.
func options(c ruleCase) (autograd.CheckOptions, float64) {
	o, exact := c.opt, 1e-12
	if o.Eps == 0 {
		o = autograd.CheckOptions{Eps: 1e-6, Atol: 1e-5, Rtol: 1e-3}
	} else {
		exact = 1e-5 // the case rounds through float32
	}
	return o, exact
}

// TestForwardRules checks every op's forward rule, on the CPU in
// float64: the JVP of each rule case against central finite differences
// along the tangent, and against reverse mode through the identity
// ⟨u, J v⟩ = ⟨Jᵀ u, v⟩ for random u and v (Jᵀu from VJP).
func TestForwardRules(t *testing.T) {
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				xs, vs, orig := forwardCase(c)
				defer runtime.KeepAlive(orig)
				opt, exact := options(c)
				y, jv := autograd.JVP(c.f, xs, vs)
				if y.RequiresGrad() || jv.RequiresGrad() {
					t.Errorf("nothing requires grad, but y %v and jv %v do", y.RequiresGrad(), jv.RequiresGrad())
				}
				if fmt.Sprint(jv.Shape(), jv.DType()) != fmt.Sprint(y.Shape(), y.DType()) {
					t.Fatalf("jv is %v %v, y %v %v", jv.Shape(), jv.DType(), y.Shape(), y.DType())
				}
				approx.Check(t, "y", y.Float64s(), valuesOf(c.f, xs), approx.AbsRel(0, 0))
				approx.Check(t, "J·v vs finite differences", jv.Float64s(), numericJVP(c.f, xs, vs, opt.Eps), approx.AbsRel(opt.Atol, opt.Rtol))

				u := randomLike(y)
				_, vjp := autograd.VJP(c.f, xs, u)
				lhs, scale := dot(u.Float64s(), jv.Float64s())
				var rhs float64
				for i, v := range vs {
					if v != nil {
						d, s := dot(vjp[i].Float64s(), v.Float64s())
						rhs, scale = rhs+d, scale+s
					}
				}
				if !(math.Abs(lhs-rhs) <= exact*scale) {
					t.Errorf("⟨u, J v⟩ = %.15g, ⟨Jᵀ u, v⟩ = %.15g (difference %.3g, scale %.3g)", lhs, rhs, lhs-rhs, scale)
				}
			})
		}
	}
}

// TestForwardRulesBatched checks that every forward rule takes a batch
// of tangents (the leading dim Jacobian pushes basis vectors in): the
// Jacobian of each rule case, computed in forward mode with all the
// basis vectors of an input in one push, equals the one reverse mode
// gives row by row (VJP with the basis of the output).
func TestForwardRulesBatched(t *testing.T) {
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				xs, vs, orig := forwardCase(c)
				defer runtime.KeepAlive(orig)
				_, exact := options(c)
				jac := autograd.Jacobian(c.f, xs)
				y := c.f(xs)
				m := y.Numel()
				for o := range m {
					e := make([]float64, m)
					e[o] = 1
					_, row := autograd.VJP(c.f, xs, tensor.From(e, y.Shape()).Cast(y.DType()))
					for i, v := range vs {
						if v == nil {
							if jac[i] != nil {
								t.Errorf("input %d takes no tangent but has a Jacobian", i)
							}
							continue
						}
						n := xs[i].Numel()
						approx.Check(t, fmt.Sprintf("Jacobian %d row %d", i, o), jac[i].Float64s()[o*n:(o+1)*n], row[i].Float64s(), approx.AbsRel(exact, exact))
					}
				}
			})
		}
	}
}

// TestHVPRules checks the forward rules of the ops reverse rules use:
// for every rule case, the Hessian-vector product of h = Σ f·w (w fixed
// and random) at the case's inputs, computed forward over reverse,
// against central finite differences of h's gradients (from Grad) along
// the tangent.
func TestHVPRules(t *testing.T) {
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				xs, vs, orig := forwardCase(c)
				defer runtime.KeepAlive(orig)
				opt, _ := options(c)
				w := randomLike(c.f(xs))
				h := func(xs []*T) *T { return c.f(xs).Mul(w).Sum() }
				_, hv := autograd.HVP(h, xs, vs)
				hi, lo := gradsAt(h, moved(xs, vs, opt.Eps), vs), gradsAt(h, moved(xs, vs, -opt.Eps), vs)
				for i, v := range vs {
					if v == nil {
						if hv[i] != nil {
							t.Errorf("input %d takes no tangent but has an HVP", i)
						}
						continue
					}
					num := make([]float64, len(hi[i]))
					for j := range num {
						num[j] = (hi[i][j] - lo[i][j]) / (2 * opt.Eps)
					}
					approx.Check(t, fmt.Sprintf("H·v of input %d vs finite differences of gradients", i), hv[i].Float64s(), num, approx.AbsRel(opt.Atol, opt.Rtol))
				}
			})
		}
	}
}

// gradsAt returns the gradients of h at xs (reverse mode) with respect
// to the inputs that have a tangent, on the host (zeros where h does not
// depend on one).
func gradsAt(h func([]*T) *T, xs, vs []*T) [][]float64 {
	in := make([]*T, len(xs))
	var leaves []*T
	for i, x := range xs {
		in[i] = x
		if vs[i] != nil {
			in[i] = x.Detach().SetRequiresGrad(true)
			leaves = append(leaves, in[i])
		}
	}
	y := h(in)
	var gs []*T
	if y.RequiresGrad() {
		gs = autograd.Grad(y, leaves)
	}
	out := make([][]float64, len(xs))
	j := 0
	for i := range xs {
		if vs[i] == nil {
			continue
		}
		if gs == nil || gs[j] == nil {
			out[i] = make([]float64, xs[i].Numel())
		} else {
			out[i] = gs[j].Float64s()
		}
		j++
	}
	return out
}
