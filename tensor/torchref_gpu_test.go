package tensor_test

// The PyTorch reference cases on the GPU (DESIGN.md, "Truth": compare the
// GPU with the CPU for every op, forward and backward). When devtest gives
// a GPU, every case of testdata/torch/{elementwise,reduce,linalg,index,
// shape}.json runs there, forward and backward:
//
//   - float32 cases as they are; float64 cases with their float inputs
//     (and upstream gradients) rounded to float32, since WGSL has no f64;
//   - the GPU's results are compared with PyTorch's at float32 precision
//     (gpuTorchTolerance), plus, for a float64 case, the change that
//     rounding the inputs to float32 makes to the exact answer: that
//     change is measured, not guessed, by running the case on the CPU in
//     float64 on the rounded inputs (precision rounded64). Integer and bool
//     outputs must match exactly; where rounding the inputs flips one
//     (two float64 values that become equal in float32), the GPU must give
//     what the rounded inputs give. NaN and ±Inf must match;
//   - the GPU's results are compared with the CPU's for the same float32
//     inputs, to a few ulps (gpuCPUTolerance).

import (
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

func TestTorchRefGPUElementwise(t *testing.T) { runTorchFamilyGPU(t, "elementwise") }
func TestTorchRefGPUReduce(t *testing.T)      { runTorchFamilyGPU(t, "reduce") }
func TestTorchRefGPULinalg(t *testing.T)      { runTorchFamilyGPU(t, "linalg") }
func TestTorchRefGPUIndex(t *testing.T)       { runTorchFamilyGPU(t, "index") }
func TestTorchRefGPUShape(t *testing.T)       { runTorchFamilyGPU(t, "shape") }

// precision says how a case's float64 tensors are built.
type precision int

const (
	// asIs: the case's dtypes.
	asIs precision = iota
	// in32: float64 tensors become float32 (the GPU's float).
	in32
	// rounded64: float64 tensors stay float64 but hold their values
	// rounded to float32: the exact answer for what an in32 run sees.
	rounded64
)

// hostTensor is a result copied off its device.
type hostTensor struct {
	dt    tensor.DType
	shape []int
	data  []float64
}

func toHost(x *tensor.Tensor) hostTensor {
	return hostTensor{x.DType(), x.Shape(), x.Float64s()}
}

// caseResult holds a case's outputs and the gradients of its base inputs
// (nil where the input needs none or got none).
type caseResult struct {
	outs  []hostTensor
	grads []*hostTensor
}

// convertTorch builds reference tensor x as a base tensor on dev at
// precision p.
func convertTorch(t *testing.T, x torchref.Tensor, dev tensor.Device, p precision) *tensor.Tensor {
	b := torchTensor(t, x)
	if b.DType() == tensor.Float64 {
		switch p {
		case in32:
			b = b.Cast(tensor.Float32)
		case rounded64:
			b = b.Cast(tensor.Float32).Cast(tensor.Float64)
		}
	}
	return b.To(dev)
}

// evalTorchCase runs case c on dev at precision p, forward and, when the
// case has upstream gradients, backward.
func evalTorchCase(t *testing.T, c torchref.Case, dev tensor.Device, p precision) (r caseResult) {
	t.Helper()
	defer func() {
		if e := recover(); e != nil {
			t.Fatalf("on %v: panic: %v\n%s", dev, e, debug.Stack())
		}
	}()
	if p == in32 && c.Op == "cast" && c.String("dtype") == "float64" {
		// float64 is CPU-only: a cast to float64 becomes one to float32.
		c.Attrs = maps.Clone(c.Attrs)
		c.Attrs["dtype"] = "float32"
	}
	bases := make([]*tensor.Tensor, len(c.Inputs))
	in := make([]*tensor.Tensor, len(c.Inputs))
	for i, ti := range c.Inputs {
		bases[i] = convertTorch(t, ti, dev, p)
		if ti.RequiresGrad {
			bases[i].SetRequiresGrad(true)
		}
		in[i] = applyViews(t, bases[i], ti)
	}
	outs := torchOps[c.Op](c, in)
	if len(outs) != len(c.Outputs) {
		t.Fatalf("on %v: %d outputs, torch has %d", dev, len(outs), len(c.Outputs))
	}
	for i, o := range outs {
		if o.Device() != dev {
			t.Errorf("on %v: output %d is on %v", dev, i, o.Device())
		}
		r.outs = append(r.outs, toHost(o))
	}
	if len(c.GradOutputs) == 0 {
		return r
	}
	var loss *tensor.Tensor
	for i, g := range c.GradOutputs {
		term := outs[i].Mul(convertTorch(t, g, dev, p)).Sum()
		if loss == nil {
			loss = term
		} else {
			loss = loss.Add(term)
		}
	}
	autograd.Backward(loss)
	r.grads = make([]*hostTensor, len(c.Inputs))
	for i := range c.Grads {
		if g := bases[i].Grad(); g != nil {
			if g.Device() != dev {
				t.Errorf("on %v: grad %d is on %v", dev, i, g.Device())
			}
			h := toHost(g)
			r.grads[i] = &h
		}
	}
	return r
}

// caseHasFloat64 reports whether a case has float64 tensors, which the
// GPU runs in float32.
func caseHasFloat64(c torchref.Case) bool {
	for _, x := range append(slices.Clone(c.Inputs), c.Outputs...) {
		if x.DType == "float64" {
			return true
		}
	}
	return false
}

// gpuTorchTolerance is the tolerance of a GPU result against PyTorch:
// the CPU harness's float32 tolerance (torchTolerance of the case as if it
// were float32: rtol 2e-6, or 1e-5 for transcendental ops, chains,
// reductions and matmul; abs 8·2⁻²³·k scaled by the output's magnitude,
// k the longest sum). The WGSL built-ins (exp, log, sin, cos, tanh,
// inverseSqrt) and the prelude's erf_, log1p and pow_ stay well inside it
// on lavapipe (the largest error is GELU's, under half of it), so no op
// needs more. Two changes:
//
//   - a float64 case is never bit-exact: PyTorch rounded in float64;
//   - WGSL does not promise correctly rounded division (2.5 ulp) or
//     square roots, so the float32 forward results of gpuNotExact ops are
//     held to 2⁻²² relative (a few ulps) instead of bit for bit. Lavapipe
//     does round them correctly: the GPU-vs-CPU check shows it.
func gpuTorchTolerance(c torchref.Case, fwd bool) tolerance {
	c32 := c
	c32.Inputs = slices.Clone(c.Inputs)
	for i := range c32.Inputs {
		if c32.Inputs[i].DType == "float64" {
			c32.Inputs[i].DType = "float32"
		}
	}
	tl := torchTolerance(c32)
	if caseHasFloat64(c) {
		tl.exactFwd = false
	}
	if !fwd {
		tl.exactFwd = false
		return tl
	}
	if tl.exactFwd && gpuNotExact[c.Op] {
		return tolerance{rtol: 0x1p-22}
	}
	if tl.exactFwd {
		return tolerance{}
	}
	return tl
}

// gpuNotExact are ops that are one correctly rounded float32 operation
// per element on the CPU, but whose WGSL form need not be.
var gpuNotExact = map[string]bool{"div": true, "div_scalar": true, "sqrt": true}

// gpuCPUClass says how closely the GPU must match the CPU on the same
// float32 inputs.
type gpuCPUClass int

const (
	// gpuBitwise: data movement, selection, sign, comparisons: both
	// devices copy or choose the same float32 (±0 and NaN payloads
	// aside).
	gpuBitwise gpuCPUClass = iota
	// gpuRounded: one or two correctly rounded float32 operations per
	// element on the CPU; WGSL's division and sqrt may be 2.5 ulp off.
	gpuRounded
	// gpuInexact: transcendental functions, chains of ops, reductions
	// and products summed in another order.
	gpuInexact
)

var gpuCPUClasses = map[string]gpuCPUClass{
	"neg": gpuBitwise, "abs": gpuBitwise, "sign": gpuBitwise, "relu": gpuBitwise, "clamp": gpuBitwise,
	"maximum": gpuBitwise, "minimum": gpuBitwise, "eq": gpuBitwise, "ne": gpuBitwise, "lt": gpuBitwise,
	"le": gpuBitwise, "gt": gpuBitwise, "ge": gpuBitwise, "where": gpuBitwise, "masked_fill": gpuBitwise,
	"cast": gpuBitwise, "max": gpuBitwise, "min": gpuBitwise, "argmax": gpuBitwise, "argmin": gpuBitwise,
	"index_select": gpuBitwise, "gather": gpuBitwise, "one_hot": gpuBitwise, "slice": gpuBitwise,
	"select": gpuBitwise, "narrow": gpuBitwise, "cat": gpuBitwise, "stack": gpuBitwise, "split": gpuBitwise,
	"chunk": gpuBitwise, "transpose": gpuBitwise, "permute": gpuBitwise, "reshape": gpuBitwise,
	"view": gpuBitwise, "flatten": gpuBitwise, "squeeze": gpuBitwise, "unsqueeze": gpuBitwise,
	"expand": gpuBitwise, "contiguous": gpuBitwise, "clone": gpuBitwise,

	"square": gpuRounded, "sqrt": gpuRounded, "mul": gpuRounded, "div": gpuRounded, "add": gpuRounded,
	"sub": gpuRounded, "add_scalar": gpuRounded, "sub_scalar": gpuRounded, "mul_scalar": gpuRounded,
	"div_scalar": gpuRounded, "rsub_scalar": gpuRounded, "outer": gpuRounded, "scatter_add": gpuRounded,
}

// gpuCPUTolerance is |gpu − cpu| ≤ rtol·|cpu| + abs·max(1, max|cpu|) for
// the forward (fwd) or backward pass of case c, with k its longest sum.
// ε is 2⁻²³, float32's machine epsilon.
//
//   - gpuBitwise: forward bit for bit;
//   - gpuRounded: 4ε relative (a correctly rounded op against one up to
//     2.5 ulp off, and a second rounding in composites such as rsub);
//   - gpuInexact: 32ε relative (transcendental functions differ by a few
//     ulps, and a result such as pow's amplifies its argument's error by
//     the exponent) and 8ε·k·max(1, max|cpu|) absolute (the prelude's
//     erf_ is 2e-7 off in absolute terms: GELU's gradient uses 0.4 of
//     this on lavapipe, every other op under 0.15);
//   - every other result involving a sum of k terms computed in another
//     order (reductions, matmul, gradients of broadcast inputs), and
//     every other backward pass: 4ε·k·max(1, max|cpu|) absolute.
func gpuCPUTolerance(c torchref.Case, fwd bool) tolerance {
	const eps = 0x1p-23
	k := float64(torchSumLength(c))
	cl, ok := gpuCPUClasses[c.Op]
	if !ok {
		cl = gpuInexact
	}
	switch {
	case cl == gpuBitwise && fwd:
		return tolerance{exactFwd: true}
	case cl == gpuBitwise, cl == gpuRounded:
		return tolerance{rtol: 4 * eps, abs: 4 * eps * k}
	}
	return tolerance{rtol: 32 * eps, abs: 8 * eps * k}
}

// gpuFamilyStats collects the largest differences seen per op, to report.
type gpuFamilyStats struct {
	sync.Mutex
	torch map[string]float64 // max |gpu−torch| / (atol + rtol·|torch|) over elements
	cpu   map[string]float64 // max |gpu−cpu| / (atol + rtol·|cpu|) over elements
	flips map[string]int     // int/bool elements that rounding the inputs flipped
}

func (s *gpuFamilyStats) note(m map[string]float64, op string, v float64) {
	s.Lock()
	defer s.Unlock()
	m[op] = max(m[op], v)
}

func runTorchFamilyGPU(t *testing.T, fam string) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	cases := torchref.MustLoad(t, fam)
	st := &gpuFamilyStats{torch: map[string]float64{}, cpu: map[string]float64{}, flips: map[string]int{}}
	ran, pass := 0, 0
	for _, c := range cases {
		ran++
		if t.Run(c.Name, func(t *testing.T) { runTorchCaseGPU(t, c, gpu, st) }) {
			pass++
		}
	}
	t.Logf("%s.json on %v: %d cases, %d run, %d passed, %d failed", fam, gpu, len(cases), ran, pass, ran-pass)
	ops := slices.Sorted(maps.Keys(st.torch))
	for _, op := range ops {
		t.Logf("  %-18s worst |gpu−torch| %.3f, |gpu−cpu| %.3f of the tolerance%s", op, st.torch[op], st.cpu[op],
			map[bool]string{true: fmt.Sprintf(", %d int/bool elements flipped by rounding to float32", st.flips[op]), false: ""}[st.flips[op] > 0])
	}
}

