package cpu

import xcpu "golang.org/x/sys/cpu"

// reduceAsm reports whether float32 reductions over long contiguous rows
// (at least reduceAsmMin elements) use the AVX2 kernels of reduce_amd64.s
// rather than the plain-Go loops of reduce.go; tests turn it off to
// compare the two.
//
// The sum kernel converts every element to float64 and adds in float64
// (eight accumulators of four lanes, combined in a fixed order), so it
// keeps the accuracy of the scalar float64 accumulation, and the result
// of a given row is the same on every run. Max and min propagate NaN.
var reduceAsm = xcpu.X86.HasAVX2

// sumAVX2 returns the float64 sum of n (a positive multiple of 8)
// float32 elements.
//
//go:noescape
func sumAVX2(x *float32, n int) float64

// foldCols4AVX2 adds the float64 sums of four rows, column by column,
// to acc (n columns, a positive multiple of 4; see reduce_amd64.s).
//
//go:noescape
func foldCols4AVX2(acc *float64, x *float32, rs, n int)

// foldCols4F32 adds to acc[j] the float64 sum (x0+x1)+(x2+x3) of column
// j of the rows of x at off, off+rs, off+2rs and off+3rs (rs ≥ 0), as
// fold.go's Cols4 loop does. Only for reduceAsm.
func foldCols4F32(acc []float64, x []float32, off, rs int) {
	n := len(acc)
	v0, v1, v2, v3 := x[off:off+n], x[off+rs:off+rs+n], x[off+2*rs:off+2*rs+n], x[off+3*rs:off+3*rs+n]
	n4 := n &^ 3
	if n4 > 0 {
		foldCols4AVX2(&acc[0], &v0[0], rs, n4)
	}
	for j := n4; j < n; j++ {
		acc[j] += (float64(v0[j]) + float64(v1[j])) + (float64(v2[j]) + float64(v3[j]))
	}
}

// sumAVX512 returns the float64 sum of n (a positive multiple of 64)
// float32 elements, with 512-bit registers: twice sumAVX2's conversions
// an instruction (go test -bench Workloads/sum, against sumAVX2 alone,
// one run each: 16M elements 59 -> 81 GB/s, 1M 82 -> 114).
//
//go:noescape
func sumAVX512(x *float32, n int) float64

// sumF32 returns the sum of x in float64: runs of 64 through sumAVX512
// where the CPU has AVX-512, then of 8 through sumAVX2, then one by one,
// the same split for a given length on every run. Only for reduceAsm.
func sumF32(x []float32) float64 {
	s, i := 0.0, 0
	if n64 := len(x) &^ 63; cpuAVX512 && n64 > 0 {
		s, i = sumAVX512(&x[0], n64), n64
	}
	x = x[i:]
	n8 := len(x) &^ 7
	if n8 > 0 {
		s += sumAVX2(&x[0], n8)
	}
	for _, v := range x[n8:] {
		s += float64(v)
	}
	return s
}

// maxAnyF32 returns the largest element of x (len(x) > 0), or NaN when
// one is NaN. Only for reduceAsm (maxF32 needs expAsm; its kernel needs
// only AVX).
func maxAnyF32(x []float32) float32 {
	n8 := len(x) &^ 7
	m := x[0]
	if n8 > 0 {
		m = maxAVX2(&x[0], n8)
	}
	for _, v := range x[n8:] {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// minF32 returns the smallest element of x (len(x) > 0), or NaN when one
// is NaN. Only for reduceAsm.
func minF32(x []float32) float32 {
	n8 := len(x) &^ 7
	m := x[0]
	if n8 > 0 {
		m = minAVX2(&x[0], n8)
	}
	for _, v := range x[n8:] {
		if v < m || v != v {
			m = v
		}
	}
	return m
}
