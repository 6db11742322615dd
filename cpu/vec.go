package cpu

import "math"

// Vector functions: the fast paths an op table names for contiguous runs
// (Fn1.Vec, Fn2.Vec, Fn2.VecScalar). Each writes dst[i] for i in
// [0, len(dst)) from inputs at least that long; dst may be an input.
// Plain loops that the compiler keeps in registers, or assembly.

// AddVec sets dst = x + y.
func AddVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// SubVec sets dst = x - y.
func SubVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] - y[i]
	}
}

// MulVec sets dst = x · y.
func MulVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] * y[i]
	}
}

// DivVec sets dst = x / y.
func DivVec[T Number](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] / y[i]
	}
}

// AddVecScalar sets dst = x + y for one y.
func AddVecScalar[T Number](dst, x []T, y T) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y
	}
}

// MulVecScalar sets dst = x · y for one y.
func MulVecScalar[T Number](dst, x []T, y T) {
	x = x[:len(dst)]
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
