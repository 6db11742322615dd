//go:build !amd64

package cpu

// sgemmAsm reports whether MatMul computes float32 products with the
// assembly GEMM; there is none on this architecture, so gonum does.
var sgemmAsm = false

// matMulSgemm is never called where sgemmAsm is false.
func matMulSgemm(dst []float32, dl Layout, a []float32, al Layout, bm []float32, bl Layout) {
	panic("cpu: no assembly GEMM on this architecture")
}
