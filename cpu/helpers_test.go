package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
)

// Layout kinds used by the tests.
const (
	kContig = "contig" // row-major
	kPerm   = "perm"   // a permutation of the dims in memory (transpose)
	kStep   = "step"   // every stride doubled, plus an offset (a stepped slice)
	kBcast  = "bcast"  // some dims with stride 0 (inputs only)
)

var inKinds = []string{kContig, kPerm, kStep, kBcast}
var outKinds = []string{kContig, kPerm, kStep}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

// makeLayout returns a layout of the given kind for shape and the buffer
// length it needs.
func makeLayout(r *rand.Rand, shape []int, kind string) (Layout, int) {
	shape = append([]int(nil), shape...)
	rank := len(shape)
	l := Layout{Shape: shape, Strides: make([]int, rank)}
	switch kind {
	case kContig:
		l.Strides = layout.ContiguousStrides(shape)
	case kPerm:
		order := r.Perm(rank) // order[0] is the outermost dim in memory
		if rank >= 2 && isIdentity(order) {
			order[rank-1], order[rank-2] = order[rank-2], order[rank-1]
		}
		s := 1
		for i := rank - 1; i >= 0; i-- {
			l.Strides[order[i]] = s
			s *= shape[order[i]]
		}
	case kStep:
		s := 2
		for i := rank - 1; i >= 0; i-- {
			l.Strides[i] = s
			s *= shape[i] + 1
		}
		l.Offset = 3
	case kBcast:
		s := 1
		any0 := false
		for i := rank - 1; i >= 0; i-- {
			if shape[i] > 1 && (r.IntN(2) == 0 || (!any0 && i == 0)) {
				any0 = true
				continue // stride 0
			}
			l.Strides[i] = s
			s *= shape[i]
		}
		l.Offset = 1
	default:
		panic(kind)
	}
	return l, span(l)
}

func isIdentity(p []int) bool {
	for i, v := range p {
		if i != v {
			return false
		}
	}
	return true
}

// span is the buffer length a layout needs.
func span(l Layout) int {
	if l.NumElements() == 0 {
		return l.Offset
	}
	e := l.Offset
	for d, n := range l.Shape {
		e += (n - 1) * l.Strides[d]
	}
	return e + 1
}

// at is the offset of the element idx of l.
func at(l Layout, idx []int) int {
	o := l.Offset
	for d, i := range idx {
		o += i * l.Strides[d]
	}
	return o
}

// forEach calls fn for every multi-index of shape, row-major.
func forEach(shape []int, fn func(idx []int)) {
	if layout.Numel(shape) == 0 {
		return
	}
	idx := make([]int, len(shape))
	for {
		fn(idx)
		d := len(shape) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// flatIndex is the row-major index of idx in shape.
func flatIndex(shape, idx []int) int {
	f := 0
	for d, i := range idx {
		f = f*shape[d] + i
	}
	return f
}

func f64[T Elem](v T) float64 {
	switch x := any(v).(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	case int32:
		return float64(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	panic("type")
}

// randFill fills buf with values: floats roughly N(0,1), ints in [-50, 50].
func randFill[T Number](r *rand.Rand, buf []T) {
	for i := range buf {
		if isInt[T]() {
			buf[i] = T(r.IntN(101) - 50)
		} else {
			buf[i] = T(r.NormFloat64())
		}
	}
}

// sentinel is the value tests put in the parts of an output buffer that
// the kernel must not touch.
func sentinel[T Elem]() T {
	var v any
	switch any(*new(T)).(type) {
	case float32:
		v = float32(-7777.25)
	case float64:
		v = -7777.25
	case int32:
		v = int32(-7777)
	case bool:
		v = true
	}
	return v.(T)
}

// newOut returns an output buffer for l filled with the sentinel.
func newOut[T Elem](l Layout) []T {
	buf := make([]T, span(l)+2)
	for i := range buf {
		buf[i] = sentinel[T]()
	}
	return buf
}

// checkUntouched fails if an element of buf outside the view l changed.
func checkUntouched[T Elem](t *testing.T, name string, buf []T, l Layout) {
	t.Helper()
	in := make([]bool, len(buf))
	forEach(l.Shape, func(idx []int) { in[at(l, idx)] = true })
	if len(l.Shape) == 0 {
		in[l.Offset] = true
	}
	for i, v := range buf {
		if !in[i] && v != sentinel[T]() {
			t.Fatalf("%s: element %d outside the output view was written (%v)", name, i, v)
		}
	}
}

// tolFor is the relative tolerance of element type T.
func tolFor[T Elem]() float64 {
	switch any(*new(T)).(type) {
	case float32:
		return 2e-6
	case float64:
		return 1e-13
	}
	return 0
}

// shapeName prints a shape compactly.
func shapeName(s []int) string { return fmt.Sprint(s) }

// oddShapes are small shapes with awkward sizes, 0-d and single
// elements included.
var oddShapes = [][]int{{}, {1}, {7}, {65}, {1, 1}, {7, 33}, {33, 7}, {1, 65}, {7, 1, 33}, {3, 7, 5}, {2, 3, 1, 5}}
