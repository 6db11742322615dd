package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
)

// indexShapes are the shapes of x (or dst) for the index kernels.
var indexShapes = [][]int{{}, {1}, {7}, {65}, {7, 33}, {33, 7}, {7, 1, 33}, {3, 7, 5}, {300, 257}, {20001, 3}}

func randIndex(r *rand.Rand, n, size int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(r.IntN(size))
	}
	return idx
}

func withDim(shape []int, dim, n int) []int {
	s := append([]int(nil), shape...)
	if len(s) > 0 {
		s[dim] = n
	}
	return s
}

func dimSize(shape []int, dim int) int {
	if len(shape) == 0 {
		return 1
	}
	return shape[dim]
}

func testIndexSelectType[T Number](t *testing.T) {
	r := newRand(8)
	for _, shape := range indexShapes {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, xk := range inKinds {
				for _, dk := range outKinds {
					size := dimSize(shape, dim)
					ni := []int{1, 5, 2 * size}[r.IntN(3)]
					if len(shape) == 0 {
						ni = 1
					}
					index := randIndex(r, ni, size)
					xl, xn := makeLayout(r, shape, xk)
					x := make([]T, xn)
					randFill(r, x)
					dl, _ := makeLayout(r, withDim(shape, dim, ni), dk)
					dst := newOut[T](dl)
					if err := IndexSelect(dst, dl, x, xl, dim, index); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%T %v dim%d x:%s d:%s", x, shape, dim, xk, dk)
					checkUntouched(t, name, dst, dl)
					forEach(dl.Shape, func(idx []int) {
						src := setDim(idx, dim, func(i int) int { return int(index[i]) })
						if got, want := dst[at(dl, idx)], x[at(xl, src)]; got != want && got == got {
							t.Fatalf("%s: dst%v = %v, want %v", name, idx, got, want)
						}
					})
				}
			}
		}
	}
}

// indexReduce is IndexAdd or IndexAmax with its float64 reference
// combine; exact asks for results equal to the reference (a max), else
// within rounding of the sum's terms.
type indexReduce[T Number] struct {
	kernel  func(dst []T, dl Layout, dim int, index []int32, src []T, sl Layout) error
	combine func(acc, v float64) float64
	exact   bool
}

func indexAddOf[T Number]() indexReduce[T] {
	return indexReduce[T]{IndexAdd[T], func(a, v float64) float64 { return a + v }, false}
}

func indexAmaxOf[T Number]() indexReduce[T] {
	return indexReduce[T]{IndexAmax[T], math.Max, true}
}

// testIndexReduceType checks op against its reference over every index
// shape, dim and layout kind, with repeated indices.
func testIndexReduceType[T Number](t *testing.T, op indexReduce[T]) {
	r := newRand(9)
	for _, shape := range indexShapes {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, sk := range inKinds {
				for _, dk := range outKinds {
					size := dimSize(shape, dim)
					ni := []int{1, 5, 3 * size}[r.IntN(3)] // repeated indices
					if len(shape) == 0 {
						ni = 1
					}
					index := randIndex(r, ni, size)
					sl, sn := makeLayout(r, withDim(shape, dim, ni), sk)
					src := make([]T, sn)
					randFill(r, src)
					dl, _ := makeLayout(r, shape, dk)
					dst := newOut[T](dl)
					want := make([]float64, layout.Numel(shape))
					scale, cnt := make([]float64, len(want)), make([]float64, len(want)) // Σ|terms|, number of terms
					forEach(shape, func(idx []int) {
						dst[at(dl, idx)] = T(len(idx))
						want[flatIndex(shape, idx)] = float64(len(idx))
					})
					forEach(sl.Shape, func(idx []int) {
						d := setDim(idx, dim, func(i int) int { return int(index[i]) })
						f := flatIndex(shape, d)
						want[f] = op.combine(want[f], f64(src[at(sl, idx)]))
						scale[f] += math.Abs(f64(src[at(sl, idx)]))
						cnt[f]++
					})
					if err := op.kernel(dst, dl, dim, index, src, sl); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%T %v dim%d src:%s d:%s", src, shape, dim, sk, dk)
					checkUntouched(t, name, dst, dl)
					forEach(shape, func(idx []int) {
						tol := tolFor[T]() * max(cnt[flatIndex(shape, idx)]*scale[flatIndex(shape, idx)], 1)
						if op.exact {
							tol = 0
						}
						if got, w := f64(dst[at(dl, idx)]), want[flatIndex(shape, idx)]; !approx.Abs(tol).Equal(got, w) {
							t.Fatalf("%s: dst%v = %v, want %v", name, idx, got, w)
						}
					})
				}
			}
		}
	}
}

