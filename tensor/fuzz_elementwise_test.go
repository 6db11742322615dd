package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// An ewOp is an elementwise op under fuzz: its call on x (and y, and
// scalar arguments s, u) and, where cheap, its float64 reference.
type ewOp struct {
	name   string
	binary bool
	do     func(x, y *tensor.Tensor, s, u float64) *tensor.Tensor
	ref    func(a, b, s, u float64) float64
	// inexact marks inputs where the GPU's f32 builtins are not accurate
	// (WGSL bounds sin and cos only on [-π, π]); such elements are not
	// compared between devices.
	inexact func(a float64) bool
}

// hugeAngle: WGSL's sin and cos lose all accuracy past a few thousand
// radians (lavapipe returns 1 for cos(1e10)). NaN counts too: cast to
// Int32 it becomes -2³¹.
func hugeAngle(a float64) bool { return !(math.Abs(a) <= 1<<12) }

func (o ewOp) gpuInexact(f func(float64) bool) ewOp {
	o.inexact = f
	return o
}

func ewUnary(name string, f func(*tensor.Tensor) *tensor.Tensor, ref func(float64) float64) ewOp {
	op := ewOp{name: name, do: func(x, _ *tensor.Tensor, _, _ float64) *tensor.Tensor { return f(x) }, ref: func(a, _, _, _ float64) float64 { return ref(a) }}
	if ref == nil {
		op.ref = nil
	}
	return op
}

func ewScalar(name string, f func(*tensor.Tensor, float64) *tensor.Tensor, ref func(a, s float64) float64) ewOp {
	op := ewOp{name: name, do: func(x, _ *tensor.Tensor, s, _ float64) *tensor.Tensor { return f(x, s) }, ref: func(a, _, s, _ float64) float64 { return ref(a, s) }}
	if ref == nil {
		op.ref = nil
	}
	return op
}

func ewBinary(name string, f func(x, y *tensor.Tensor) *tensor.Tensor, ref func(a, b float64) float64) ewOp {
	op := ewOp{name: name, binary: true, do: func(x, y *tensor.Tensor, _, _ float64) *tensor.Tensor { return f(x, y) }, ref: func(a, b, _, _ float64) float64 { return ref(a, b) }}
	if ref == nil {
		op.ref = nil
	}
	return op
}

func sigmoid(a float64) float64 { return 1 / (1 + math.Exp(-a)) }

func signRef(a float64) float64 {
	switch {
	case a > 0:
		return 1
	case a < 0:
		return -1
	}
	return 0 // torch.sign(nan) is 0
}

func clampRef(a, lo, hi float64) float64 {
	if math.IsNaN(a) || math.IsNaN(lo) || math.IsNaN(hi) {
		return math.NaN()
	}
	return math.Min(math.Max(a, lo), hi)
}