// runTorchCaseGPU runs case c on the GPU in float32 and compares it with
// PyTorch and with the CPU.
func runTorchCaseGPU(t *testing.T, c torchref.Case, gpu tensor.Device, st *gpuFamilyStats) {
	p := asIs
	if caseHasFloat64(c) {
		p = in32
	}
	g := evalTorchCase(t, c, gpu, p)
	cpu := evalTorchCase(t, c, tensor.CPU, p)
	var r64 *caseResult
	if p == in32 {
		r := evalTorchCase(t, c, tensor.CPU, rounded64)
		r64 = &r
	}

	fwd, bwd := gpuTorchTolerance(c, true), gpuTorchTolerance(c, false)
	for i, want := range c.Outputs {
		var alt *hostTensor
		if r64 != nil {
			alt = &r64.outs[i]
		}
		what := fmt.Sprintf("output %d", i)
		compareGPUTorch(t, what, g.outs[i], want, alt, fwd, c.Op+" fwd", st)
		compareGPUCPU(t, what, g.outs[i], cpu.outs[i], gpuCPUTolerance(c, true), c.Op+" fwd", st)
	}
	for i, want := range c.Grads {
		if want == nil {
			continue
		}
		what := fmt.Sprintf("grad %d", i)
		if g.grads[i] == nil {
			t.Errorf("%s: nil on the GPU, torch has %v", what, want.Shape)
			continue
		}
		var alt *hostTensor
		if r64 != nil {
			alt = r64.grads[i]
		}
		compareGPUTorch(t, what, *g.grads[i], *want, alt, bwd, c.Op+" bwd", st)
		if cpu.grads[i] == nil {
			t.Errorf("%s: nil on the CPU", what)
			continue
		}
		compareGPUCPU(t, what, *g.grads[i], *cpu.grads[i], gpuCPUTolerance(c, false), c.Op+" bwd", st)
	}
}

