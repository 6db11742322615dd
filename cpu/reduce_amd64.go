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

// minAVX2 returns the smallest of n (a positive multiple of 8) elements,
// or NaN when one is NaN.
//
//go:noescape
func minAVX2(x *float32, n int) float32

// sumF32 returns the sum of x in float64. Only for reduceAsm.
func sumF32(x []float32) float64 {
	n8 := len(x) &^ 7
	s := 0.0
	if n8 > 0 {
		s = sumAVX2(&x[0], n8)
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
