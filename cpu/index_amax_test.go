package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
)

// testIndexAmaxType checks IndexAmax against a plain loop over every
// index shape, dim and layout kind, with repeated indices.
func testIndexAmaxType[T Number](t *testing.T) {
	r := newRand(11)
	for _, shape := range indexShapes[:8] {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, sk := range inKinds {
				size := dimSize(shape, dim)
				ni := []int{1, 5, 3 * size}[r.IntN(3)]
				if len(shape) == 0 {
					ni = 1
				}
				index := randIndex(r, ni, size)
				sl, sn := makeLayout(r, withDim(shape, dim, ni), sk)
				src := make([]T, sn)
				randFill(r, src)
				dl, _ := makeLayout(r, shape, kContig)
				dst := newOut[T](dl)
				want := make([]T, layout.Numel(shape))
				forEach(shape, func(idx []int) {
					dst[at(dl, idx)] = T(len(idx)) - 2
					want[flatIndex(shape, idx)] = T(len(idx)) - 2
				})
				forEach(sl.Shape, func(idx []int) {
					f := flatIndex(shape, setDim(idx, dim, func(i int) int { return int(index[i]) }))
					want[f] = max(want[f], src[at(sl, idx)])
				})
				if err := IndexAmax(dst, dl, dim, index, src, sl); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%T %v dim%d src:%s", src, shape, dim, sk)
				forEach(shape, func(idx []int) {
					if got, w := dst[at(dl, idx)], want[flatIndex(shape, idx)]; got != w {
						t.Fatalf("%s: dst%v = %v, want %v", name, idx, got, w)
					}
				})
			}
		}
	}
}

func TestIndexAmax(t *testing.T) {
	t.Run("float32", testIndexAmaxType[float32])
	t.Run("float64", testIndexAmaxType[float64])
	t.Run("int32", testIndexAmaxType[int32])
	t.Run("NaN wins", func(t *testing.T) {
		nan := float32(math.NaN())
		dst := []float32{nan, 1, 1}
		src := []float32{5, nan, 2, 0}
		if err := IndexAmax(dst, Contiguous(3), 0, []int32{0, 1, 2, 2}, src, Contiguous(4)); err != nil {
			t.Fatal(err)
		}
		if dst[0] == dst[0] || dst[1] == dst[1] || dst[2] != 2 {
			t.Errorf("got %v, want [NaN NaN 2]", dst)
		}
	})
	t.Run("out of range", func(t *testing.T) {
		err := IndexAmax(make([]float32, 3), Contiguous(3), 0, []int32{3}, []float32{1}, Contiguous(1))
		if _, ok := err.(*IndexError); !ok {
			t.Errorf("index 3 of 3: got %v, want an *IndexError", err)
		}
	})
}
