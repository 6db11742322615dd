package tensor_test

// PyTorch reference tests: every case of testdata/torch/{elementwise,
// reduce,linalg,index,shape}.json runs through Tessera's API on the CPU,
// forward and backward, in the case's dtype. Inputs are built from the
// BASE tensor of each case, marked as requiring grad, and then put through
// the case's view chain with Tessera's own view methods, so views and the
// gradients that flow back through them are exercised too. The op table
// that maps each case's op to Tessera calls is in torchref_ops_test.go.

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/internal/reftensor"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

// torchFamilies are the reference files these tests cover (nn.json is
// covered by package nn).
var torchFamilies = []string{"elementwise", "reduce", "linalg", "index", "shape", "conv", "attention"}

func TestTorchRefElementwise(t *testing.T) { runTorchFamily(t, "elementwise") }
func TestTorchRefReduce(t *testing.T)      { runTorchFamily(t, "reduce") }
func TestTorchRefLinalg(t *testing.T)      { runTorchFamily(t, "linalg") }
func TestTorchRefIndex(t *testing.T)       { runTorchFamily(t, "index") }
func TestTorchRefShape(t *testing.T)       { runTorchFamily(t, "shape") }

// TestTorchRefComplete fails when a reference case names an op the table
// does not map, so new reference ops cannot be skipped silently, and when
// a table entry has no case left (a stale or misspelt entry).
func TestTorchRefComplete(t *testing.T) {
	used := map[string]bool{}
	for _, fam := range torchFamilies {
		for _, c := range torchref.MustLoad(t, fam) {
			if torchOps[c.Op] == nil {
				t.Errorf("%s.json: case %s: op %q has no entry in torchOps", fam, c.Name, c.Op)
			}
			used[c.Op] = true
		}
	}
	for op := range torchOps {
		if !used[op] {
			t.Errorf("torchOps[%q] matches no reference case", op)
		}
	}
}

func runTorchFamily(t *testing.T, fam string) {
	cases := torchref.MustLoad(t, fam)
	ran, pass := 0, 0
	for _, c := range cases {
		started := false
		if t.Run(c.Name, func(t *testing.T) { started = true; runTorchCase(t, c) }) && started {
			pass++
		}
		if started {
			ran++
		}
	}
	t.Logf("%s.json: %d cases, %d run, %d passed, %d failed", fam, len(cases), ran, pass, ran-pass)
}

// runTorchCase runs one case forward and, when it has upstream gradients,
// backward, and compares both with PyTorch.
func runTorchCase(t *testing.T, c torchref.Case) { runTorchCaseIn(t, c, tensor.DefaultContext()) }

// runTorchCaseIn is runTorchCase with every input in context ctx.
func runTorchCaseIn(t *testing.T, c torchref.Case, ctx *tensor.Context) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	f := torchOps[c.Op]
	if f == nil {
		t.Fatalf("op %q has no entry in torchOps", c.Op)
	}
	bases := make([]*tensor.Tensor, len(c.Inputs))
	in := make([]*tensor.Tensor, len(c.Inputs))
	for i, ti := range c.Inputs {
		bases[i] = ctx.Adopt(torchTensor(t, ti))
		if ti.RequiresGrad {
			bases[i].SetRequiresGrad(true)
		}
		in[i] = applyViews(t, bases[i], ti)
	}
	outs := f(c, in)
	if len(outs) != len(c.Outputs) {
		t.Fatalf("%d outputs, torch has %d", len(outs), len(c.Outputs))
	}
	tl := torchTolerance(c)
	fwd := tl
	if tl.exactFwd {
		fwd = tolerance{}
	}
	for i, want := range c.Outputs {
		compareTorch(t, fmt.Sprintf("output %d", i), outs[i], want, fwd)
	}
	if len(c.GradOutputs) == 0 {
		return
	}
	var loss *tensor.Tensor
	for i, g := range c.GradOutputs {
		term := outs[i].Mul(ctx.Adopt(torchTensor(t, g))).Sum()
		if loss == nil {
			loss = term
		} else {
			loss = loss.Add(term)
		}
	}
	autograd.Backward(loss)
	for i, want := range c.Grads {
		if want == nil {
			continue
		}
		got := bases[i].Grad()
		if got == nil {
			t.Errorf("grad %d: nil, torch has %v", i, want.Shape)
			continue
		}
		compareTorch(t, fmt.Sprintf("grad %d", i), got, *want, tl)
	}
}

