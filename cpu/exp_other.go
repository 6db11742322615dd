//go:build !amd64

package cpu

// expAsm reports whether float32 exp and softmax use the assembly
// kernels; there are none on this architecture, so math.Exp does.
var expAsm = false

// The kernels' wrappers are never called where expAsm is false.

func expSubSum(dst, x []float32, m float32, store bool) float64 {
	panic("cpu: no assembly exp on this architecture")
}

func expF32(dst, x []float32) { panic("cpu: no assembly exp on this architecture") }

func maxF32(x []float32) float32 { panic("cpu: no assembly exp on this architecture") }

func scaleF32(x []float32, s float32) { panic("cpu: no assembly exp on this architecture") }

func subF32(dst, x []float32, a, b float64) { panic("cpu: no assembly exp on this architecture") }