// to32 rounds a float64 to the float32 it becomes (±Inf beyond range).
func to32(v float64) float64 { return float64(float32(v)) }

// compareGPUTorch compares a float32 GPU result with PyTorch's want
// within tl. For a float64 case, alt holds the case evaluated in float64
// on the inputs rounded to float32: |alt − want| is what the rounding
// changes, and is added to the tolerance; where rounding flips an
// integer, a bool, a NaN or an infinity, the GPU must give alt's value.
func compareGPUTorch(t *testing.T, what string, got hostTensor, want torchref.Tensor, alt *hostTensor, tl tolerance, op string, st *gpuFamilyStats) {
	t.Helper()
	wd := torchDType(t, want.DType)
	if wd == tensor.Float64 {
		wd = tensor.Float32
	}
	if got.dt != wd {
		t.Errorf("%s: dtype %v, want %v (torch %s)", what, got.dt, wd, want.DType)
		return
	}
	if !slices.Equal(got.shape, want.Shape) {
		t.Errorf("%s: shape %v, torch %v", what, got.shape, want.Shape)
		return
	}
	w := slices.Clone(want.Data)
	var a []float64
	if alt != nil {
		a = slices.Clone(alt.data)
	}
	if want.IsFloat() {
		for i := range w {
			w[i] = to32(w[i])
			if a != nil {
				a[i] = to32(a[i])
			}
		}
	}
	mag := max(1, approx.Magnitude(w))
	atol := tl.abs * mag
	bad, flips, worst := 0, 0, 0.0
	var msg strings.Builder
	for i, v := range got.data {
		ok := false
		if !want.IsFloat() {
			ok = v == w[i]
			if !ok && a != nil && a[i] != w[i] && v == a[i] {
				ok = true
				flips++
			}
		} else {
			slack := 0.0
			special := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
			if a != nil && !special(a[i]) && !special(w[i]) {
				slack = math.Abs(a[i] - w[i])
			}
			ok = approx.AbsRel(atol+slack, tl.rtol).Equal(v, w[i])
			if !ok && a != nil && (special(a[i]) || special(w[i])) && approx.AbsRel(atol, tl.rtol).Equal(v, a[i]) {
				ok = true
				flips++
			}
			if !special(w[i]) && !math.IsNaN(v) {
				worst = max(worst, math.Abs(v-w[i])/(atol+slack+tl.rtol*math.Abs(w[i])+1e-300))
			}
		}
		if !ok {
			if bad < 5 {
				fmt.Fprintf(&msg, "\n  [%d] gpu %.9g, torch %.17g", i, v, want.Data[i])
				if a != nil {
					fmt.Fprintf(&msg, " (%.17g for the float32-rounded inputs)", a[i])
				}
			}
			bad++
		}
	}
	st.note(st.torch, op, worst)
	if flips > 0 {
		st.Lock()
		st.flips[op] += flips
		st.Unlock()
	}
	if bad > 0 {
		t.Errorf("%s: GPU vs torch: %d of %d elements differ (rtol %g, atol %.3g):%s", what, bad, len(got.data), tl.rtol, atol, msg.String())
	}
}