// gatherCase makes x (or dst) of shape and an index of a shape no larger
// off dim, with a layout of kind ik.
func gatherIndex(r *rand.Rand, shape []int, dim int, ik string, size int) ([]int32, Layout) {
	is := append([]int(nil), shape...)
	for d := range is {
		if d != dim && is[d] > 1 && r.IntN(3) == 0 {
			is[d]-- // smaller than x off dim, as torch allows
		}
	}
	if len(is) > 0 {
		is[dim] = []int{1, 4, 2 * size}[r.IntN(3)]
	}
	il, in := makeLayout(r, is, ik)
	idx := make([]int32, in)
	for i := range idx {
		idx[i] = int32(r.IntN(size))
	}
	return idx, il
}

func testGatherScatterType[T Number](t *testing.T) {
	r := newRand(10)
	for _, shape := range indexShapes {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, ik := range inKinds {
				for _, ok := range outKinds {
					size := dimSize(shape, dim)
					index, il := gatherIndex(r, shape, dim, ik, size)
					// Gather from x of shape into dst of il's shape.
					xl, xn := makeLayout(r, shape, kPerm)
					x := make([]T, xn)
					randFill(r, x)
					dl, _ := makeLayout(r, il.Shape, ok)
					dst := newOut[T](dl)
					if err := Gather(dst, dl, x, xl, dim, index, il); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%T %v dim%d index %v %s out:%s", x, shape, dim, il.Shape, ik, ok)
					checkUntouched(t, "gather "+name, dst, dl)
					forEach(il.Shape, func(idx []int) {
						src := setDim(idx, dim, func(int) int { return int(index[at(il, idx)]) })
						if got, want := dst[at(dl, idx)], x[at(xl, src)]; got != want {
							t.Fatalf("gather %s: dst%v = %v, want %v", name, idx, got, want)
						}
					})
					// Scatter-add src of il's shape into dst of shape.
					sl, sn := makeLayout(r, il.Shape, kStep)
					src := make([]T, sn)
					randFill(r, src)
					ol, _ := makeLayout(r, shape, ok)
					out := newOut[T](ol)
					want := make([]float64, layout.Numel(shape))
					scale, cnt := make([]float64, len(want)), make([]float64, len(want)) // Σ|terms|, number of terms
					forEach(shape, func(idx []int) { out[at(ol, idx)] = 0 })
					forEach(il.Shape, func(idx []int) {
						d := setDim(idx, dim, func(int) int { return int(index[at(il, idx)]) })
						f := flatIndex(shape, d)
						want[f] += f64(src[at(sl, idx)])
						scale[f] += math.Abs(f64(src[at(sl, idx)]))
						cnt[f]++
					})
					if err := ScatterAdd(out, ol, dim, index, il, src, sl); err != nil {
						t.Fatal(err)
					}
					checkUntouched(t, "scatter_add "+name, out, ol)
					forEach(shape, func(idx []int) {
						if got, w := f64(out[at(ol, idx)]), want[flatIndex(shape, idx)]; !approx.Abs(tolFor[T]()*max(cnt[flatIndex(shape, idx)]*scale[flatIndex(shape, idx)], 1)).Equal(got, w) {
							t.Fatalf("scatter_add %s: dst%v = %v, want %v", name, idx, got, w)
						}
					})
				}
			}
		}
	}
}

