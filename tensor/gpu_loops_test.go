package tensor_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// Lines, reductions and sums longer than the 65535 loop iterations that
// lavapipe lets one shader invocation run (kernels/wgsl/loops.go), on the
// GPU against the CPU backend: floats within a tolerance scaled by the
// length, integers and indices exactly. Shapes are 1-D or have tiny other
// dimensions, so that lavapipe runs them quickly.

// longLengths straddle the limit.
var longLengths = []int{65535, 65536, 70001, 200003}

// lineShapes are [2, n] along dim 1 (contiguous lines) and [n, 2] along
// dim 0 (lines of stride 2).
func lineShapes(n int) []struct {
	shape []int
	dim   int
} {
	return []struct {
		shape []int
		dim   int
	}{{[]int{2, n}, 1}, {[]int{n, 2}, 0}}
}

// hostValues returns n reproducible floats in [-1, 1), or ints in
// [-1000, 1000).
func hostValues(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	gen := tensor.WithGenerator(tensor.NewGenerator(seed))
	if dt == tensor.Int32 {
		return tensor.RandInt(-1000, 1000, shape, gen)
	}
	return tensor.Uniform(shape, -1, 1, gen)
}

func TestGPULongCumSum(t *testing.T) {
	dev := gpuOrSkip(t)
	for _, n := range longLengths {
		for _, c := range lineShapes(n) {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32} {
				what := fmt.Sprintf("CumSum %v %v dim %d", dt, c.shape, c.dim)
				ok(t, what, func() {
					tensor.Scope(func() {
						x := hostValues(dt, uint64(n), c.shape...)
						approx.CheckAny(t, what, hostOf(x.To(dev).CumSum(c.dim)), hostOf(x.CumSum(c.dim)), approx.Rel1(4e-6).Reduce(n))
					})
				})
			}
		}
	}
}

// TestGPULongReductions reduces 70001 elements per output in each mode
// the planner picks: few outputs (two stages of workgroup segments), 64
// outputs (one workgroup each), strided lines, and 2048 outputs of an
// expanded view whose reduced dimension is outer in memory (one
// invocation per output and segment, and a second stage). Arg-reductions
// find their winner past element 65535.
func TestGPULongReductions(t *testing.T) {
	dev := gpuOrSkip(t)
	const n = 70001
	type reduction struct {
		name string
		f    func(x *tensor.Tensor, dim int) *tensor.Tensor
	}
	reductions := []reduction{
		{"Sum", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Sum(dim) }},
		{"Amax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Amax([]int{dim}, false) }},
		{"Amin", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Amin([]int{dim}, true) }},
		{"ArgMax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.ArgMaxDim(dim, false) }},
		{"ArgMin", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.ArgMinDim(dim, false) }},
		{"MaxDim", func(x *tensor.Tensor, dim int) *tensor.Tensor { v, _ := x.MaxDim(dim, false); return v }},
		{"MaxDim indices", func(x *tensor.Tensor, dim int) *tensor.Tensor { _, i := x.MaxDim(dim, false); return i }},
	}
	type longCase struct {
		name string
		x    func(dt tensor.DType) *tensor.Tensor
		dim  int
		ops  int // the first ops reductions
	}
	for _, c := range []longCase{
		{"rows-3x70001", func(dt tensor.DType) *tensor.Tensor { return withPeak(hostValues(dt, 1, 3, n), 1, n-2) }, 1, len(reductions)},
		{"rows-64x70001", func(dt tensor.DType) *tensor.Tensor { return withPeak(hostValues(dt, 2, 64, n), 1, 65540) }, 1, 4},
		{"strided-70001x3", func(dt tensor.DType) *tensor.Tensor { return withPeak(hostValues(dt, 3, n, 3), 0, 69999) }, 0, len(reductions)},
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32} {
			x := c.x(dt)
			gx := x.To(dev)
			for _, r := range reductions[:c.ops] {
				what := fmt.Sprintf("%s %v %s", r.name, dt, c.name)
				ok(t, what, func() {
					tensor.Scope(func() {
						approx.CheckAny(t, what, hostOf(r.f(gx, c.dim)), hostOf(r.f(x, c.dim)), approx.Rel1(4e-6).Reduce(n))
					})
				})
			}
		}
	}
	// 2048 outputs reducing a column of 70001 expanded along dim 1 (stride
	// 0): each output is the reduction of the column, which the CPU
	// computes once. 143M elements per op (about 1 s on lavapipe), so a
	// sum of floats and an arg-reduction of ints.
	for i, dt := range []tensor.DType{tensor.Float32, tensor.Int32} {
		col := withPeak(hostValues(dt, 4, n, 1), 0, 66000)
		gx := col.To(dev).Expand(n, 2048)
		r := reductions[3*i]
		what := fmt.Sprintf("%s %v expanded-70001x2048", r.name, dt)
		ok(t, what, func() {
			tensor.Scope(func() {
				approx.CheckAny(t, what, hostOf(r.f(gx, 0)), hostOf(r.f(col, 0).Expand(2048).Contiguous()), approx.Rel1(4e-6).Reduce(n))
			})
		})
	}
}