// torchDType returns the Tessera dtype of a reference dtype name.
func torchDType(t *testing.T, name string) tensor.DType {
	t.Helper()
	dt, err := reftensor.DType(name)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// torchTensor builds a contiguous CPU tensor from reference data (the
// base of an input, without its view chain).
func torchTensor(t *testing.T, x torchref.Tensor) *tensor.Tensor {
	t.Helper()
	b, err := reftensor.Base(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyViews applies x's view chain to base with Tessera's view methods
// and checks that the result is a view of base with the values torchref
// computes for the chain.
func applyViews(t *testing.T, base *tensor.Tensor, x torchref.Tensor) *tensor.Tensor {
	v, err := reftensor.Views(base, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.View) == 0 {
		return v
	}
	if !v.SharesStorage(base) {
		t.Errorf("view chain %v copied instead of viewing", x.View)
	}
	m, err := x.Materialize()
	if err != nil {
		t.Fatal(err)
	}
	if base.DType() == tensor.Float32 {
		// A float64 case run in float32: the base holds rounded values.
		for i, d := range m.Data {
			m.Data[i] = float64(float32(d))
		}
	}
	if !slices.Equal(v.Shape(), m.Shape) || !(approx.Mismatch(v.Float64s(), m.Data, approx.Exact) < 0) {
		t.Fatalf("view chain %v: Tessera gives shape %v %v, torchref %v %v", x.View, v.Shape(), v.Float64s(), m.Shape, m.Data)
	}
	return v
}

// tolerance is |got-want| <= atol + rtol·|want| for floats, where atol is
// abs·max(1, max|want|) so that sums whose terms cancel are judged
// against the size of their terms.
type tolerance struct {
	rtol, abs float64
	exactFwd  bool // outputs must match bit for bit (but ±0 and NaN payloads)
}

// torchTolerance picks the tolerance of a case from its dtype, how exact
// its op is (opTolClass) and k, the longest sum it involves: a
// reduction's length, a matmul's inner dimension, or the number of
// output elements whose gradients sum into one input element (broadcast,
// expand).
func torchTolerance(c torchref.Case) tolerance {
	f32 := strings.Contains(c.Name, "f32") || strings.Contains(c.Name, "float32")
	for _, x := range append(slices.Clone(c.Inputs), c.Outputs...) {
		if x.DType == "float32" {
			f32 = true
		}
	}
	k := torchSumLength(c)
	eps, rtol := 0x1p-52, 1e-13
	if f32 {
		eps, rtol = 0x1p-23, 2e-6
	}
	if opTolClass[c.Op] == tolInexact {
		rtol = 1e-11
		if f32 {
			rtol = 1e-5
		}
	}
	if c.Op == "logsumexp" {
		// torch's gradient is exp(x - out): the rounding of out, up to
		// eps·|out|, becomes a relative error of the gradient.
		for _, o := range c.Outputs {
			for _, v := range o.Data {
				if !math.IsInf(v, 0) && !math.IsNaN(v) {
					rtol = max(rtol, 2*eps*math.Abs(v))
				}
			}
		}
	}
	exact := opTolClass[c.Op] == tolExact
	if (c.Op == "add" || c.Op == "sub") && c.Float("alpha") == 1 {
		exact = true
	}
	return tolerance{rtol: rtol, abs: 8 * eps * float64(k), exactFwd: exact}
}

// torchSumLength returns k, the longest sum a case involves: a
// reduction's length, a matmul's inner dimension, or the number of output
// elements whose gradients sum into one input element (broadcast, expand).
func torchSumLength(c torchref.Case) int {
	k := 1
	outN := 0
	for _, o := range c.Outputs {
		outN += o.Numel()
	}
	for _, x := range c.Inputs {
		vs, _ := x.ViewShape()
		if n := layout.Numel(vs); outN > 0 && n/outN > k {
			k = n / outN
		}
		if x.Numel() > 0 && outN/x.Numel() > k {
			k = outN / x.Numel()
		}
		if c.Op == "matmul" {
			for _, d := range vs {
				k = max(k, d)
			}
		}
	}
	return k
}

// compareTorch compares got with the reference want: dtype (int64 is
// Int32 in Tessera), shape and values (integers and bools exactly, NaN
// with NaN, infinities exactly, other floats within tl).
func compareTorch(t *testing.T, what string, got *tensor.Tensor, want torchref.Tensor, tl tolerance) {
	t.Helper()
	if wd := torchDType(t, want.DType); got.DType() != wd {
		t.Errorf("%s: dtype %v, torch %s", what, got.DType(), want.DType)
		return
	}
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Errorf("%s: shape %v, torch %v", what, got.Shape(), want.Shape)
		return
	}
	g := got.Float64s()
	if !want.IsFloat() {
		for i := range g {
			if g[i] != want.Data[i] {
				t.Errorf("%s: [%d] = %v, torch %v\n got %v\nwant %v", what, i, g[i], want.Data[i], g, want.Data)
				return
			}
		}
		return
	}
	mag := max(1, approx.Magnitude(want.Data))
	atol := tl.abs * mag
	bad := 0
	var msg strings.Builder
	for i, w := range want.Data {
		v := g[i]
		if !approx.AbsRel(atol, tl.rtol).Equal(v, w) {
			if bad < 5 {
				fmt.Fprintf(&msg, "\n  [%d] got %.17g, torch %.17g (diff %.3g)", i, v, w, v-w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ (rtol %g, atol %.3g):%s", what, bad, len(g), tl.rtol, atol, msg.String())
	}
}
