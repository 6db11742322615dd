package tensor_test

// Shared pieces of the fuzz targets (fuzz_*_test.go): a reader that turns
// the fuzzer's bytes into small shapes, adversarial ints and scalars, a
// naive row-major reference tensor, and the rule every target applies: a
// call either returns or panics with a *tensor.Error.

import (
	"math"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// fuzzBudget caps the CPU memory a fuzz input may ask for, so that a huge
// shape is a typed out-of-memory error rather than minutes of allocation.
const fuzzBudget = 64 << 20

// fuzzSetup sets the CPU budget for the fuzz target and returns the GPU
// when an adapter opens (TESSERA_REQUIRE_GPU=1 fails without one).
func fuzzSetup(f *testing.F) (tensor.Device, bool) {
	f.Helper()
	restore := tensor.SetCPUBudget(fuzzBudget)
	f.Cleanup(restore)
	return devtest.GPU(f)
}

// A bytesReader hands out values decoded from fuzz input; past the end
// it returns zeros, so every input is a valid program.
type bytesReader struct {
	b []byte
}

func (r *bytesReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// small returns an int in [0, n).
func (r *bytesReader) small(n int) int { return int(r.byte()) % n }

// adversarialInts are the edge values an int argument may take.
var adversarialInts = []int{
	math.MaxInt, math.MinInt, math.MaxInt - 1, math.MinInt + 1, math.MaxInt32, math.MinInt32,
	math.MaxInt32 + 1, 1 << 32, -1 << 32, 1 << 40, 1 << 62, -(1 << 62), math.MaxInt / 2, math.MaxInt/2 + 1,
}

// int returns a small int in [-5, 10] most of the time and an adversarial
// one otherwise.
func (r *bytesReader) int() int {
	c := r.byte()
	if c >= 240 {
		return adversarialInts[int(c-240)%len(adversarialInts)]
	}
	return int(c%16) - 5
}

// adversarialFloats are the edge values a scalar argument may take.
var adversarialFloats = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
	1e10, -1e10, 3e38, 4e9, -0.0, 2147483647, 2147483648, -2147483649, 0.5, -2.5,
}

// float returns a small float most of the time and an edge value otherwise.
func (r *bytesReader) float() float64 {
	c := r.byte()
	if c >= 224 {
		return adversarialFloats[int(c-224)%len(adversarialFloats)]
	}
	return float64(int(c%32)-12) / 4
}

// shape returns a shape of rank 0..4 with sizes 0..4 (rarely 0).
func (r *bytesReader) shape() []int {
	s := make([]int, r.small(5))
	for i := range s {
		s[i] = []int{1, 2, 3, 4, 1, 2, 3, 0}[r.small(8)]
	}
	return s
}

var fuzzDTypes = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool}

func (r *bytesReader) dtype() tensor.DType { return fuzzDTypes[r.small(len(fuzzDTypes))] }

// ref is a naive row-major reference tensor.
type ref struct {
	shape []int
	v     []float64
}

// refIota is 0, 1, ..., n-1 in shape.
func refIota(shape []int) ref { return ref{slices.Clone(shape), iota64(layout.Numel(shape))} }

// at returns r's element at idx.
func (r ref) at(idx []int) float64 {
	off, st := 0, 1
	for i := len(r.shape) - 1; i >= 0; i-- {
		off += idx[i] * st
		st *= r.shape[i]
	}
	return r.v[off]
}

// gen builds the reference of shape whose element at idx is f(idx).
func gen(shape []int, f func(idx []int) float64) ref {
	out := ref{shape: slices.Clone(shape), v: make([]float64, 0, layout.Numel(shape))}
	if layout.Numel(shape) == 0 {
		return out
	}
	idx := make([]int, len(shape))
	for {
		out.v = append(out.v, f(idx))
		d := len(shape) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return out
		}
	}
}

// call runs f and reports whether it returned; a panic with a
// *tensor.Error is a clean refusal (false), any other panic fails t.
func call(t *testing.T, what string, f func()) (ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, typed := r.(*tensor.Error); typed {
				ok = false
				return
			}
			t.Fatalf("%s: raw panic %T: %v\n%s", what, r, r, debug.Stack())
		}
	}()
	f()
	return true
}

// fuzzWithin reports whether got equals want element by element, NaNs
// equal, within tol·(1+|want|) (0: exactly).
func fuzzWithin(got, want []float64, tol float64) bool {
	return len(got) == len(want) && approx.Mismatch(got, want, approx.Rel1(tol)) < 0
}

// checkRef fails t unless x has r's shape and values (within tol).
func checkRef(t *testing.T, what string, x *tensor.Tensor, r ref, tol float64) {
	t.Helper()
	if !slices.Equal(x.Shape(), r.shape) {
		t.Fatalf("%s: shape %v, want %v", what, x.Shape(), r.shape)
	}
	if got := x.Float64s(); !fuzzWithin(got, r.v, tol) {
		t.Fatalf("%s: got %v, want %v", what, got, r.v)
	}
}

// gpuEvery is how many fuzz inputs, on average, take the GPU leg too:
// lavapipe is slow. Which ones is decided by the input's bytes, so that
// a corpus entry replays the same legs.
const gpuEvery = 8

// gpuLeg reports whether this input also runs on gpu (when ok).
func (r *bytesReader) gpuLeg(ok bool) bool { return r.small(gpuEvery) == 0 && ok }
