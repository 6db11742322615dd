package nn_test

import (
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/reftensor"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

// TestTorchNNGPU runs every case of nn.json on the GPU, forward and
// backward, as tensor's TestTorchRefGPU* do for the op families: float64
// cases with their inputs rounded to float32 (WGSL has no f64), compared
// with PyTorch at float32 precision (tol32) plus the change that the
// rounding makes to the exact answer (the case run on the CPU in float64
// on the rounded inputs), and with the CPU in float32 on the same inputs
// to a few ulps (nnGPUvsCPU).
func TestTorchNNGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	cases := torchref.MustLoad(t, "nn")
	worst := map[string]*[2]float64{}
	ran, pass := 0, 0
	for _, c := range cases {
		ran++
		if t.Run(c.Name, func(t *testing.T) {
			if nnOps[c.Op] == nil {
				t.Fatalf("no handler for %s", c.Op)
			}
			f64 := false
			for _, r := range append(slices.Clone(c.Inputs), c.Outputs...) {
				f64 = f64 || r.DType == "float64"
			}
			p := nnAsIs
			if f64 {
				p = nnIn32
			}
			g := evalNN(t, c, gpu, p)
			cpu := evalNN(t, c, tensor.CPU, p)
			var r64 []nnHost
			if f64 {
				r64 = evalNN(t, c, tensor.CPU, nnRounded64)
			}
			k, cond := nnSumLength(c), nnCondition(t, c)
			for i := range g {
				what := "output"
				if i > 0 {
					what = fmt.Sprintf("grad[%d]", g[i].input)
				}
				var alt *nnHost
				if r64 != nil {
					alt = &r64[i]
				}
				var want torchref.Tensor
				if i == 0 {
					want = c.Outputs[0]
				} else {
					want = *c.Grads[g[i].input]
				}
				key := c.Op + map[bool]string{true: " fwd", false: " bwd"}[i == 0]
				if worst[key] == nil {
					worst[key] = new([2]float64)
				}
				d1 := compareNNTorch(t, what, g[i], want, alt, cond)
				d2 := compareNNCPU(t, what, g[i], cpu[i], k, cond)
				worst[key][0], worst[key][1] = max(worst[key][0], d1), max(worst[key][1], d2)
			}
		}) {
			pass++
		}
	}
	t.Logf("nn.json on %v: %d cases, %d passed, %d failed", gpu, ran, pass, ran-pass)
	for _, key := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("  %-38s worst |gpu−torch| %.3f, |gpu−cpu| %.3f of the tolerance", key, worst[key][0], worst[key][1])
	}
}

type nnPrecision int

const (
	nnAsIs      nnPrecision = iota // the case's dtypes
	nnIn32                         // float64 → float32
	nnRounded64                    // float64 holding values rounded to float32
)

// nnHost is a result copied to the host: the output (input −1) or the
// gradient of an input.
type nnHost struct {
	input int
	dt    tensor.DType
	shape []int
	data  []float64
}

// nnTensor builds reference tensor r as a base on dev at precision p.
func nnTensor(t *testing.T, r torchref.Tensor, dev tensor.Device, p nnPrecision) *tensor.Tensor {
	b, err := reftensor.Base(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.DType == "float64" {
		switch p {
		case nnIn32:
			b = b.Cast(tensor.Float32)
		case nnRounded64:
			b = b.Cast(tensor.Float32).Cast(tensor.Float64)
		}
	}
	return b.To(dev)
}

// evalNN runs case c on dev at precision p: the output, then the
// gradient of every input the case differentiates.
func evalNN(t *testing.T, c torchref.Case, dev tensor.Device, p nnPrecision) (res []nnHost) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("on %v: panic: %v\n%s", dev, e, debug.Stack())
		}
	}()
	bases := make([]*tensor.Tensor, len(c.Inputs))
	ins := make([]*tensor.Tensor, len(c.Inputs))
	for i, r := range c.Inputs {
		bases[i] = nnTensor(t, r, dev, p)
		if r.RequiresGrad {
			bases[i].SetRequiresGrad(true)
		}
		ins[i] = applyViewOps(t, bases[i], r)
	}
	out := nnOps[c.Op](c, ins)
	if out.Device() != dev {
		t.Errorf("on %v: output on %v", dev, out.Device())
	}
	res = append(res, nnHost{-1, out.DType(), out.Shape(), out.Float64s()})
	if len(c.GradOutputs) == 0 {
		return res
	}
	gout := applyViewOps(t, nnTensor(t, c.GradOutputs[0], dev, p), c.GradOutputs[0])
	autograd.Backward(out.Mul(gout).Sum())
	for i, want := range c.Grads {
		if want == nil {
			continue
		}
		g := bases[i].Grad()
		if g == nil {
			g = tensor.ZerosLike(bases[i])
		}
		if g.Device() != dev {
			t.Errorf("on %v: grad[%d] on %v", dev, i, g.Device())
		}
		res = append(res, nnHost{i, g.DType(), g.Shape(), g.Float64s()})
	}
	return res
}

// nnSumLength bounds the longest sum in a case: the ratio of the largest
// input to the output (a loss's reduction, a layer norm's rows), or the
// largest dimension (a linear layer's inner one).
func nnSumLength(c torchref.Case) int {
	out := max(c.Outputs[0].Numel(), 1)
	k := 1
	for _, in := range c.Inputs {
		k = max(k, in.Numel()/out)
		for _, d := range in.Shape {
			k = max(k, d)
		}
	}
	return k
}

