package cpu

import (
	"math"
	"testing"
)

func TestIndexAmax(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testIndexReduceType(t, indexAmaxOf[float32]()) })
	t.Run("float64", func(t *testing.T) { testIndexReduceType(t, indexAmaxOf[float64]()) })
	t.Run("int32", func(t *testing.T) { testIndexReduceType(t, indexAmaxOf[int32]()) })
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
	t.Run("first of equal zeros", func(t *testing.T) {
		// Zeros of either sign are equal, so the first in index order
		// stays: the order along dim must hold whether the lines are
		// walked one by one (dim 1) or side by side (dim 0).
		neg := float32(math.Copysign(0, -1))
		for _, dim := range []int{0, 1} {
			shape := []int{3, 3}
			shape[dim] = 2
			src := make([]float32, 6)
			for i := range src {
				src[i] = neg
				if i/shape[1] == 0 && dim == 0 || i%2 == 0 && dim == 1 {
					src[i] = 0 // +0 first along dim
				}
			}
			dst := []float32{-1, -1, -1}
			dl := Contiguous(1, 3)
			if dim == 1 {
				dl = Contiguous(3, 1)
			}
			if err := IndexAmax(dst, dl, dim, []int32{0, 0}, src, Contiguous(shape...)); err != nil {
				t.Fatal(err)
			}
			for i, v := range dst {
				if v != 0 || math.Signbit(float64(v)) {
					t.Errorf("dim %d: dst[%d] = %v (sign bit %v), want +0, the first", dim, i, v, math.Signbit(float64(v)))
				}
			}
		}
	})
	t.Run("out of range", func(t *testing.T) {
		err := IndexAmax(make([]float32, 3), Contiguous(3), 0, []int32{3}, []float32{1}, Contiguous(1))
		if _, ok := err.(*IndexError); !ok {
			t.Errorf("index 3 of 3: got %v, want an *IndexError", err)
		}
	})
}
