package cpu

import (
	"fmt"
	"testing"
)

// BenchmarkGemmSplit compares a product on one goroutine with the same
// product split across two, for the small-K shapes whose m·n·k passes
// gemmParallelWork (the MLP step's 256×512×10, dy·W at the classifier
// head): GEMM_K the inner sizes (default 2, 4, 8, 10, 16, 32), GEMM_M and
// GEMM_N the outer ones (default 256 and 512), both operands row-major.
func BenchmarkGemmSplit(b *testing.B) {
	for _, m := range envInts("GEMM_M", 256) {
		for _, n := range envInts("GEMM_N", 512) {
			ks := envInts("GEMM_K", 0)
			if ks[0] == 0 {
				ks = []int{2, 4, 8, 10, 16, 32}
			}
			for _, k := range ks {
				b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
					abGemm(b, 2, m, n, k, gRow, gRow, []gemmVariant{
						{name: "one", parts: 1},
						{name: "two", parts: 2},
					})
				})
			}
		}
	}
}

// BenchmarkMatMulSmallK times MatMul on the MLP step's product with a
// small K, dy·W at the classifier head: (256×10)·(10×512), both
// row-major, on all goroutines.
func BenchmarkMatMulSmallK(b *testing.B) { benchMatMul(b, 256, 512, 10, false) }

// benchMatMul times MatMul of a row-major m×k A by a k×n B, row-major or,
// with bT, transposed (a row-major n×k matrix), into a row-major C, on
// all goroutines, and reports GFLOP/s.
func benchMatMul(b *testing.B, m, n, k int, bT bool) {
	a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	r := newRand(1)
	randFill(r, a)
	randFill(r, bm)
	al, bl, cl := Contiguous(1, m, k), Contiguous(1, k, n), Contiguous(1, m, n)
	if bT {
		bl = Layout{Shape: []int{1, k, n}, Strides: []int{n * k, 1, k}}
	}
	for b.Loop() {
		MatMul(c, cl, a, al, bm, bl)
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestSplitProduct checks which products splitProduct splits: by their
// work, by K, and by the size of C for a small K.
func TestSplitProduct(t *testing.T) {
	for _, c := range []struct {
		m, n, k int
		want    bool
	}{
		{64, 64, 64, false},    // too little work
		{256, 256, 32, true},   // K from gemmParallelK
		{256, 256, 16, false},  // small K, C of 64 Ki values
		{256, 512, 10, true},   // small K, C of 128 Ki values: the MLP's dy·W
		{256, 512, 4, false},   // K below gemmParallelMinK
		{2048, 2048, 4, true},  // gemmParallelBigWork whatever K
		{1024, 1024, 1, false}, // K of 1 below gemmParallelBigWork
		{100, 100, 100, true},  // the char-RNN's 100×100·100
		{1, 4096, 4096, true},  // one row
		{512, 512, 2, false},   // K below gemmParallelMinK, C of 256 Ki values
		{1024, 128, 8, true},   // C of 128 Ki values, K of gemmParallelMinK
		{1024, 127, 8, false},  // C just short of gemmParallelOut
	} {
		if got := splitProduct(c.m, c.n, c.k); got != c.want {
			t.Errorf("splitProduct(%d, %d, %d) = %v, want %v", c.m, c.n, c.k, got, c.want)
		}
	}
}
