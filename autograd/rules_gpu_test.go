package autograd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestRulesGPU runs every case of TestRules on the GPU in float32 and
// compares the value and the gradients of every input that requires grad
// (DESIGN.md: "GPU gradients compared with CPU gradients for every
// rule"):
//
//   - with the CPU in float32 on the same inputs, to a few ulps
//     (ruleGPUvsCPU);
//   - with the CPU in float64 on the same values (the float64 inputs
//     rounded to float32), the exact answer to float32 accuracy
//     (ruleGPUvsF64): what the finite-difference checks of TestRules
//     proved right.
//
// Each float input is rebuilt on the device with the same strides and
// offset as the case's (transposed, stepped, expanded leaves stay so);
// integer and bool inputs (indices, masks) are copied.
func TestRulesGPU(t *testing.T) {
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
				at := func(dev tensor.Device, dt tensor.DType) []*T {
					out := make([]*T, len(xs))
					for i, x := range xs {
						d, typ := dev, dt
						if keep64[i] {
							d, typ = tensor.CPU, tensor.Float64
						}
						out[i] = rebuild(t, x, d, typ)
					}
					return out
				}
				onGPU := at(gpu, tensor.Float32)
				if ops := opsOf(f(onGPU)); !ops[op] {
					t.Fatalf("on the GPU the case does not record %v (it records %v)", op, ops)
				}
				g := evalRule(t, f, onGPU)
				c32 := evalRule(t, f, at(tensor.CPU, tensor.Float32))
				r64 := evalRule(t, f, at(tensor.CPU, tensor.Float64))
				for i := range g {
					what := "value"
					if i > 0 {
						what = fmt.Sprintf("grad %d", g[i].input)
					}
					d1 := compareRule(t, what+": GPU vs CPU float32", g[i].vals, c32[i].vals, ruleGPUvsCPU)
					d2 := compareRule(t, what+": GPU vs CPU float64", g[i].vals, r64[i].vals, ruleGPUvsF64)
					worst["cpu32"], worst["f64"] = max(worst["cpu32"], d1), max(worst["f64"], d2)
				}
			})
		}
	}
	t.Logf("%d rule cases on %v; worst difference from the CPU in float32 %.3f, from float64 %.3f of the tolerance",
		ran, gpu, worst["cpu32"], worst["f64"])
}

// ruleTol is |got − want| ≤ rtol·|want| + atol·max(1, max|want|).
type ruleTol struct{ rtol, atol float64 }

var (
	// ruleGPUvsCPU: both devices round to float32 after every op; WGSL's
	// transcendental functions differ from Go's by a few ulps, and a
	// rule's chain of ops (a softmax's backward, a matmul of ≤ 5 terms)
	// compounds them. On lavapipe the worst case is 1.4 ulps of the
	// element's magnitude plus the largest element's: 16 ulps of the
	// element and 8 of the largest element leave room for GPUs whose
	// exp and log are as loose as WGSL allows.
	ruleGPUvsCPU = ruleTol{16 * 0x1p-23, 8 * 0x1p-23}
	// ruleGPUvsF64: twice that against the exact answer, which the CPU
	// in float32 misses by about as much as the GPU.
	ruleGPUvsF64 = ruleTol{32 * 0x1p-23, 16 * 0x1p-23}
)

// ruleResult is a case's value or the gradient of one input, on the host.
type ruleResult struct {
	input int // the input a gradient belongs to
	vals  []float64
}

// evalRule evaluates f at xs and differentiates (f·w).sum(), w fixed
// weights in [-1, 1] (rounded to float32, so every precision sees the
// same), with respect to the inputs that require grad. It returns the
// value, then the gradients.
func evalRule(t *testing.T, f func([]*T) *T, xs []*T) []ruleResult {
	t.Helper()
	var out []ruleResult
	err := tensor.Catch(func() {
		y := f(xs)
		r := rand.New(rand.NewPCG(7, uint64(y.Numel())))
		w := make([]float64, y.Numel())
		for i := range w {
			w[i] = float64(float32(2*r.Float64() - 1))
		}
		wt := tensor.New(w, y.Shape()...).Cast(y.DType()).To(y.Device())
		var leaves []*T
		var idx []int
		for i, x := range xs {
			if x.RequiresGrad() {
				leaves, idx = append(leaves, x), append(idx, i)
			}
		}
		gs := autograd.Grad(y.Mul(wt).Sum(), leaves)
		out = append(out, ruleResult{-1, y.Float64s()})
		for j, g := range gs {
			if g == nil {
				g = tensor.ZerosLike(leaves[j])
			}
			if g.Device() != leaves[j].Device() {
				t.Errorf("grad %d is on %v, its input on %v", idx[j], g.Device(), leaves[j].Device())
			}
			out = append(out, ruleResult{idx[j], g.Float64s()})
		}
	})
	if err != nil {
		t.Fatalf("on %v: %v", xs[0].Device(), err)
	}
	return out
}

