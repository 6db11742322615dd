package cpu

import (
	"fmt"
	"testing"
)

// BenchmarkScatter times ScatterAdd and IndexAmax (the two combines of
// scatterRuns) along the inner dim (lines walked one by one), along the
// outer dim (lines side by side) and along a short inner dim (runs of 2).
func BenchmarkScatter(b *testing.B) {
	for _, c := range []struct {
		name       string
		rows, cols int
		dim        int
	}{{"inner", 256, 1024, 1}, {"outer", 1024, 256, 0}, {"short", 131072, 2, 1}} {
		shape := []int{c.rows, c.cols}
		n := c.rows * c.cols
		src, dst := make([]float32, n), make([]float32, n)
		r := newRand(1)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		index := make([]int32, n)
		for i := range index {
			index[i] = int32(r.IntN(shape[c.dim]))
		}
		l := Contiguous(shape...)
		b.Run(fmt.Sprintf("ScatterAdd/%s", c.name), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				if err := ScatterAdd(dst, l, c.dim, index, l, src, l); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("IndexAmax/%s", c.name), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				if err := IndexAmax(dst, l, c.dim, index[:shape[c.dim]], src, l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
