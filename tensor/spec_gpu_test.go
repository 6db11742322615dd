package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/internal/opspec"
	"github.com/tessera-ml/tessera/tensor"
)

// TestSpecElementwiseGPU runs every elementwise op's row on the GPU: the
// WGSL expression that ships, through the spec's public call
// (tensor/spec_*_test.go), on operands in the kernels' three modes
// (contiguous with a broadcast scalar, strided views with offsets and
// broadcasts, and vec4-sized contiguous rows). A float32 result must
// match the spec's float64 reference rounded to float32 and the CPU's
// within the spec's tolerance; integer and bool results must equal the
// CPU's; and the GPU must refuse exactly what the CPU refuses.
func TestSpecElementwiseGPU(t *testing.T) {
	gpu := devtest.MustGPU(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range opspec.Specs() {
		n := s.Arity
		if n == 0 {
			continue
		}
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Bool} {
			params := s.FloatParams()
			if dt != tensor.Float32 {
				params = [][2]float64{opspec.IntParams}
			}
			for _, p := range params {
				for _, l := range specLayouts {
					if dt != tensor.Float32 && l.name != "strided" {
						continue // integers and bools: the hardest mode only
					}
					what := fmt.Sprintf("%v %v p=%v %s", s.Op, dt, p, l.name)
					checkSpecGPU(t, what, s, dt, p, l, gpu, r)
				}
			}
		}
	}
}

// A specLayout places operand k of an elementwise call: a base tensor of
// base[k] elements and the view of it the op reads.
type specLayout struct {
	name  string
	out   []int
	base  func(k int) []int
	views func(k int, x *tensor.Tensor) *tensor.Tensor
}

var specLayouts = []specLayout{
	// Contiguous operands; the second is a broadcast 0-d scalar.
	{name: "contiguous+scalar", out: []int{7, 33},
		base: func(k int) []int {
			if k == 1 {
				return nil
			}
			return []int{7, 33}
		},
		views: func(_ int, x *tensor.Tensor) *tensor.Tensor { return x }},
	// A transposed view at an offset, a row broadcast over rows and a
	// column broadcast over columns.
	{name: "strided", out: []int{7, 33},
		base: func(k int) []int { return [][]int{{34, 7}, {33}, {7, 1}}[k] },
		views: func(k int, x *tensor.Tensor) *tensor.Tensor {
			if k == 0 {
				return x.Slice(0, 1, 34, 1).Transpose(0, 1)
			}
			return x
		}},
	// Rows of a multiple of four elements (the vec4 kernels).
	{name: "vec4", out: []int{4, 65},
		base:  func(int) []int { return []int{4, 65} },
		views: func(_ int, x *tensor.Tensor) *tensor.Tensor { return x }},
}

// specValues draws the values of operand k of s: in its domain, whole
// numbers for Int32 and Bool (and every other one when s.Whole), a NaN
// first when s.NaN, some scaled by 2⁻²⁰ when s.Tiny.
func specValues(r *rand.Rand, s opspec.Spec, k int, dt tensor.DType, count int) []float64 {
	lo, hi := s.Range(k)
	v := make([]float64, count)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if dt != tensor.Float32 || s.Whole && i%2 == 0 {
			v[i] = math.Floor(v[i])
		}
		if s.Tiny && dt == tensor.Float32 && i%7 == 0 {
			v[i] = math.Ldexp(v[i], -20)
		}
	}
	if s.NaN && dt == tensor.Float32 && count > 1 {
		v[k%count] = math.NaN()
	}
	return v
}

func checkSpecGPU(t *testing.T, what string, s opspec.Spec, dt tensor.DType, p [2]float64, l specLayout, gpu tensor.Device, r *rand.Rand) {
	t.Helper()
	vals := make([][]float64, s.Arity)
	for k := range vals {
		vals[k] = specValues(r, s, k, dt, max(1, layout.Numel(l.base(k))))
	}
	run := func(dev tensor.Device) (out []float64, outDT tensor.DType, shape []int, ref []float64, err error) {
		tensor.Scope(func() {
			err = tensor.Catch(func() {
				ins := make([]*tensor.Tensor, len(vals))
				for k, v := range vals {
					ins[k] = l.views(k, tensor.From(v, l.base(k), tensor.Of(dt), tensor.On(dev)))
				}
				y := s.Call(p, ins...)
				out, outDT, shape = y.Float64s(), y.DType(), y.Shape()
				if dev != tensor.CPU {
					return
				}
				// The reference, element by element on the operands
				// broadcast to the output's shape as the device saw them.
				flat := make([][]float64, len(ins))
				for k, x := range ins {
					flat[k] = x.Expand(shape...).Contiguous().Float64s()
				}
				ref = make([]float64, len(out))
				args := make([]float64, len(ins))
				for i := range ref {
					for k := range args {
						args[k] = flat[k][i]
					}
					ref[i] = float64(float32(s.Ref(p, args...)))
				}
			})
		})
		return
	}
	cpuOut, cpuDT, cpuShape, ref, cpuErr := run(tensor.CPU)
	gpuOut, gpuDT, gpuShape, _, gpuErr := run(gpu)
	switch {
	case cpuErr != nil && gpuErr != nil:
		return
	case cpuErr != nil:
		t.Errorf("%s: the GPU runs what the CPU refuses (%v)", what, cpuErr)
		return
	case gpuErr != nil:
		t.Errorf("%s: the GPU fails where the CPU runs: %v", what, gpuErr)
		return
	case cpuDT != gpuDT || !slices.Equal(cpuShape, gpuShape) || !slices.Equal(cpuShape, l.out):
		t.Errorf("%s: the CPU gives %v %v, the GPU %v %v (want shape %v)", what, cpuDT, cpuShape, gpuDT, gpuShape, l.out)
		return
	}
	if gpuDT != tensor.Float32 {
		approx.Check(t, what+": GPU vs CPU", gpuOut, cpuOut, approx.Exact)
		return
	}
	approx.Check(t, what+": GPU vs the float64 reference", gpuOut, ref, s.Tol)
	approx.Check(t, what+": GPU vs CPU", gpuOut, cpuOut, s.Tol)
}
