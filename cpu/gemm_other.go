//go:build !amd64

package cpu

// sgemmAsm reports whether MatMul computes float32 products with the
// assembly GEMM; there is none on this architecture, so gonum does.
var sgemmAsm = false

// matMulSgemm is MatMul for float32; without the assembly kernel it is
// gonum's path, which MatMul takes itself when sgemmAsm is false.
func matMulSgemm(dst []float32, dl Layout, a []float32, al Layout, bm []float32, bl Layout) {
	MatMul(dst, dl, a, al, bm, bl)
}

// sgemmAVX512 is false: there are no AVX-512 kernels on this
// architecture.
var sgemmAVX512 = false

// dgemmAsm is false: float64 products go to gonum on this architecture.
var dgemmAsm = false

// matMulDgemm is never called where dgemmAsm is false.
func matMulDgemm(dst []float64, dl Layout, a []float64, al Layout, bm []float64, bl Layout) {
	MatMul(dst, dl, a, al, bm, bl)
}

// MatMulEpilogue declines on this architecture: the caller computes the
// product and the epilogue its own way (see the amd64 version). It
// panics, as there, when epi's bias does not cover the product.
func MatMulEpilogue(dst []float32, dl Layout, a []float32, al Layout, bm []float32, bl Layout, epi Epilogue) bool {
	epi.check(dl.Shape[2])
	return false
}
