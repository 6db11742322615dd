package autograd_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// TestForwardGPU runs every rule case's JVP and HVP on the GPU in
// float32 and compares them with the CPU's in float32 on the same
// inputs, and with the CPU's in float64 on the same values (what
// TestForwardRules and TestHVPRules proved right), as TestRulesGPU does
// for values and gradients. The inputs keep the case's layouts
// (transposed, stepped, expanded); the tangents and the weights of the
// HVP's scalar are rounded to float32 so that every precision sees the
// same numbers.
func TestForwardGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	ran := 0
	worst := map[string]float64{}
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			ran++
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				xs := c.xs()
				f, keep64 := c.f, map[int]bool{}
				if v, ok := gpuRuleVariants[op][c.name]; ok {
					f = v.f
					for _, i := range v.keep64 {
						keep64[i] = true
					}
				}
				tangents := make([][]float64, len(xs))
				for i, x := range xs {
					if x.RequiresGrad() {
						tangents[i] = rounded(randomLike(x).Float64s())
					}
				}
				weights := rounded(uniform(f(xs).Numel(), -1, 1))
				var orig []*T // the kept leaves ins borrow from
				defer runtime.KeepAlive(&orig)
				at := func(dev tensor.Device, dt tensor.DType) (ins, vs []*T) {
					ins, vs = make([]*T, len(xs)), make([]*T, len(xs))
					for i, x := range xs {
						d, typ := dev, dt
						if keep64[i] {
							d, typ = tensor.CPU, tensor.Float64
						}
						orig = append(orig, rebuild(t, x, d, typ))
						ins[i] = orig[len(orig)-1].Detach()
						if tangents[i] != nil {
							vs[i] = tensor.From(tangents[i], x.Shape(), tensor.Of(typ), tensor.On(d))
						}
					}
					return ins, vs
				}
				eval := evalForward(t, f, weights)
				g := eval(at(gpu, tensor.Float32))
				c32 := eval(at(tensor.CPU, tensor.Float32))
				r64 := eval(at(tensor.CPU, tensor.Float64))
				for i := range g {
					d1 := compareRule(t, g[i].what+": GPU vs CPU float32", g[i].vals, c32[i].vals, ruleGPUvsCPU)
					d2 := compareRule(t, g[i].what+": GPU vs CPU float64", g[i].vals, r64[i].vals, ruleGPUvsF64)
					worst["cpu32"], worst["f64"] = max(worst["cpu32"], d1), max(worst["f64"], d2)
				}
			})
		}
	}
	t.Logf("%d rule cases' JVPs and HVPs on %v; worst difference from the CPU in float32 %.3f, from float64 %.3f of the tolerance",
		ran, gpu, worst["cpu32"], worst["f64"])
}

// rounded returns vs rounded to float32.
func rounded(vs []float64) []float64 {
	for i, v := range vs {
		vs[i] = float64(float32(v))
	}
	return vs
}

// forwardResult is one quantity TestForwardGPU compares, on the host.
type forwardResult struct {
	what string
	vals []float64
}

// evalForward returns a function of inputs xs and tangents vs that
// returns f's value and J·v at xs in the direction vs, then the HVP of
// Σ f·w in the same direction, input by input.
func evalForward(t *testing.T, f func([]*T) *T, w []float64) func(xs, vs []*T) []forwardResult {
	return func(xs, vs []*T) []forwardResult { return evalForwardAt(t, f, w, xs, vs) }
}

func evalForwardAt(t *testing.T, f func([]*T) *T, w []float64, xs, vs []*T) []forwardResult {
	t.Helper()
	var out []forwardResult
	err := tensor.Catch(func() {
		y, jv := autograd.JVP(f, xs, vs)
		if jv.Device() != y.Device() {
			t.Errorf("jv is on %v, y on %v", jv.Device(), y.Device())
		}
		out = append(out, forwardResult{"value", y.Float64s()}, forwardResult{"J·v", jv.Float64s()})
		h := func(xs []*T) *T {
			y := f(xs)
			return y.Mul(tensor.From(w, y.Shape(), tensor.Of(y.DType()), tensor.On(y.Device()))).Sum()
		}
		_, hv := autograd.HVP(h, xs, vs)
		for i, d := range hv {
			if vs[i] != nil {
				if d.Device() != xs[i].Device() {
					t.Errorf("H·v %d is on %v, its input on %v", i, d.Device(), xs[i].Device())
				}
				out = append(out, forwardResult{fmt.Sprintf("H·v %d", i), d.Float64s()})
			}
		}
	})
	if err != nil {
		t.Fatalf("on %v: %v", xs[0].Device(), err)
	}
	return out
}

// TestForwardMemoryGPU: JVP, HVP and Jacobian steps under tensor.Scope
// on the GPU hold allocated memory flat with no garbage collection in
// between: the walk releases tangents after their last use, the graph f
// recorded (what its nodes saved) is freed when the call returns, and
// the reverse pass HVP records leaves no node behind (reverse rules
// compute no gradient for the constant weights).
func TestForwardMemoryGPU(t *testing.T) {
	gpu := devtest.MustGPU(t)
	g := devtest.Runtime(t, gpu)
	seed(10, 5)
	on := func(shape ...int) *T {
		return tensor.From(uniform(layout.Numel(shape), -1, 1), shape, tensor.Of(tensor.Float32), tensor.On(gpu)).Keep()
	}
	w1, w2, x, v := on(7, 33), on(33, 5), on(9, 7), on(9, 7)
	f := func(xs []*T) *T { return xs[0].MatMul(w1).Tanh().MatMul(w2).LogSoftmax(1) }
	step := func() {
		tensor.Scope(func() {
			_, jv := autograd.JVP(f, []*T{x}, []*T{v})
			_, hv := autograd.HVP(func(xs []*T) *T { return f(xs).Square().Sum() }, []*T{x}, []*T{v})
			jac := autograd.Jacobian(func(xs []*T) *T { return f(xs).Select(0, 0) }, []*T{x})
			_ = jv.Float64s()[0] + hv[0].Float64s()[0] + jac[0].Float64s()[0]
		})
	}
	step()
	heapInuse() // earlier tests' garbage goes back now, not during the steps
	var got []int64
	for range 4 {
		step()
		got = append(got, int64(g.Stats().Allocated))
	}
	if slices.ContainsFunc(got, func(a int64) bool { return a != got[0] }) {
		t.Errorf("allocated GPU memory after each step: %v bytes", got)
	}
}
