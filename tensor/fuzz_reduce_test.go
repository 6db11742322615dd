package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// A redOp is a reduction under fuzz. A dims reduction (many or one dim)
// has a reference over the reduced values in row-major order; a line op
// (CumSum, Softmax, LogSoftmax) maps each line along its dim.
type redOp struct {
	name  string
	one   bool // reduces one dim (dims[0]) rather than a list
	line  func(v []float64) []float64
	red   func(v []float64, c int, p float64) float64
	empty bool // defined on an empty reduction (else: *tensor.Error)
	do    func(x *tensor.Tensor, dims []int, keep bool, c int, p float64) *tensor.Tensor
	// finite marks ops whose reference is compared only on finite inputs
	// (the order of ±Inf arithmetic, or overflow, decides the result).
	finite bool
}

func sumRef(v []float64, _ int, _ float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func meanRef(v []float64, c int, p float64) float64 { return sumRef(v, c, p) / float64(len(v)) }

func varRef(v []float64, c int, _ float64) float64 {
	m := meanRef(v, 0, 0)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / math.Max(float64(len(v)-c), 0)
}

func amaxRef(v []float64, _ int, _ float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		if x > m || math.IsNaN(x) {
			m = x
		}
		if math.IsNaN(m) {
			break
		}
	}
	return m
}

func argmaxRef(v []float64, _ int, _ float64) float64 {
	best := 0
	for i, x := range v {
		if math.IsNaN(v[best]) {
			break
		}
		if x > v[best] || math.IsNaN(x) {
			best = i
		}
	}
	return float64(best)
}

func negate(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

func lseRef(v []float64, _ int, _ float64) float64 {
	m := amaxRef(v, 0, 0)
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

func normRef(v []float64, _ int, p float64) float64 {
	switch {
	case math.IsInf(p, 1):
		return amaxRef(absAll(v), 0, 0)
	case p == 0:
		n := 0.0
		for _, x := range v {
			n += b2f(x != 0)
		}
		return n
	}
	s := 0.0
	for _, x := range v {
		s += math.Pow(math.Abs(x), p)
	}
	return math.Pow(s, 1/p)
}

func absAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

func softmaxLine(log bool) func(v []float64) []float64 {
	return func(v []float64) []float64 {
		l := lseRef(v, 0, 0)
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x - l
			if !log {
				out[i] = math.Exp(out[i])
			}
		}
		return out
	}
}

func cumsumLine(v []float64) []float64 {
	out, s := make([]float64, len(v)), 0.0
	for i, x := range v {
		s += x
		out[i] = s
	}
	return out
}

var redOps = []redOp{
	{name: "SumDims", red: sumRef, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.SumDims(d, k) }},
	{name: "MeanDims", red: meanRef, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.MeanDims(d, k) }},
	{name: "Amax", red: amaxRef, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.Amax(d, k) }},
	{name: "Amin", red: func(v []float64, c int, p float64) float64 { return -amaxRef(negate(v), c, p) }, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.Amin(d, k) }},
	{name: "Var", red: varRef, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, c int, _ float64) *tensor.Tensor { return x.Var(d, c, k) }},
	{name: "Std", red: func(v []float64, c int, p float64) float64 { return math.Sqrt(varRef(v, c, p)) }, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, c int, _ float64) *tensor.Tensor { return x.Std(d, c, k) }},
	{name: "LogSumExp", red: lseRef, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.LogSumExp(d, k) }},
	{name: "Norm", red: normRef, empty: true, finite: true, do: func(x *tensor.Tensor, d []int, k bool, _ int, p float64) *tensor.Tensor { return x.Norm(p, d, k) }},
	{name: "ArgMaxDim", one: true, red: argmaxRef, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.ArgMaxDim(d[0], k) }},
	{name: "ArgMinDim", one: true, red: func(v []float64, c int, p float64) float64 { return argmaxRef(negate(v), c, p) }, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor { return x.ArgMinDim(d[0], k) }},
	{name: "MaxDim", one: true, red: amaxRef, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor {
		v, i := x.MaxDim(d[0], k)
		i.Release()
		return v
	}},
	{name: "MinDim.indices", one: true, red: func(v []float64, c int, p float64) float64 { return argmaxRef(negate(v), c, p) }, do: func(x *tensor.Tensor, d []int, k bool, _ int, _ float64) *tensor.Tensor {
		_, i := x.MinDim(d[0], k)
		return i
	}},
	{name: "CumSum", one: true, line: cumsumLine, finite: true, do: func(x *tensor.Tensor, d []int, _ bool, _ int, _ float64) *tensor.Tensor { return x.CumSum(d[0]) }},
	{name: "Softmax", one: true, line: softmaxLine(false), finite: true, do: func(x *tensor.Tensor, d []int, _ bool, _ int, _ float64) *tensor.Tensor { return x.Softmax(d[0]) }},
	{name: "LogSoftmax", one: true, line: softmaxLine(true), finite: true, do: func(x *tensor.Tensor, d []int, _ bool, _ int, _ float64) *tensor.Tensor { return x.LogSoftmax(d[0]) }},
}

