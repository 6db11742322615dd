package cpu

import "runtime"

// MatMulEpilogue computes the float32 product dst = a·b of one batch
// (layouts as MatMul's, with dl.Shape[0] = 1) plus epi's bias, then
// epi's ReLU when set, applied to each block of dst as the AVX-512
// kernels store it, and reports
// whether it did. It declines, doing nothing, where the product does not
// go through those kernels in blocks of a row-major dst: without
// AVX-512, for a batch of several products, a dst whose rows are not
// contiguous, one row, K of 0 or 1, at most skinnyMaxN columns (the
// dot products of gemmSkinny, or a block mostly of masked lanes), or a
// product small enough for plain loops; the caller then computes the
// product and the epilogue its own way. It panics when epi's bias
// does not cover the product's columns.
func MatMulEpilogue(dst []float32, dl Layout, a []float32, al Layout, bm []float32, bl Layout, epi Epilogue) bool {
	nb, m, n, k := dl.Shape[0], dl.Shape[1], dl.Shape[2], al.Shape[2]
	epi.check(n)
	if !sgemmAsm || !sgemmAVX512 || nb != 1 || dl.Strides[2] != 1 || m < 2 || n <= skinnyMaxN || k < 2 || m*n*k <= gemmSmallWork {
		return false
	}
	parts := 1
	if splitProduct(m, n, k) {
		parts = runtime.GOMAXPROCS(0)
	}
	view := func(s []float32, l Layout) f32Mat {
		return f32Mat{data: s, off: l.Offset, rs: l.Strides[1], cs: l.Strides[2]}
	}
	gemm(m, n, k, view(a, al), view(bm, bl), view(dst, dl), parts, sgemmKit(), &epi)
	return true
}