// nnCondition returns how much a case amplifies float32 rounding beyond
// what the tolerances assume: 1, but for a layer norm κ = max|x|/σ over
// its rows, σ = √(var + eps). An error of one ulp in the mean, ε·max|x|,
// becomes ε·κ in the normalized row (layer_norm/f64_tiny_variance has
// κ ≈ 310: both devices then miss the exact answer by about 2·10⁻⁵).
func nnCondition(t *testing.T, c torchref.Case) float64 {
	if c.Op != "layer_norm" {
		return 1
	}
	x, err := c.Inputs[0].Materialize()
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for _, d := range c.Ints("normalized_shape") {
		n *= d
	}
	kappa := 1.0
	for r := 0; r+n <= len(x.Data); r += n {
		row := x.Data[r : r+n]
		mean, top, v := 0.0, 0.0, 0.0
		for _, e := range row {
			mean += float64(float32(e)) / float64(n)
		}
		for _, e := range row {
			e = float64(float32(e))
			v += (e - mean) * (e - mean) / float64(n)
			top = max(top, math.Abs(e))
		}
		kappa = max(kappa, top/math.Sqrt(v+c.Float("eps")))
	}
	return kappa
}

// compareNNTorch compares a GPU result with PyTorch's within tol32
// (1e-5 absolute and relative, the float32 tolerance of TestTorchNN).
// For a float64 case, alt is the case in float64 on the rounded inputs:
// |alt − want| is added to the tolerance, and where rounding makes a NaN
// or an infinity of a finite value (or back) the GPU must give alt's.
// An ill-conditioned case (cond > 1) may differ by 4·cond·ε more, in
// units of the largest element. It returns the worst difference as a
// fraction of the tolerance.
func compareNNTorch(t *testing.T, what string, got nnHost, want torchref.Tensor, alt *nnHost, cond float64) float64 {
	t.Helper()
	wd := want.DType
	if wd == "float64" {
		wd = "float32"
	}
	if gd := got.dt.String(); gd != wd && !(wd == "int64" && gd == "int32") {
		t.Errorf("%s: dtype %s, want %s", what, gd, wd)
	}
	if !slices.Equal(got.shape, want.Shape) {
		t.Errorf("%s: shape %v, want %v", what, got.shape, want.Shape)
		return 0
	}
	special := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	extra := 0.0
	if cond > 1 {
		mag := 1.0
		for _, w := range want.Data {
			if !special(w) {
				mag = max(mag, math.Abs(w))
			}
		}
		extra = 4 * cond * 0x1p-23 * mag
	}
	same := func(v, w float64) bool { return v == w || math.IsNaN(v) && math.IsNaN(w) }
	worst := 0.0
	for i, w := range want.Data {
		v, w := got.data[i], float64(float32(w))
		a := w
		if alt != nil {
			a = float64(float32(alt.data[i]))
		}
		switch {
		case special(w) || special(a):
			if !same(v, w) && !same(v, a) {
				t.Errorf("%s[%d] = %v, torch %v (%v for the rounded inputs)", what, i, v, w, a)
				return worst
			}
		default:
			lim := tol32.abs + tol32.rel*math.Abs(w) + math.Abs(a-w) + extra
			d := math.Abs(v - w)
			if !(d <= lim) {
				t.Errorf("%s[%d] = %.9g, torch %.17g (diff %.3g, tolerance %.3g)", what, i, v, want.Data[i], d, lim)
				return d / lim
			}
			worst = max(worst, d/lim)
		}
	}
	return worst
}

// nnGPUvsCPU: the GPU against the CPU on the same float32 inputs:
// 32 ulps of the element (WGSL's exp and log against Go's, through a
// softmax or a loss's chain of ops) and 8 ulps of the largest element
// per term of the longest sum k (the two devices sum in other orders),
// plus 4·cond ulps of the largest element for an ill-conditioned case.
var nnGPUvsCPU = struct{ rtol, atol float64 }{32 * 0x1p-23, 8 * 0x1p-23}

// compareNNCPU compares a GPU result with the CPU's and returns the worst
// difference as a fraction of the tolerance.
func compareNNCPU(t *testing.T, what string, g, c nnHost, k int, cond float64) float64 {
	t.Helper()
	if g.dt != c.dt || !slices.Equal(g.shape, c.shape) {
		t.Errorf("%s: GPU %v %v, CPU %v %v", what, g.dt, g.shape, c.dt, c.shape)
		return 0
	}
	mag := 1.0
	for _, v := range c.data {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			mag = max(mag, math.Abs(v))
		}
	}
	worst := 0.0
	for i, w := range c.data {
		v := g.data[i]
		if math.IsNaN(w) || math.IsInf(w, 0) || g.dt != tensor.Float32 {
			if !(v == w || math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("%s[%d]: GPU %v, CPU %v", what, i, v, w)
				return worst
			}
			continue
		}
		lim := nnGPUvsCPU.rtol*math.Abs(w) + nnGPUvsCPU.atol*float64(k)*mag
		if cond > 1 {
			lim += 4 * cond * 0x1p-23 * mag
		}
		d := math.Abs(v - w)
		if !(d <= lim) {
			t.Errorf("%s[%d]: GPU %.9g, CPU %.9g (diff %.3g, tolerance %.3g)", what, i, v, w, d, lim)
			return d / lim
		}
		worst = max(worst, d/lim)
	}
	return worst
}