// reduceRef returns the reference of op over a with dims (raw, as
// passed) and its verdict.
func reduceRef(op redOp, a ref, dims []int, keep bool, c int, p float64) (ref, verdict) {
	n := len(a.shape)
	if n == 0 {
		return ref{}, mayWork // torch treats a 0-d tensor as 1-D here, Tessera may refuse
	}
	red := make([]bool, n)
	for _, d := range dims {
		q, ok := normDim(d, n)
		if !ok || red[q] {
			return ref{}, mustFail
		}
		red[q] = true
	}
	if len(dims) == 0 {
		for i := range red {
			red[i] = true
		}
	}
	if op.line != nil {
		q := slices.Index(red, true)
		return gen(a.shape, func(idx []int) float64 {
			line := make([]float64, a.shape[q])
			src := slices.Clone(idx)
			for i := range line {
				src[q] = i
				line[i] = a.at(src)
			}
			return op.line(line)[idx[q]]
		}), mustWork
	}
	var out, sub []int
	for i, s := range a.shape {
		switch {
		case red[i]:
			sub = append(sub, s)
			if keep {
				out = append(out, 1)
			}
		default:
			out = append(out, s)
		}
	}
	if layout.Numel(sub) == 0 && !op.empty && layout.Numel(out) > 0 {
		return ref{}, mustFail
	}
	if layout.Numel(sub) == 0 && !op.empty {
		return ref{}, mayWork
	}
	return gen(out, func(idx []int) float64 {
		var vals []float64
		src := make([]int, n)
		k := 0
		for i := range n {
			if !red[i] {
				src[i] = idx[k]
				k++
			} else if keep {
				k++
			}
		}
		gen(sub, func(sidx []int) float64 {
			j := 0
			for i := range n {
				if red[i] {
					src[i] = sidx[j]
					j++
				}
			}
			vals = append(vals, a.at(src))
			return 0
		})
		return op.red(vals, c, p)
	}), mustWork
}

