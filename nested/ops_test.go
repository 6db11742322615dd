package nested_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

// host returns t's values as float64 on the host (nil for nil).
func host(t *T) []float64 {
	if t == nil {
		return nil
	}
	return t.To(tensor.CPU).Cast(tensor.Float64).Float64s()
}

// flat concatenates the host values of ts, zeros standing for a nil
// gradient of the shape of like[i].
func flat(ts, like []*T) []float64 {
	var out []float64
	for i, t := range ts {
		if t == nil {
			out = append(out, make([]float64, like[i].Numel())...)
			continue
		}
		out = append(out, host(t)...)
	}
	return out
}

// outcome is one side of a comparison: the result's pieces and the
// gradients of the input and of the extra leaves.
type outcome struct {
	pieces, gradX []float64
	gradExtra     [][]float64
}

// loss is Σᵢ Σ pieces[i]·wᵢ for fixed pseudo-random weights.
func loss(ps []*T) *T {
	var l *T
	for i, p := range ps {
		term := p.Mul(data(p.Shape(), 100+float64(i), p.DType(), p.Device())).Sum()
		if l == nil {
			l = term
		} else {
			l = l.Add(term)
		}
	}
	return l
}

// extras makes the extra leaves of c for lengths.
func extras(c opCase, lengths []int, dt tensor.DType, dev tensor.Device) []*T {
	if c.params == nil {
		return nil
	}
	var out []*T
	for k, s := range c.params(lengths) {
		out = append(out, data(s, 2+float64(k), dt, dev).SetRequiresGrad(true))
	}
	return out
}

// runRagged runs c's ragged op on a Nested of lengths and backpropagates
// the loss.
func runRagged(c opCase, lengths []int, dt tensor.DType, dev tensor.Device) outcome {
	xv := data(append([]int{total(lengths)}, c.rest...), 1, dt, dev).SetRequiresGrad(true)
	ex := extras(c, lengths, dt, dev)
	ps := pieces(c.ragged(nested.FromValues(xv, lengths), ex))
	autograd.Backward(loss(ps))
	o := outcome{pieces: flat(ps, ps), gradX: flat([]*T{xv.Grad()}, []*T{xv})}
	for _, e := range ex {
		o.gradExtra = append(o.gradExtra, flat([]*T{e.Grad()}, []*T{e}))
	}
	return o
}

// runDense runs c's dense computation on separate component leaves.
func runDense(c opCase, lengths []int, dt tensor.DType, dev tensor.Device) outcome {
	all := data(append([]int{total(lengths)}, c.rest...), 1, dt, dev)
	xs := eachOf(rows(all, lengths), func(_ int, x *T) *T { return x.Clone().Detach().SetRequiresGrad(true) })
	ex := extras(c, lengths, dt, dev)
	ps := c.dense(xs, ex)
	autograd.Backward(loss(ps))
	grads := eachOf(xs, func(_ int, x *T) *T { return x.Grad() })
	o := outcome{pieces: flat(ps, ps), gradX: flat(grads, xs)}
	for _, e := range ex {
		o.gradExtra = append(o.gradExtra, flat([]*T{e.Grad()}, []*T{e}))
	}
	return o
}

// TestOpsMatchComponentByComponent checks every ragged op, forward and
// gradient, against the same computation on each component as a dense
// tensor, on the CPU and (when an adapter opens) the GPU, in float32,
// for six components of lengths 3 1 6 4 2 0 (an empty one included
// where the op allows) and components [len, 3, 5].
func TestOpsMatchComponentByComponent(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		for _, c := range cases() {
			t.Run(fmt.Sprintf("%s/%v", c.name, dev), func(t *testing.T) {
				lengths := lengthsFor(6, c.nonEmpty)
				tol := approx.Rel1(2e-5)
				var got, want outcome
				if err := tensor.Catch(func() { got = runRagged(c, lengths, tensor.Float32, dev) }); err != nil {
					t.Fatalf("ragged: %v", err)
				}
				if err := tensor.Catch(func() { want = runDense(c, lengths, tensor.Float32, dev) }); err != nil {
					t.Fatalf("dense: %v", err)
				}
				approx.Check(t, "forward", got.pieces, want.pieces, tol)
				approx.Check(t, "gradient of the input", got.gradX, want.gradX, tol)
				for k := range got.gradExtra {
					approx.Check(t, fmt.Sprintf("gradient of parameter %d", k), got.gradExtra[k], want.gradExtra[k], tol)
				}
			})
		}
	}
}

// TestOpsGradientsByFiniteDifferences checks every ragged op's gradient,
// input and parameters, against central finite differences in float64
// on the CPU, for three components of lengths 3 1 6.
func TestOpsGradientsByFiniteDifferences(t *testing.T) {
	lengths := lengthsFor(3, false)
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			xs := []*T{data(append([]int{total(lengths)}, c.rest...), 1, tensor.Float64, tensor.CPU).SetRequiresGrad(true)}
			xs = append(xs, extras(c, lengths, tensor.Float64, tensor.CPU)...)
			f := func(xs []*T) *T { return outputs(c.ragged(nested.FromValues(xs[0], lengths), xs[1:])) }
			if err := autograd.Check(f, xs, autograd.CheckOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestOpsForwardModeOnBothDevices checks every ragged op's Jacobian-vector
// product (autograd.JVP, forward mode through the tensor ops' tangent
// rules) against central finite differences in float64 on the CPU, and
// the GPU's JVP against the CPU's in float32, for lengths 3 1 6.
func TestOpsForwardModeOnBothDevices(t *testing.T) {
	lengths := lengthsFor(3, false)
	inputs := func(c opCase, dt tensor.DType, dev tensor.Device, seed float64) []*T {
		xs := []*T{data(append([]int{total(lengths)}, c.rest...), seed, dt, dev)}
		for k, s := range c.params(lengths) {
			xs = append(xs, data(s, seed+2+float64(k), dt, dev))
		}
		return xs
	}
	gpu, hasGPU := devtest.GPU(t)
	for _, c := range cases() {
		if c.params == nil {
			c.params = func([]int) [][]int { return nil }
		}
		t.Run(c.name, func(t *testing.T) {
			f := func(xs []*T) *T { return outputs(c.ragged(nested.FromValues(xs[0], lengths), xs[1:])) }
			xs, vs := inputs(c, tensor.Float64, tensor.CPU, 1), inputs(c, tensor.Float64, tensor.CPU, 7)
			_, jv := autograd.JVP(f, xs, vs)
			const eps = 1e-6
			shifted := func(s float64) []float64 {
				ys := make([]*T, len(xs))
				for i := range xs {
					ys[i] = xs[i].AddScaled(vs[i], s*eps)
				}
				return host(f(ys))
			}
			plus, minus := shifted(1), shifted(-1)
			fd := make([]float64, len(plus))
			for i := range fd {
				fd[i] = (plus[i] - minus[i]) / (2 * eps)
			}
			approx.Check(t, "JVP against finite differences", host(jv), fd, approx.AbsRel(1e-6, 1e-5))
			if !hasGPU {
				return
			}
			_, want := autograd.JVP(f, inputs(c, tensor.Float32, tensor.CPU, 1), inputs(c, tensor.Float32, tensor.CPU, 7))
			_, got := autograd.JVP(f, inputs(c, tensor.Float32, gpu, 1), inputs(c, tensor.Float32, gpu, 7))
			approx.Check(t, "GPU JVP against the CPU's", host(got), host(want), approx.Rel1(2e-5))
		})
	}
}
