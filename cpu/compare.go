package cpu

import "unsafe"

// The comparisons of a run against one value (a ReLU's mask x > 0) and
// of two runs: d = x <op> y, as Go compares (false against NaN but for
// ≠), with the AVX-512 loops of vec_amd64.s for float32 and the operator
// inline otherwise (a call per element costs several times over).

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

// EqVec sets d = x == y elementwise.
func EqVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		eqZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] == y[i]
	}
}

// NeVec sets d = x != y elementwise.
func NeVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		neZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] != y[i]
	}
}

// LtVec sets d = x < y elementwise.
func LtVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		ltZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] < y[i]
	}
}

// LeVec sets d = x <= y elementwise.
func LeVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		leZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] <= y[i]
	}
}

// GtVec sets d = x > y elementwise.
func GtVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		gtZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] > y[i]
	}
}

// GeVec sets d = x >= y elementwise.
func GeVec[T Number](d []bool, x, y []T) {
	x, y = x[:len(d)], y[:len(d)]
	if zRun[T](len(d)) {
		geZ(pBool(d), p32(x), p32(y), len(d))
		return
	}
	for i := range d {
		d[i] = x[i] >= y[i]
	}
}

// pBool returns the address of d[0] as a byte pointer (Go stores a bool
// as one byte, 0 or 1).
func pBool(d []bool) *uint8 { return (*uint8)(unsafe.Pointer(unsafe.SliceData(d))) }
