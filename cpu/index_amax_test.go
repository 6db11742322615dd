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
	t.Run("out of range", func(t *testing.T) {
		err := IndexAmax(make([]float32, 3), Contiguous(3), 0, []int32{3}, []float32{1}, Contiguous(1))
		if _, ok := err.(*IndexError); !ok {
			t.Errorf("index 3 of 3: got %v, want an *IndexError", err)
		}
	})
}