// compareRule compares got with want within tl (NaN with NaN,
// infinities exactly) and returns the worst difference as a fraction of
// the tolerance.
func compareRule(t *testing.T, what string, got, want []float64, tl ruleTol) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d elements, want %d", what, len(got), len(want))
		return 0
	}
	mag := 1.0
	for _, w := range want {
		if !math.IsInf(w, 0) && !math.IsNaN(w) {
			mag = max(mag, math.Abs(w))
		}
	}
	worst := 0.0
	for i, w := range want {
		v := got[i]
		lim := tl.rtol*math.Abs(w) + tl.atol*mag
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if !(v == w || math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("%s: [%d] = %v, want %v", what, i, v, w)
			}
		case !(math.Abs(v-w) <= lim):
			t.Errorf("%s: [%d] = %.9g, want %.9g (diff %.3g, tolerance %.3g)\n got %v\nwant %v", what, i, v, w, v-w, lim, got, want)
			return math.Abs(v-w) / lim
		default:
			worst = max(worst, math.Abs(v-w)/lim)
		}
	}
	return worst
}

// gpuRuleVariant replaces a case's function on every device, for cases
// that need float64 (CPU-only) tensors: keep64 lists the inputs that stay
// float64 on the CPU while the others move to the GPU.
type gpuRuleVariant struct {
	f      func([]*T) *T
	keep64 []int
}

// gpuRuleVariants: the GPU has one float dtype, so a cast between floats
// can only happen at the border with the CPU. These variants move the
// value from the GPU to the CPU before the cast, so the gradient goes
// back through Cast's rule on the CPU and Copy's to the GPU.
var gpuRuleVariants = map[tensor.Op]map[string]gpuRuleVariant{
	tensor.OpCast: {
		"through float32": {f: un(func(x *T) *T {
			return x.Cast(tensor.Float32).MulScalar(3).To(tensor.CPU).Cast(tensor.Float64)
		})},
		"float32 + float64 promotes": {f: bin(func(a, b *T) *T { return a.To(tensor.CPU).Mul(b) }), keep64: []int{1}},
	},
	tensor.OpAddmm:     {"float32 bias (20) + 7x9 · 9x20": {f: addmm}},
	tensor.OpAddmmReLU: {"float32 bias (20) + 7x9 · 9x20": {f: addmmReLU}},
}

// rebuild returns a copy of x with dtype dt on dev that has x's values,
// shape, strides and offset (the gaps of a stepped view hold NaN, so a
// kernel that reads them shows), and requires grad when x does. Float
// values are rounded to float32 first, so every precision sees the same
// numbers. Integer and bool tensors are copied as they are.
func rebuild(t *testing.T, x *T, dev tensor.Device, dt tensor.DType) *T {
	t.Helper()
	if !x.DType().IsFloat() {
		return x.To(dev)
	}
	shape, strides, off := x.Shape(), x.Strides(), x.Offset()
	vals := x.Float64s()
	for i, v := range vals {
		vals[i] = float64(float32(v))
	}
	// The dims that step through memory, largest stride first; the
	// others have size 1 or stride 0 (expanded).
	var dims, others []int
	for i, s := range strides {
		if shape[i] > 1 && s != 0 {
			dims = append(dims, i)
		} else {
			others = append(others, i)
		}
	}
	slices.SortStableFunc(dims, func(a, b int) int { return strides[b] - strides[a] })
	// A contiguous block whose dims have these strides: sizes
	// shape[dims[0]], s0/s1, s1/s2, ..., then the last stride.
	block := []int{1}
	if len(dims) > 0 {
		block = []int{shape[dims[0]]}
		for j := 1; j < len(dims); j++ {
			hi, lo := strides[dims[j-1]], strides[dims[j]]
			if hi%lo != 0 || shape[dims[j]]*lo > hi {
				t.Fatalf("rebuild: layout %v strides %v is not a stepped view", shape, strides)
			}
			block = append(block, hi/lo)
		}
		block = append(block, strides[dims[len(dims)-1]])
	}
	total := 1
	for _, b := range block {
		total *= b
	}
	data := make([]float64, off+total)
	for i := range data {
		data[i] = math.NaN()
	}
	idx := make([]int, len(shape))
	for n := range vals {
		p := off
		for i, v := range idx {
			p += v * strides[i]
		}
		data[p] = vals[n]
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	var v *T
	tensor.NoGrad(func() {
		base := tensor.New(data).Cast(dt).To(dev)
		v = base.Narrow(0, off, total).View(block...)
		if len(dims) > 0 {
			for j := 1; j < len(dims); j++ {
				v = v.Narrow(j, 0, shape[dims[j]])
			}
			v = v.Select(len(dims), 0)
		} else {
			v = v.Reshape()
		}
		order := append(slices.Clone(dims), others...)
		for range others {
			v = v.Unsqueeze(v.Dim())
		}
		perm := make([]int, len(order))
		for pos, d := range order {
			perm[d] = pos
		}
		if len(perm) > 1 {
			v = v.Permute(perm...)
		}
		v = v.Expand(shape...).Detach()
	})
	got := v.Strides()
	for i := range shape {
		if shape[i] > 1 && got[i] != strides[i] {
			t.Fatalf("rebuild: strides %v, want %v", got, strides)
		}
	}
	if v.Offset() != off || !slices.EqualFunc(v.Float64s(), vals, func(a, b float64) bool { return a == b }) {
		t.Fatalf("rebuild: offset %d values %v, want %d %v", v.Offset(), v.Float64s(), off, vals)
	}
	return v.SetRequiresGrad(x.RequiresGrad())
}
