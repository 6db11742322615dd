package cpu

import "unsafe"

// The comparisons of a run against one value (a ReLU's mask x > 0):
// d = x <op> y, as Go compares (false against NaN but for ≠), with the
// AVX-512 loops of vec_amd64.s for float32 and the operator inline
// otherwise (a call per element costs several times over).

// EqScalarVec sets d = x == y.
func EqScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		eqScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v == y
	}
}

// NeScalarVec sets d = x != y.
func NeScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		neScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v != y
	}
}

// LtScalarVec sets d = x < y.
func LtScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		ltScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v < y
	}
}

// LeScalarVec sets d = x <= y.
func LeScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		leScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v <= y
	}
}

// GtScalarVec sets d = x > y.
func GtScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		gtScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v > y
	}
}

// GeScalarVec sets d = x >= y.
func GeScalarVec[T Number](d []bool, x []T, y T) {
	if zRun[T](len(d)) {
		geScalarZ(pBool(d), p32(x[:len(d)]), len(d), f32(y))
		return
	}
	for i, v := range x[:len(d)] {
		d[i] = v >= y
	}
}

// pBool returns the address of d[0] as a byte pointer (Go stores a bool
// as one byte, 0 or 1).
func pBool(d []bool) *uint8 { return (*uint8)(unsafe.Pointer(unsafe.SliceData(d))) }