// withPeak returns x (2-D) with its largest value raised and its
// smallest lowered at position at along dim, in every line, so that
// arg-reductions must look past element 65535.
func withPeak(x *tensor.Tensor, dim, at int) *tensor.Tensor {
	peak := tensor.Zeros(x.Shape(), tensor.Of(x.DType()))
	peak.Narrow(dim, at, 1).CopyFrom(tensor.Full([]int{1}, 5000))
	return x.Add(peak)
}

func TestGPULongSoftmax(t *testing.T) {
	dev := gpuOrSkip(t)
	const n = 70001
	for _, c := range []struct {
		shape []int
		dim   int
	}{{[]int{1, n}, 1}, {[]int{2, n}, 1}, {[]int{n, 2}, 0}} {
		x := tensor.Uniform(c.shape, -8, 8, tensor.WithGenerator(tensor.NewGenerator(5)))
		gx := x.To(dev)
		for _, log := range []bool{false, true} {
			what := fmt.Sprintf("softmax %v dim %d log %v", c.shape, c.dim, log)
			ok(t, what, func() {
				tensor.Scope(func() {
					if log {
						approx.CheckAny(t, what, gx.LogSoftmax(c.dim).Float32s(), x.LogSoftmax(c.dim).Float32s(), approx.Rel1(2e-5))
						return
					}
					// Scaled by n, the values are about 1, where the measure
					// is relative.
					got, want := gx.Softmax(c.dim).Float32s(), x.Softmax(c.dim).Float32s()
					for i := range got {
						got[i], want[i] = got[i]*n, want[i]*n
					}
					approx.CheckAny(t, what, got, want, approx.Rel1(2e-5))
				})
			})
		}
	}
}

// TestGPULongMatMul multiplies over K = 70001 with small M and N. (Past
// the K that one kernel's loop covers, about 1M, lavapipe needs more than
// the 5 s a poll waits: TestSplitDispatchesGPU in kernels/wgsl covers
// the split over K with a lower trip limit.)
func TestGPULongMatMul(t *testing.T) {
	dev := gpuOrSkip(t)
	for _, s := range [][3]int{{3, 70001, 5}, {1, 70001, 1}} {
		m, k, n := s[0], s[1], s[2]
		a := tensor.Uniform([]int{m, k}, -1, 1, tensor.WithGenerator(tensor.NewGenerator(6)))
		b := tensor.Uniform([]int{k, n}, -1, 1, tensor.WithGenerator(tensor.NewGenerator(7)))
		what := fmt.Sprintf("MatMul %d×%d·%d×%d", m, k, k, n)
		ok(t, what, func() {
			tensor.Scope(func() {
				approx.CheckAny(t, what, a.To(dev).MatMul(b.To(dev)).Float32s(), a.MatMul(b).Float32s(), approx.Rel1(4e-6).Reduce(k))
			})
		})
	}
}

// TestGPULongIndexAdd adds 70001 source rows into 5 destination rows:
// each destination element scans the whole index. Bitwise equal to the
// CPU (the same additions in the same order).
func TestGPULongIndexAdd(t *testing.T) {
	dev := gpuOrSkip(t)
	const n = 70001
	gen := tensor.WithGenerator(tensor.NewGenerator(8))
	index := tensor.RandInt(0, 5, []int{n}, gen)
	src := tensor.Uniform([]int{n, 2}, -1, 1, gen)
	dst := tensor.Uniform([]int{5, 2}, -1, 1, gen)
	ok(t, "IndexAdd", func() {
		tensor.Scope(func() {
			approx.CheckAny(t, "IndexAdd", dst.To(dev).IndexAdd(0, index.To(dev), src.To(dev)).Float32s(), dst.IndexAdd(0, index, src).Float32s(), approx.Rel1(0))
		})
	})
	sindex := tensor.RandInt(0, 5, []int{2, n}, gen)
	ssrc := tensor.RandInt(-100, 100, []int{2, n}, gen)
	sdst := tensor.RandInt(-100, 100, []int{2, 5}, gen)
	ok(t, "ScatterAdd", func() {
		tensor.Scope(func() {
			approx.CheckAny(t, "ScatterAdd", sdst.To(dev).ScatterAdd(1, sindex.To(dev), ssrc.To(dev)).Int32s(), sdst.ScatterAdd(1, sindex, ssrc).Int32s(), approx.Rel1(0))
		})
	})
}
