package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// The float64 references of the rows' CPU math (opmath.go), checked
// through each row's kernel for every dtype it computes in, on
// contiguous and transposed operands. The kernels' iteration and fast
// paths are tested in package cpu.

// opInput returns a (7, 33) operand of dt, transposed from a (33, 7)
// tensor when transpose is set: values in [lo, hi) (whole numbers for
// Int32, coin flips for Bool, every other one whole when whole is
// set), with a NaN among floats when nan is set.
func opInput(r *rand.Rand, dt DType, lo, hi float64, transpose, nan, whole bool) *Tensor {
	v := make([]float64, 7*33)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if dt == Int32 || dt == Bool || whole && i%2 == 0 {
			v[i] = math.Floor(v[i])
		}
	}
	if nan && dt.IsFloat() {
		v[5] = math.NaN()
	}
	if transpose {
		return From(v, []int{33, 7}, Of(dt)).Transpose(0, 1)
	}
	return From(v, []int{7, 33}, Of(dt))
}

// checkRowKernel runs op's CPU kernel for dt on ins and compares every
// element with ref, within a tolerance for float dtypes.
func checkRowKernel(t *testing.T, op Op, dt DType, p [2]float64, ins []*Tensor, ref func(x []float64) float64) {
	t.Helper()
	info := op.info()
	dst := newTensor(info.outType(dt), []int{7, 33}, CPU)
	var in [3]*Tensor
	copy(in[:], ins)
	info.cpu[dt].run(p, dst, in)
	vals := make([][]float64, len(ins))
	for i, x := range ins {
		vals[i] = x.Float64s()
	}
	tol := map[DType]approx.Tol{Float32: approx.Tol{Rel: 8e-6, Scale: 1}, Float64: approx.Tol{Rel: 1e-13, Scale: 1}}[dt]
	for i, got := range dst.Float64s() {
		x := make([]float64, len(ins))
		for k := range ins {
			x[k] = vals[k][i]
		}
		want := ref(x)
		if dt == Float32 {
			want = float64(float32(want))
		}
		if dt == Int32 && info.outType(dt) == Int32 {
			want = float64(int32(want))
		}
		if !tol.Equal(got, want) {
			t.Fatalf("%v %v%v: f(%v) = %v, want %v", op, dt, fmt.Sprint(ins[0].Strides()), x, got, want)
		}
	}
}

// TestRowMath checks every elementwise op's CPU kernels against the
// float64 reference of its spec (spec_*_test.go), on the spec's domain
// and parameters, for every dtype the row computes in.
func TestRowMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range Specs() {
		n := s.Arity()
		if n == 0 {
			continue
		}
		info := s.Op.info()
		for dt := range numDTypes {
			if info.cpu[dt] == nil {
				continue
			}
			params := s.FloatParams()
			if !dt.IsFloat() {
				params = [][2]float64{IntParams}
			}
			for _, p := range params {
				for _, transpose := range []bool{false, true} {
					ins := make([]*Tensor, n)
					for k := range ins {
						lo, hi := s.Range(k)
						// Operands alternate layouts; the divisor of a ternary op is
						// transposed, and no NaN reaches ternary ops.
						ins[k] = opInput(r, dt, lo, hi, transpose != (k%2 == 1) || k == 2, n < 3, s.Whole)
					}
					checkRowKernel(t, s.Op, dt, p, ins, func(x []float64) float64 { return s.Ref(p, x...) })
				}
			}
		}
	}
}
