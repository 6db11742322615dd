package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// matmulRef is torch.matmul's result on naive references, and whether
// the shapes are valid: a 1-D left operand is a row and a 1-D right one
// a column, whose dims the result drops; batch dims broadcast.
func matmulRef(a, b ref) (ref, bool) {
	if len(a.shape) == 0 || len(b.shape) == 0 {
		return ref{}, false
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	if bs[len(bs)-2] != k {
		return ref{}, false
	}
	ab, bb := as[:len(as)-2], bs[:len(bs)-2]
	batch := make([]int, max(len(ab), len(bb)))
	for i := range batch {
		da, db := dimFromEnd(ab, len(batch)-1-i), dimFromEnd(bb, len(batch)-1-i)
		switch {
		case da == db || db == 1:
			batch[i] = da
		case da == 1:
			batch[i] = db
		default:
			return ref{}, false
		}
	}
	full := append(slices.Clone(batch), m, n)
	out := gen(full, func(idx []int) float64 {
		bi := idx[:len(batch)]
		i, j := idx[len(batch)], idx[len(batch)+1]
		s := 0.0
		for p := range k {
			s += a.at(operandIndex(a.shape, bi, i, p, true)) * b.at(operandIndex(b.shape, bi, p, j, false))
		}
		return s
	})
	shape := slices.Clone(batch)
	if len(a.shape) > 1 {
		shape = append(shape, m)
	}
	if len(b.shape) > 1 {
		shape = append(shape, n)
	}
	out.shape = shape
	return out, true
}

// dimFromEnd returns shape's i-th dim counted from the end (0: the last),
// or 1 past its start.
func dimFromEnd(shape []int, i int) int {
	if i >= len(shape) {
		return 1
	}
	return shape[len(shape)-1-i]
}

// operandIndex is the index into an operand of shape for batch index bi
// and matrix index (r, c), broadcasting size-1 batch dims; a 1-D operand
// uses c when it is the left one (a row) and r when it is the right one.
func operandIndex(shape, bi []int, r, c int, left bool) []int {
	if len(shape) == 1 {
		if left {
			return []int{c}
		}
		return []int{r}
	}
	nb := len(shape) - 2
	idx := make([]int, 0, len(shape))
	for i := range nb {
		j := bi[len(bi)-nb+i]
		if shape[i] == 1 {
			j = 0
		}
		idx = append(idx, j)
	}
	return append(idx, r, c)
}

// finite reports whether v holds no NaN or infinity.
func finite(v []float64) bool {
	return !slices.ContainsFunc(v, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
}

// FuzzLinalg runs MatMul (torch.matmul's 1-D, 2-D and broadcast batch
// rules) and Outer on small operands of every dtype and rank 0–4 with
// adversarial values, and requires the naive float64 reference's shape
// and values for valid Float64 calls, a *tensor.Error for invalid ones,
// and, on a sampled GPU leg, the CPU's outcome and values.
func FuzzLinalg(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for _, s := range []string{"", "\x00\x01\x01\x02\x02\x03\x01\x02\x03\x02", "\x00\x01\x03\x02\x02\x03\x02\x02\x03\x01\x02", "\x00\x01\x01\x03\x01\x03\x04\x05", "\x00\x00\x01\x04\x05\x05\x01\x02\x06", "\x00\x01\x00\x01\x03\x01\x02"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		outer := r.small(4) == 0
		da, db := r.dtype(), r.dtype()
		as, bs := r.shape(), r.shape()
		a, b := ref{as, r.values(as)}, ref{bs, r.values(bs)}
		name := "MatMul"
		if outer {
			name = "Outer"
		}
		do := func(x, y *tensor.Tensor) *tensor.Tensor {
			if outer {
				return x.Outer(y)
			}
			return x.MatMul(y)
		}
		var want ref
		valid := false
		if outer {
			if valid = len(as) == 1 && len(bs) == 1; valid {
				want = gen([]int{as[0], bs[0]}, func(idx []int) float64 { return a.v[idx[0]] * b.v[idx[1]] })
			}
		} else {
			want, valid = matmulRef(a, b)
		}
		what := fmt.Sprintf("%s(%v %v, %v %v)", name, da, as, db, bs)
		run := func(dev tensor.Device) (res *tensor.Tensor, ok bool) {
			ok = call(t, what, func() {
				x := tensor.New(a.v, as...).Cast(da).To(dev)
				y := tensor.New(b.v, bs...).Cast(db).To(dev)
				res = do(x, y)
				res.Float64s()
			})
			return res, ok
		}
		if da == tensor.Float64 && db == tensor.Float64 {
			res, ok := run(tensor.CPU)
			switch {
			case ok != valid:
				t.Fatalf("%s: valid %v, but the call succeeded %v", what, valid, ok)
			case ok && finite(a.v) && finite(b.v):
				// With NaN or ±Inf operands the values are BLAS's choice:
				// the float64 GEMM (gonum, as the reference BLAS) skips
				// zero multipliers, so 0·NaN may give 0.
				checkRefScaled(t, what, res, want, 1+sumAbs(a.v)*sumAbs(b.v))
			}
			return
		}
		cpuRes, cpuOK := run(tensor.CPU)
		if cpuOK != valid {
			t.Fatalf("%s: valid %v, but the call succeeded %v", what, valid, cpuOK)
		}
		if !leg || da == tensor.Float64 || db == tensor.Float64 {
			return
		}
		gpuRes, gpuOK := run(gpu)
		switch {
		case gpuOK != cpuOK:
			t.Fatalf("%s: the CPU succeeded %v, the GPU %v", what, cpuOK, gpuOK)
		case !cpuOK:
			return
		case cpuRes.DType() != gpuRes.DType() || !slices.Equal(cpuRes.Shape(), gpuRes.Shape()):
			t.Fatalf("%s: CPU %v %v, GPU %v %v", what, cpuRes.DType(), cpuRes.Shape(), gpuRes.DType(), gpuRes.Shape())
		}
		if !slices.ContainsFunc(append(slices.Clone(a.v), b.v...), func(x float64) bool { return math.Abs(x) > 1e30 || math.IsNaN(x) }) {
			checkRefScaled(t, what+" GPU vs CPU", gpuRes.To(tensor.CPU), ref{cpuRes.Shape(), cpuRes.Float64s()}, 1e5*(1+sumAbs(a.v)*sumAbs(b.v)))
		}
	})
}