// FuzzReduce runs the reductions and line ops (sums, means, extrema and
// their indices, variance, norms, log-sum-exp, cumulative sums,
// softmax) with adversarial dims (out of range, repeated, empty),
// corrections and norm orders over small tensors of each dtype holding
// adversarial values, and compares Float64 results with the naive
// reference; a sampled input repeats the call on the GPU, whose outcome
// and values must match the CPU's.
func FuzzReduce(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for i := range redOps {
		f.Add([]byte{1, byte(i), 1, 2, 3, 2, 1, 0, 1, 2, 5, 1, 10, 20, 230, 231, 232, 3, 7, 240, 5})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		op := redOps[r.small(len(redOps))]
		dt := r.dtype()
		shape := r.shape()
		dims := make([]int, r.small(3))
		if op.one {
			dims = make([]int, 1)
		}
		for i := range dims {
			dims[i] = r.int()
		}
		keep := r.small(2) == 0
		c, p := r.int(), []float64{2, 1, math.Inf(1), 0, 3, 0.5, math.NaN(), -1, math.Inf(-1)}[r.small(9)]
		a := ref{shape, r.values(shape)}
		what := fmt.Sprintf("%s(%v, dims %v, keep %v, c %d, p %v)", op.name, shape, dims, keep, c, p)
		cpuRes, cpuOK := runReduce(t, tensor.CPU, op, dt, a, dims, keep, c, p, what)
		want, v := reduceRef(op, a, dims, keep, c, p)
		if op.name == "Norm" && (!(p > 0) || math.IsInf(p, 1) && layout.Numel(shape) == 0) {
			// torch.linalg.vector_norm takes orders 0 and below, which Tessera
			// refuses; both refuse the inf-norm of an empty tensor (with keepdim,
			// torch's refusal does not depend on which dims are empty).
			v = max(v, mayWork)
		}
		switch {
		case cpuOK && v == mustFail:
			t.Fatalf("%v %s: accepted an invalid call, giving %v", dt, what, cpuRes.Shape())
		case !cpuOK && v == mustWork && dt.IsFloat():
			t.Fatalf("%v %s: refused a valid call: %v", dt, what, tensor.Catch(func() { op.do(tensor.New(a.v, a.shape...).Cast(dt), dims, keep, c, p) }))
		case cpuOK && v == mustWork && dt == tensor.Float64:
			finite, scale := true, 1.0
			for _, x := range a.v {
				finite = finite && !math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) < 1e150
				scale += math.Abs(x)
			}
			if finite || !op.finite {
				checkRefScaled(t, what, cpuRes, want, scale)
			}
		}
		if !leg || dt == tensor.Float64 {
			return
		}
		gpuRes, gpuOK := runReduce(t, gpu, op, dt, a, dims, keep, c, p, what)
		switch {
		case gpuOK != cpuOK:
			t.Fatalf("%v %s: the CPU succeeded %v, the GPU %v", dt, what, cpuOK, gpuOK)
		case !cpuOK:
			return
		case cpuRes.DType() != gpuRes.DType() || !slices.Equal(cpuRes.Shape(), gpuRes.Shape()):
			t.Fatalf("%v %s: CPU %v %v, GPU %v %v", dt, what, cpuRes.DType(), cpuRes.Shape(), gpuRes.DType(), gpuRes.Shape())
		}
		cv := cpuRes.Float64s()
		if !slices.ContainsFunc(a.v, func(x float64) bool { return math.Abs(x) > 1e30 || math.IsNaN(x) }) {
			checkRefScaled(t, fmt.Sprintf("%v %s GPU vs CPU", dt, what), gpuRes.To(tensor.CPU), ref{cpuRes.Shape(), cv}, 1e5*(1+sumAbs(a.v)))
		}
	})
}

func sumAbs(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}

// checkRefScaled fails t unless x has r's shape and values within
// 1e-12·scale absolute (NaNs equal, infinities exact).
func checkRefScaled(t *testing.T, what string, x *tensor.Tensor, r ref, scale float64) {
	t.Helper()
	if !slices.Equal(x.Shape(), r.shape) {
		t.Fatalf("%s: shape %v, want %v", what, x.Shape(), r.shape)
	}
	got := x.Float64s()
	for i, w := range r.v {
		g := got[i]
		if g == w || math.IsNaN(g) && math.IsNaN(w) || math.Abs(g-w) <= 1e-12*scale*(1+math.Abs(w)) {
			continue
		}
		t.Fatalf("%s: got %v, want %v (element %d)", what, got, r.v, i)
	}
}

func runReduce(t *testing.T, dev tensor.Device, op redOp, dt tensor.DType, a ref, dims []int, keep bool, c int, p float64, what string) (*tensor.Tensor, bool) {
	x := tensor.New(a.v, a.shape...).Cast(dt).To(dev)
	var res *tensor.Tensor
	ok := call(t, fmt.Sprintf("%v %v %s", dev, dt, what), func() {
		res = op.do(x, dims, keep, c, p)
		res.Float64s()
	})
	return res, ok
}