func maxRef(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func minRef(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

var ewOps = []ewOp{
	ewUnary("Neg", (*tensor.Tensor).Neg, func(a float64) float64 { return -a }),
	ewUnary("Abs", (*tensor.Tensor).Abs, math.Abs),
	ewUnary("Sign", (*tensor.Tensor).Sign, signRef),
	ewUnary("Exp", (*tensor.Tensor).Exp, math.Exp),
	ewUnary("Log", (*tensor.Tensor).Log, math.Log),
	ewUnary("Log1p", (*tensor.Tensor).Log1p, math.Log1p),
	ewUnary("Sqrt", (*tensor.Tensor).Sqrt, math.Sqrt),
	ewUnary("Rsqrt", (*tensor.Tensor).Rsqrt, func(a float64) float64 { return 1 / math.Sqrt(a) }),
	ewUnary("Sin", (*tensor.Tensor).Sin, math.Sin).gpuInexact(hugeAngle),
	ewUnary("Cos", (*tensor.Tensor).Cos, math.Cos).gpuInexact(hugeAngle),
	ewUnary("Tanh", (*tensor.Tensor).Tanh, math.Tanh),
	ewUnary("Sigmoid", (*tensor.Tensor).Sigmoid, sigmoid),
	ewUnary("ReLU", (*tensor.Tensor).ReLU, func(a float64) float64 { return clampRef(a, 0, math.Inf(1)) }),
	ewUnary("Square", (*tensor.Tensor).Square, func(a float64) float64 { return a * a }),
	ewUnary("Erf", (*tensor.Tensor).Erf, math.Erf),
	ewUnary("SiLU", (*tensor.Tensor).SiLU, nil),
	ewUnary("GELU", (*tensor.Tensor).GELU, nil),
	ewUnary("GELUTanh", (*tensor.Tensor).GELUTanh, nil),
	ewUnary("LogicalNot", (*tensor.Tensor).LogicalNot, func(a float64) float64 { return b2f(a == 0) }),
	ewUnary("Cast(Int32)", func(x *tensor.Tensor) *tensor.Tensor { return x.Cast(tensor.Int32) }, nil),
	ewUnary("Cast(Bool)", func(x *tensor.Tensor) *tensor.Tensor { return x.Cast(tensor.Bool) }, func(a float64) float64 { return b2f(a != 0) }),
	ewScalar("AddScalar", (*tensor.Tensor).AddScalar, func(a, s float64) float64 { return a + s }),
	ewScalar("SubScalar", (*tensor.Tensor).SubScalar, func(a, s float64) float64 { return a - s }),
	ewScalar("MulScalar", (*tensor.Tensor).MulScalar, func(a, s float64) float64 { return a * s }),
	ewScalar("DivScalar", (*tensor.Tensor).DivScalar, func(a, s float64) float64 { return a / s }),
	ewScalar("RSub", (*tensor.Tensor).RSub, func(a, s float64) float64 { return s - a }),
	ewScalar("PowScalar", (*tensor.Tensor).PowScalar, nil),
	ewScalar("ClampMin", (*tensor.Tensor).ClampMin, func(a, s float64) float64 { return clampRef(a, s, math.Inf(1)) }),
	ewScalar("ClampMax", (*tensor.Tensor).ClampMax, func(a, s float64) float64 { return clampRef(a, math.Inf(-1), s) }),
	ewScalar("EqScalar", (*tensor.Tensor).EqScalar, func(a, s float64) float64 { return b2f(a == s) }),
	ewScalar("GtScalar", (*tensor.Tensor).GtScalar, func(a, s float64) float64 { return b2f(a > s) }),
	ewScalar("LeScalar", (*tensor.Tensor).LeScalar, func(a, s float64) float64 { return b2f(a <= s) }),
	ewScalar("Fill", func(x *tensor.Tensor, s float64) *tensor.Tensor { return x.Clone().Fill(s) }, func(_, s float64) float64 { return s }),
	ewScalar("MulScalarInPlace", func(x *tensor.Tensor, s float64) *tensor.Tensor { return x.Clone().MulScalarInPlace(s) }, func(a, s float64) float64 { return a * s }),
	{name: "Clamp", do: func(x, _ *tensor.Tensor, s, u float64) *tensor.Tensor { return x.Clamp(s, u) }, ref: func(a, _, s, u float64) float64 { return clampRef(a, s, u) }},
	{name: "Softplus", do: func(x, _ *tensor.Tensor, s, u float64) *tensor.Tensor { return x.Softplus(s, u) }},
	ewBinary("Add", (*tensor.Tensor).Add, func(a, b float64) float64 { return a + b }),
	ewBinary("Sub", (*tensor.Tensor).Sub, func(a, b float64) float64 { return a - b }),
	ewBinary("Mul", (*tensor.Tensor).Mul, func(a, b float64) float64 { return a * b }),
	ewBinary("Div", (*tensor.Tensor).Div, func(a, b float64) float64 { return a / b }),
	ewBinary("Pow", (*tensor.Tensor).Pow, nil),
	ewBinary("Maximum", (*tensor.Tensor).Maximum, maxRef),
	ewBinary("Minimum", (*tensor.Tensor).Minimum, minRef),
	ewBinary("Eq", (*tensor.Tensor).Eq, func(a, b float64) float64 { return b2f(a == b) }),
	ewBinary("Lt", (*tensor.Tensor).Lt, func(a, b float64) float64 { return b2f(a < b) }),
	ewBinary("Ge", (*tensor.Tensor).Ge, func(a, b float64) float64 { return b2f(a >= b) }),
	ewBinary("LogicalAnd", (*tensor.Tensor).LogicalAnd, func(a, b float64) float64 { return b2f(a != 0 && b != 0) }),
	ewBinary("LogicalOr", (*tensor.Tensor).LogicalOr, func(a, b float64) float64 { return b2f(a != 0 || b != 0) }),
	ewBinary("Where", func(x, y *tensor.Tensor) *tensor.Tensor { return tensor.Where(x.GtScalar(0), x, y) }, func(a, b float64) float64 {
		if a > 0 {
			return a
		}
		return b
	}),
	{name: "AddScaled", binary: true, do: func(x, y *tensor.Tensor, s, _ float64) *tensor.Tensor { return x.AddScaled(y, s) }},
	{name: "AddInPlace", binary: true, do: func(x, y *tensor.Tensor, s, _ float64) *tensor.Tensor { return x.Clone().AddInPlace(y, s) }},
	{name: "Addcmul", binary: true, do: func(x, y *tensor.Tensor, s, _ float64) *tensor.Tensor { return tensor.Addcmul(x, y, y, s) }},
	{name: "MaskedFill", binary: true, do: func(x, y *tensor.Tensor, s, _ float64) *tensor.Tensor { return x.MaskedFill(y.GtScalar(0), s) }},
}

// broadcast returns the broadcast shape of a and b, or false.
func broadcast(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		x, y := 1, 1
		if j := len(a) - n + i; j >= 0 {
			x = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			y = b[j]
		}
		switch {
		case x == y || y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			return nil, false
		}
	}
	return out, true
}

// at returns r's element at the broadcast index idx of a larger shape.
func (r ref) atBroadcast(idx []int) float64 {
	src := make([]int, len(r.shape))
	lead := len(idx) - len(r.shape)
	for i, s := range r.shape {
		if s != 1 {
			src[i] = idx[lead+i]
		}
	}
	return r.at(src)
}

// partnerShape returns a shape broadcastable with s mostly, and
// sometimes one that is not.
func (r *bytesReader) partnerShape(s []int) []int {
	out := slices.Clone(s[min(r.small(3), len(s)):])
	for i := range out {
		switch r.small(6) {
		case 0:
			out[i] = 1
		case 1:
			out[i] = r.small(4)
		}
	}
	return out
}

func (r *bytesReader) values(shape []int) []float64 {
	v := make([]float64, layout.Numel(shape))
	for i := range v {
		v[i] = r.float()
	}
	return v
}

// FuzzElementwise runs unary, scalar, binary and in-place elementwise
// ops on small tensors of each dtype holding adversarial values (NaN,
// ±Inf, huge, ±0) with adversarial scalar arguments and broadcast shapes
// (compatible or not). Float64 results must match the float64 reference;
// every call returns or panics with a *tensor.Error; a sampled input
// repeats the call on the GPU (Float32, Int32 and Bool), whose outcome
// and values must match the CPU's.
func FuzzElementwise(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for i := range ewOps {
		f.Add([]byte{1, byte(i), 1, 2, 3, 2, 0, 0, 10, 20, 230, 231, 232, 3, 7, 240, 5})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		op := ewOps[r.small(len(ewOps))]
		xdt, ydt := r.dtype(), r.dtype()
		if !op.binary {
			ydt = xdt
		}
		xs := r.shape()
		ys := r.partnerShape(xs)
		s, u := r.float(), r.float()
		a := ref{xs, r.values(xs)}
		b := ref{ys, r.values(ys)}
		what := fmt.Sprintf("%s(%v %v, %v %v, %v, %v)", op.name, xdt, xs, ydt, ys, s, u)
		cpuRes, cpuOK := runEw(t, tensor.CPU, op, xdt, ydt, a, b, s, u, what)
		if op.binary {
			if _, ok := broadcast(xs, ys); !ok && cpuOK {
				t.Fatalf("%s: accepted shapes that do not broadcast", what)
			}
		}
		if cpuOK && op.ref != nil && xdt == tensor.Float64 && (!op.binary || ydt == tensor.Float64) && cpuRes.DType() == tensor.Float64 {
			out, _ := broadcast(xs, ys)
			bAt := b.atBroadcast
			if !op.binary {
				out, bAt = xs, func([]int) float64 { return 0 }
			}
			want := gen(out, func(idx []int) float64 { return op.ref(a.atBroadcast(idx), bAt(idx), s, u) })
			checkRef(t, what, cpuRes, want, 1e-12)
		}
		if !leg || xdt == tensor.Float64 || op.binary && ydt == tensor.Float64 {
			return
		}
		gpuRes, gpuOK := runEw(t, gpu, op, xdt, ydt, a, b, s, u, what)
		switch {
		case gpuOK != cpuOK:
			t.Fatalf("%s: the CPU succeeded %v, the GPU %v", what, cpuOK, gpuOK)
		case !cpuOK:
			return
		case cpuRes.DType() != gpuRes.DType() || !slices.Equal(cpuRes.Shape(), gpuRes.Shape()):
			t.Fatalf("%s: CPU %v %v, GPU %v %v", what, cpuRes.DType(), cpuRes.Shape(), gpuRes.DType(), gpuRes.Shape())
		}
		c, g := cpuRes.Float64s(), gpuRes.To(tensor.CPU).Float64s()
		tol := 0.0
		if cpuRes.DType().IsFloat() {
			tol = 1e-4
		}
		for i := range c {
			if op.inexact != nil && op.inexact(a.v[i]) {
				continue
			}
			if !fuzzWithin(c[i:i+1], g[i:i+1], tol) && math.Abs(c[i]) < 1e30 && math.Abs(g[i]) < 1e30 && !math.IsInf(c[i], 0) == !math.IsInf(g[i], 0) {
				t.Fatalf("%s: CPU %v, GPU %v (element %d)", what, c, g, i)
			}
		}
	})
}

// runEw runs op on a and b made on dev; the result is nil when the call
// panicked with a *tensor.Error.
func runEw(t *testing.T, dev tensor.Device, op ewOp, xdt, ydt tensor.DType, a, b ref, s, u float64, what string) (*tensor.Tensor, bool) {
	x := tensor.New(a.v, a.shape...).Cast(xdt).To(dev)
	y := tensor.New(b.v, b.shape...).Cast(ydt).To(dev)
	var res *tensor.Tensor
	ok := call(t, fmt.Sprintf("%v %s", dev, what), func() {
		res = op.do(x, y, s, u)
		res.Float64s()
	})
	return res, ok
}