// compareGPUCPU compares a GPU result with the CPU's for the same inputs.
func compareGPUCPU(t *testing.T, what string, g, c hostTensor, tl tolerance, op string, st *gpuFamilyStats) {
	t.Helper()
	if g.dt != c.dt || !slices.Equal(g.shape, c.shape) {
		t.Errorf("%s: GPU %v %v, CPU %v %v", what, g.dt, g.shape, c.dt, c.shape)
		return
	}
	mag := max(1, approx.Magnitude(c.data))
	atol := tl.abs * mag
	bad, worst := 0, 0.0
	var msg strings.Builder
	for i, v := range g.data {
		w := c.data[i]
		var ok bool
		if tl.exactFwd || c.dt != tensor.Float32 {
			ok = approx.Exact.Equal(v, w)
		} else {
			ok = approx.AbsRel(atol, tl.rtol).Equal(v, w)
		}
		if !math.IsNaN(v) && !math.IsNaN(w) && !math.IsInf(w, 0) && c.dt == tensor.Float32 && !tl.exactFwd {
			worst = max(worst, math.Abs(v-w)/(atol+tl.rtol*math.Abs(w)))
		}
		if !ok {
			if bad < 5 {
				fmt.Fprintf(&msg, "\n  [%d] gpu %.9g, cpu %.9g (diff %.3g)", i, v, w, v-w)
			}
			bad++
		}
	}
	st.note(st.cpu, op, worst)
	if bad > 0 {
		t.Errorf("%s: GPU vs CPU: %d of %d elements differ (rtol %g, atol %.3g):%s", what, bad, len(g.data), tl.rtol, atol, msg.String())
	}
}