func TestIndexSelect(t *testing.T) {
	t.Run("float32", testIndexSelectType[float32])
	t.Run("float64", testIndexSelectType[float64])
	t.Run("int32", testIndexSelectType[int32])
	// bool, an Elem that is not a Number.
	x := []bool{true, false, true}
	d := make([]bool, 4)
	if err := IndexSelect(d, Contiguous(4), x, Contiguous(3), 0, []int32{1, 0, 1, 2}); err != nil || d[0] || !d[1] || d[2] || !d[3] {
		t.Fatalf("bool index_select = %v, %v", d, err)
	}
}

func TestIndexAdd(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testIndexReduceType(t, indexAddOf[float32]()) })
	t.Run("float64", func(t *testing.T) { testIndexReduceType(t, indexAddOf[float64]()) })
	t.Run("int32", func(t *testing.T) { testIndexReduceType(t, indexAddOf[int32]()) })
}

func TestGatherScatterAdd(t *testing.T) {
	t.Run("float32", testGatherScatterType[float32])
	t.Run("float64", testGatherScatterType[float64])
	t.Run("int32", testGatherScatterType[int32])
	x := []bool{true, false}
	d := make([]bool, 3)
	if err := Gather(d, Contiguous(3), x, Contiguous(2), 0, []int32{1, 1, 0}, Contiguous(3)); err != nil || d[0] || d[1] || !d[2] {
		t.Fatalf("bool gather = %v, %v", d, err)
	}
}

// TestIndexErrors checks that every index kernel rejects negative and
// too-large indices with an *IndexError and writes nothing.
func TestIndexErrors(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // (2, 5)
	xl := Contiguous(2, 5)
	for _, bad := range []int32{5, -1, 1 << 30} {
		check := func(name string, err error, buf []float32) {
			t.Helper()
			var ie *IndexError
			if !errors.As(err, &ie) || ie.Index != int(bad) || ie.Size != 5 || ie.Dim != 1 {
				t.Fatalf("%s with index %d: error %v", name, bad, err)
			}
			for _, v := range buf {
				if v != sentinel[float32]() {
					t.Fatalf("%s wrote %v before failing", name, buf)
				}
			}
		}
		dst := newOut[float32](Contiguous(2, 3))
		check("index_select", IndexSelect(dst, Contiguous(2, 3), x, xl, 1, []int32{0, bad, 1}), dst)
		acc := newOut[float32](xl)
		check("index_add", IndexAdd(acc, xl, 1, []int32{0, 1, bad}, make([]float32, 6), Contiguous(2, 3)), acc)
		il := Layout{Shape: []int{2, 3}, Strides: []int{1, 2}} // transposed index
		index := []int32{0, 1, 2, bad, 4, 0}
		dst = newOut[float32](Contiguous(2, 3))
		check("gather", Gather(dst, Contiguous(2, 3), x, xl, 1, index, il), dst)
		acc = newOut[float32](xl)
		check("scatter_add", ScatterAdd(acc, xl, 1, index, il, make([]float32, 6), Contiguous(2, 3)), acc)
	}
	e := &IndexError{Op: "gather", Index: 7, Dim: 0, Size: 5}
	if e.Error() != "index 7 is out of bounds for dimension 0 with size 5" {
		t.Fatalf("message %q", e.Error())
	}
}

// setDim returns idx with the coordinate along dim replaced by
// f(idx[dim]); a 0-d idx stays empty (its index must be 0).
func setDim(idx []int, dim int, f func(int) int) []int {
	if len(idx) == 0 {
		if f(0) != 0 {
			panic("0-d index must be 0")
		}
		return idx
	}
	d := append([]int(nil), idx...)
	d[dim] = f(idx[dim])
	return d
}
