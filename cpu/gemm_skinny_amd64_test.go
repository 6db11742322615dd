package cpu

import (
	"fmt"
	"testing"
)

func skipNoSkinny(t *testing.T) {
	if !gemmSkinnyOn || !sgemmAVX512 {
		t.Skip("no AVX-512: gemmSkinny is not used")
	}
}

// TestGemmSkinny checks products with few columns against the float64
// reference (checkGemm: the values, and nothing outside C written), on one
// goroutine and two: every n that gemmSkinny takes (2..16: one column is
// a gemv) with A row-major and B column-major, odd m (the last row alone)
// and K from n²/2 on, a multiple of sixteen or not (the masked tail), C
// in every layout;
// and a few shapes in every layout of A and B, most of which gemm gives
// to its other paths.
func TestGemmSkinny(t *testing.T) {
	skipNoSkinny(t)
	r := newRand(21)
	for n := 2; n <= skinnyMaxN; n++ {
		for _, m := range []int{2, 3, 33} {
			for _, k := range []int{(n*n + 1) / 2, n*n/2 + 17, 300} {
				for _, ck := range gKinds {
					runGemm(t, r, m, n, k, gRow, gCol, ck)
				}
			}
		}
	}
	// Many units for two goroutines, odd m.
	runGemm(t, r, 1025, 16, 520, gRow, gCol, gRow)
	for _, s := range [][3]int{{7, 10, 81}, {33, 16, 300}, {65, 3, 33}} {
		for _, ak := range gKinds {
			for _, bk := range gKinds {
				runGemm(t, r, s[0], s[1], s[2], ak, bk, gRow)
			}
		}
	}
}

// TestGemmSkinnyTakes checks that gemmSkinny takes the products it is
// meant to (so that TestGemmSkinny tests it) and leaves the others.
func TestGemmSkinnyTakes(t *testing.T) {
	skipNoSkinny(t)
	r := newRand(22)
	for _, s := range []struct {
		n, k   int
		ak, bk string
		want   bool
	}{
		{5, 13, gRow, gCol, true}, {16, 128, gPad, gCol, true}, {16, 127, gRow, gCol, false},
		{17, 200, gRow, gCol, false}, {5, 40, gCol, gCol, false}, {5, 40, gRow, gRow, false},
	} {
		m, k := 9, s.k
		a, b, c := gemmMat(r, m, k, s.ak, false), gemmMat(r, k, s.n, s.bk, false), gemmMat(r, m, s.n, gRow, true)
		if got := gemmSkinny(m, s.n, k, a, b, c, 1); got != s.want {
			t.Errorf("gemmSkinny(%d×%d×%d, a:%s b:%s) = %v, want %v", m, s.n, k, s.ak, s.bk, got, s.want)
		}
	}
}

// TestGemmSkinnyNaNInf checks NaN and Inf propagation through gemmSkinny
// as TestSgemmNaNInf does through the kernels.
func TestGemmSkinnyNaNInf(t *testing.T) {
	skipNoSkinny(t)
	checkNaNInf(t, [][3]int{{20, 10, 300}, {7, 16, 129}, {3, 2, 47}, {9, 15, 125}})
}

// BenchmarkGemmSkinny compares gemmSkinny (at any K) with the 6×16
// kernels on products with few columns, A row-major and B column-major (x·Wᵀ), on
// one goroutine (GEMM_THREADS) and m×n×k from GEMM_M, GEMM_N, GEMM_K
// (default the MLP step's classifier head, 256×10×512).
func BenchmarkGemmSkinny(b *testing.B) {
	for _, m := range envInts("GEMM_M", 256) {
		for _, n := range envInts("GEMM_N", 10) {
			for _, k := range envInts("GEMM_K", 512) {
				b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
					abGemm(b, envInts("GEMM_THREADS", 1)[0], m, n, k, gRow, gCol, []gemmVariant{
						{name: "kernel", set: setVar(&gemmSkinnyOn, false)},
						{name: "skinny", set: setVar(&skinnyAnyK, true)},
					})
				})
			}
		}
	}
}

// BenchmarkMatMulSkinny times MatMul on the MLP step's classifier head,
// x·Wᵀ for x 256×512 and W 10×512 (both row-major), on all goroutines,
// with gemmSkinny and without.
func BenchmarkMatMulSkinny(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("skinny=%v", on), func(b *testing.B) {
			defer setVar(&gemmSkinnyOn, on && gemmSkinnyOn)()()
			benchMatMul(b, 256, 10, 512, true)
		})
	}
}
