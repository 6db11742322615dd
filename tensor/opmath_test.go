package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/opspec"
	"github.com/tessera-ml/tessera/tensor"
)

// The float64 references of the op specs (internal/opspec), checked
// against the rows' CPU math (opmath.go) through each row's kernel for
// every dtype it computes in, on contiguous and transposed operands. The
// kernels' iteration and fast paths are tested in package cpu.

// opInput returns a (7, 33) operand of dt, transposed from a (33, 7)
// tensor when transpose is set: values in [lo, hi) (whole numbers for
// Int32, coin flips for Bool, every other one whole when whole is
// set), with a NaN among floats when nan is set.
func opInput(r *rand.Rand, dt tensor.DType, lo, hi float64, transpose, nan, whole bool) *tensor.Tensor {
	v := make([]float64, 7*33)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float64()
		if dt == tensor.Int32 || dt == tensor.Bool || whole && i%2 == 0 {
			v[i] = math.Floor(v[i])
		}
	}
	if nan && dt.IsFloat() {
		v[5] = math.NaN()
	}
	if transpose {
		return tensor.From(v, []int{33, 7}, tensor.Of(dt)).Transpose(0, 1)
	}
	return tensor.From(v, []int{7, 33}, tensor.Of(dt))
}

// checkRowKernel runs op's CPU kernel for dt on ins and compares every
// element with ref, within a tolerance for float dtypes.
func checkRowKernel(t *testing.T, op tensor.Op, dt tensor.DType, p [2]float64, ins []*tensor.Tensor, ref func(x []float64) float64) {
	t.Helper()
	dst := tensor.RunRowKernel(op, dt, p, ins)
	vals := make([][]float64, len(ins))
	for i, x := range ins {
		vals[i] = x.Float64s()
	}
	tol := map[tensor.DType]approx.Tol{tensor.Float32: {Rel: 8e-6, Scale: 1}, tensor.Float64: {Rel: 1e-13, Scale: 1}}[dt]
	for i, got := range dst.Float64s() {
		x := make([]float64, len(ins))
		for k := range ins {
			x[k] = vals[k][i]
		}
		want := ref(x)
		if dt == tensor.Float32 {
			want = float64(float32(want))
		}
		if dt == tensor.Int32 && dst.DType() == tensor.Int32 {
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
	for _, s := range opspec.Specs() {
		n := s.Arity
		if n == 0 {
			continue
		}
		for _, dt := range tensor.RowKernelDTypes(s.Op) {
			params := s.FloatParams()
			if !dt.IsFloat() {
				params = [][2]float64{opspec.IntParams}
			}
			for _, p := range params {
				for _, transpose := range []bool{false, true} {
					ins := make([]*tensor.Tensor, n)
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

// TestOpSpecs checks that every op has exactly one spec in
// internal/opspec, with a public call, and that every elementwise op has
// a reference.
func TestOpSpecs(t *testing.T) {
	seen := map[tensor.Op]int{}
	for _, list := range opspec.Lists() {
		for _, s := range list {
			seen[s.Op]++
		}
	}
	for _, op := range tensor.Ops() {
		if seen[op] != 1 {
			t.Errorf("%v has %d specs in internal/opspec, want 1", op, seen[op])
		}
		delete(seen, op)
	}
	for op := range seen {
		t.Errorf("a spec names %v, which tensor.Ops() does not list", op)
	}
	for _, s := range opspec.Specs() {
		if s.Cover == nil {
			t.Errorf("%v: the spec has no public call (Cover or Call)", s.Op)
		}
		if (s.Arity > 0) != (s.Call != nil && s.Ref != nil) {
			t.Errorf("%v: elementwise ops, and only they, have Call and Ref", s.Op)
		}
		if s.Op.IsUnary() != (s.Arity == 1) || s.Op.IsBinary() != (s.Arity == 2) {
			t.Errorf("%v: a spec in the wrong list (arity %d)", s.Op, s.Arity)
		}
		if len(s.Torch) > 0 && s.Via != nil {
			t.Errorf("%v: a spec has Torch names or Via, not both", s.Op)
		}
	}
}
