//go:build !amd64

package cpu

import "math"

// expAsm reports whether float32 exp and softmax over contiguous lines
// use the assembly kernels; there are none on this architecture. The
// helpers below are their plain-Go equivalents, so callers need no build
// tags of their own.
var expAsm = false

// expSubSum sets dst_i = exp(x_i - m) when store is true and returns the
// sum of those values in float64.
func expSubSum(dst, x []float32, m float32, store bool) float64 {
	s := 0.0
	for i, v := range x {
		e := math.Exp(float64(v - m))
		if store {
			dst[i] = float32(e)
		}
		s += float64(float32(e))
	}
	return s
}

// expSubEach sets dst_i = exp(x_i - m_i) for the len(x) elements of x
// (dst may be x or m).
func expSubEach(dst, x, m []float32) {
	for i, v := range x {
		dst[i] = float32(math.Exp(float64(v) - float64(m[i])))
	}
}

// expF32 sets dst_i = exp(x_i) (dst may be x).
func expF32(dst, x []float32) { expSubSum(dst, x, 0, true) }

// maxF32 returns the largest element of x (len(x) > 0), or NaN when one is NaN.
func maxF32(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// scaleF32 multiplies every element of x by s.
func scaleF32(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// subF32 sets dst_i = float32(float64(x_i) - a - b) (dst may be x).
func subF32(dst, x []float32, a, b float64) {
	for i, v := range x {
		dst[i] = float32(float64(v) - a - b)
	}
}
