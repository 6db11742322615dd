package cpu

import (
	"math"
	"unsafe"
)

// Vector functions: the fast paths an op table names for contiguous runs
// (Fn1.Vec, Fn2.Vec, Fn2.VecScalar). Each writes dst[i] for i in
// [0, len(dst)) from inputs at least that long; dst may be an input.
// Plain loops that the compiler keeps in registers, or, for float32 on a
// CPU with AVX-512, the loops of vec_amd64.s (vecZ), which give the same
// results bit for bit.

// zRun reports whether a float32 run of n values goes to the vector
// loops: T is float32, the CPU has them, and n > 0.
func zRun[T Number](n int) bool {
	_, f32 := any(*new(T)).(float32)
	return f32 && vecZ && n > 0
}

// p32 returns the address of s[0] as a *float32 (s is a non-empty
// []float32 seen as []T).
func p32[T Number](s []T) *float32 { return (*float32)(unsafe.Pointer(unsafe.SliceData(s))) }

// f32 returns v, a float32 seen as a T, as a float32.
func f32[T Number](v T) float32 { return *(*float32)(unsafe.Pointer(&v)) }

// AddVec sets dst = x + y.
func AddVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if zRun[T](len(dst)) {
		addZ(p32(dst), p32(x), p32(y), len(dst))
		return
	}
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// SubVec sets dst = x - y.
func SubVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if zRun[T](len(dst)) {
		subZ(p32(dst), p32(x), p32(y), len(dst))
		return
	}
	for i := range dst {
		dst[i] = x[i] - y[i]
	}
}

// MulVec sets dst = x · y.
func MulVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if zRun[T](len(dst)) {
		mulZ(p32(dst), p32(x), p32(y), len(dst))
		return
	}
	for i := range dst {
		dst[i] = x[i] * y[i]
	}
}

// DivVec sets dst = x / y.
func DivVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if zRun[T](len(dst)) {
		divZ(p32(dst), p32(x), p32(y), len(dst))
		return
	}
	for i := range dst {
		dst[i] = x[i] / y[i]
	}
}

// AddVecScalar sets dst = x + y for one y.
func AddVecScalar[T Number](dst, x []T, y T) {
	x = x[:len(dst)]
	if zRun[T](len(dst)) {
		addScalarZ(p32(dst), p32(x), len(dst), f32(y))
		return
	}
	for i := range dst {
		dst[i] = x[i] + y
	}
}

// MulVecScalar sets dst = x · y for one y.
func MulVecScalar[T Number](dst, x []T, y T) {
	x = x[:len(dst)]
	if zRun[T](len(dst)) {
		mulScalarZ(p32(dst), p32(x), len(dst), f32(y))
		return
	}
	for i := range dst {
		dst[i] = x[i] * y
	}
}

// NegVec sets dst = -x.
func NegVec[T Number](dst, x []T) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] = -x[i]
	}
}

// ExpVecF32 sets dst = exp(x) in float32: with the AVX2/FMA kernel of
// exp_amd64.s where the CPU has it (within 2 ulp of math.Exp rounded to
// float32, see expAsm), else with math.Exp rounded once.
func ExpVecF32(dst, x []float32) {
	x = x[:len(dst)]
	if expAsm {
		expF32(dst, x)
		return
	}
	for i, v := range x {
		dst[i] = float32(math.Exp(float64(v)))
	}
}

// SqrtVec sets dst = √x, correctly rounded (as float32(math.Sqrt(float64(x)))
// for float32).
func SqrtVec[T Float](dst, x []T) {
	x = x[:len(dst)]
	if zRun[T](len(dst)) {
		sqrtZ(p32(dst), p32(x), len(dst))
		return
	}
	for i, v := range x {
		dst[i] = T(math.Sqrt(float64(v)))
	}
}

// AddcmulVec sets dst = a + v·b·c.
func AddcmulVec[T Float](dst, a, b, c []T, v T) {
	a, b, c = a[:len(dst)], b[:len(dst)], c[:len(dst)]
	if zRun[T](len(dst)) {
		addcmulZ(p32(dst), p32(a), p32(b), p32(c), len(dst), f32(v))
		return
	}
	for i := range dst {
		dst[i] = a[i] + v*b[i]*c[i]
	}
}

// AddcmulScalarVec sets dst = a + v·b·c for a scalar c: Addcmul with a
// broadcast third operand, as an in-place a += v·b (c = 1) runs it.
func AddcmulScalarVec[T Float](dst, a, b []T, c, v T) {
	a, b = a[:len(dst)], b[:len(dst)]
	if zRun[T](len(dst)) {
		addcmulScalarZ(p32(dst), p32(a), p32(b), len(dst), f32(v), f32(c))
		return
	}
	for i := range dst {
		dst[i] = a[i] + v*b[i]*c
	}
}

// AddcdivVec sets dst = a + v·b/c.
func AddcdivVec[T Float](dst, a, b, c []T, v T) {
	a, b, c = a[:len(dst)], b[:len(dst)], c[:len(dst)]
	if zRun[T](len(dst)) {
		addcdivZ(p32(dst), p32(a), p32(b), p32(c), len(dst), f32(v))
		return
	}
	for i := range dst {
		dst[i] = a[i] + v*b[i]/c[i]
	}
}

// ReLUVec sets dst = max(x, 0) with Go's max: a NaN stays NaN and −0
// becomes +0.
func ReLUVec[T Number](dst, x []T) {
	x = x[:len(dst)]
	if zRun[T](len(dst)) {
		reluZ(p32(dst), p32(x), len(dst), 0)
		return
	}
	for i, v := range x {
		dst[i] = max(v, 0)
	}
}

// ReLUBackwardVec sets dst = 0 where y <= 0, else x: the gradient x of
// ReLU at its output y (PyTorch's threshold_backward(x, y, 0); a NaN y
// passes x on).
func ReLUBackwardVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	if zRun[T](len(dst)) {
		reluBackwardZ(p32(dst), p32(x), p32(y), len(dst), 0)
		return
	}
	for i := range dst {
		if y[i] <= 0 {
			dst[i] = 0
		} else {
			dst[i] = x[i]
		}
	}
}

// ClampVec sets dst = min(max(x, lo), hi) with Go's min and max, which
// keep NaN and order signed zeros as math.Min and math.Max do.
func ClampVec[T Float](dst, x []T, lo, hi T) {
	x = x[:len(dst)]
	// The vector loop's max and min agree with Go's except on zeros of
	// either sign and NaN bounds.
	if zRun[T](len(dst)) && lo != 0 && hi != 0 && lo == lo && hi == hi {
		clampZ(p32(dst), p32(x), len(dst), f32(lo), f32(hi))
		return
	}
	for i, v := range x {
		dst[i] = min(max(v, lo), hi)
	}
}
