// Package approx is the one tolerance model of Tessera's tests: how
// closely a computed value must match its reference. It is in the spirit
// of the standard library's math tests (close, veryclose): a bound
// relative to the magnitude of the expected value, with an absolute floor
// near zero, in units of the dtype's rounding (Float32, Float64) and
// widened by the length of a reduction (Reduce).
//
// NaN matches NaN and an infinity matches only itself; every other pair
// matches when
//
//	|got - want| <= Abs + Rel·max(|want|, Scale)
//
// It imports nothing from the module, so that the leaves' tests (cpu,
// device, kernels/wgsl) can use it as well as tensor's; a CI check
// (ci/dupcheck_test.go) fails when a comparison helper is defined outside
// it.
package approx

import (
	"fmt"
	"math"
)

// Unit roundoffs: half the distance from 1 to the next larger value.
const (
	Eps32 = 0x1p-24
	Eps64 = 0x1p-53
)

// A Tol bounds the difference between a result and its reference:
// |got - want| <= Abs + Rel·max(|want|, Scale). The zero Tol asks for
// exact equality.
type Tol struct {
	Abs   float64 // floor, for values near zero
	Rel   float64 // relative to the magnitude of want
	Scale float64 // the smallest magnitude Rel applies to (the scale of the operands)
}

// Exact asks for bit-for-bit equality (NaN still matches NaN).
var Exact = Tol{}

// Tolerances in the spirit of the math package's tests.
var (
	// VeryClose64 and Close64: a few and a few tens of float64 roundings.
	VeryClose64 = Float64(8)
	Close64     = Float64(100)
	// VeryClose32 and Close32: a few and about a hundred float32
	// roundings, relative to max(|want|, 1).
	VeryClose32 = Float32(8)
	Close32     = Tol{Abs: 1e-5, Rel: 1e-4}
)

// Float32 returns a tolerance of k float32 roundings relative to
// max(|want|, 1).
func Float32(k float64) Tol { return Tol{Rel: k * Eps32, Scale: 1} }

// Float64 returns a tolerance of k float64 roundings relative to
// max(|want|, 1).
func Float64(k float64) Tol { return Tol{Rel: k * Eps64, Scale: 1} }

// Abs returns the absolute tolerance Tol{Abs: abs}.
func Abs(abs float64) Tol { return Tol{Abs: abs} }

// Rel1 returns tol relative to 1+|want|: Tol{Abs: tol, Rel: tol}.
func Rel1(tol float64) Tol { return Tol{Abs: tol, Rel: tol} }

// AbsRel returns Tol{Abs: atol, Rel: rtol}, PyTorch's allclose form.
func AbsRel(atol, rtol float64) Tol { return Tol{Abs: atol, Rel: rtol} }

// Reduce widens t for a result accumulated from n terms in an order that
// may differ from the reference's: rounding errors of such a sum grow
// like √n. n < 1 counts as 1.
func (t Tol) Reduce(n int) Tol {
	f := math.Sqrt(float64(max(n, 1)))
	return Tol{Abs: t.Abs * f, Rel: t.Rel * f, Scale: t.Scale}
}

// Times returns t with Abs and Rel multiplied by k.
func (t Tol) Times(k float64) Tol { return Tol{Abs: t.Abs * k, Rel: t.Rel * k, Scale: t.Scale} }

// WithScale returns t relative to at least scale (the magnitude of the
// operands, for results that cancel).
func (t Tol) WithScale(scale float64) Tol { t.Scale = scale; return t }

// Bound returns the largest difference t allows from want.
func (t Tol) Bound(want float64) float64 { return t.Abs + t.Rel*max(math.Abs(want), t.Scale) }

// Equal reports whether got matches want within t.
func (t Tol) Equal(got, want float64) bool {
	switch {
	case got == want:
		return true
	case math.IsNaN(got) || math.IsNaN(want):
		return math.IsNaN(got) && math.IsNaN(want)
	case math.IsInf(got, 0) || math.IsInf(want, 0):
		return false
	}
	return math.Abs(got-want) <= t.Bound(want)
}

func (t Tol) String() string {
	switch {
	case t == Exact:
		return "exact"
	case t.Scale == 0:
		return fmt.Sprintf("abs %.3g + rel %.3g", t.Abs, t.Rel)
	}
	return fmt.Sprintf("abs %.3g + rel %.3g·max(|want|, %.3g)", t.Abs, t.Rel, t.Scale)
}

// Number is an element type the comparisons accept.
type Number interface {
	~float32 | ~float64 | ~int32 | ~int64 | ~int | ~uint32 | ~uint8
}

// Mismatch returns the index of the first element where got and want do
// not match within t, -1 when every element matches, and len(want) when
// the lengths differ.
func Mismatch[T Number](got, want []T, t Tol) int {
	if len(got) != len(want) {
		return len(want)
	}
	for i := range want {
		if !t.Equal(float64(got[i]), float64(want[i])) {
			return i
		}
	}
	return -1
}

// Ratio returns how much of t the comparison of got with want used: the
// largest |got - want| / Bound(want) over the elements where want and
// got are finite (0 when there are none, or the lengths differ).
func Ratio[T Number](got, want []T, t Tol) float64 {
	if len(got) != len(want) {
		return 0
	}
	worst := 0.0
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
			continue
		}
		if b := t.Bound(w); b > 0 {
			worst = max(worst, math.Abs(g-w)/b)
		} else if g != w {
			worst = math.Inf(1)
		}
	}
	return worst
}

// Magnitude returns the largest finite |v| of vals, 0 when there is
// none: the scale of a result whose elements cancel, for WithScale or an
// absolute floor.
func Magnitude[T Number](vals []T) float64 {
	m := 0.0
	for _, v := range vals {
		if f := math.Abs(float64(v)); !math.IsInf(f, 0) && !math.IsNaN(f) {
			m = max(m, f)
		}
	}
	return m
}

// Diff describes how got differs from want within t ("" when it does
// not): the lengths, or the first mismatching element.
func Diff[T Number](got, want []T, t Tol) string {
	i := Mismatch(got, want, t)
	switch {
	case i < 0:
		return ""
	case len(got) != len(want):
		return fmt.Sprintf("%d elements, want %d", len(got), len(want))
	}
	return fmt.Sprintf("[%d] = %.10g, want %.10g (difference %.3g, tolerance %v; %d elements)",
		i, float64(got[i]), float64(want[i]), math.Abs(float64(got[i])-float64(want[i])), t, len(want))
}

// CheckAny is Check for host slices of one of the element types tensors
// read back as ([]float32, []float64, []int32, []bool; bools exactly). It
// stops the test when got and want have different types.
func CheckAny(r Reporter, what string, got, want any, t Tol) bool {
	r.Helper()
	switch w := want.(type) {
	case []float32:
		if g, ok := got.([]float32); ok {
			return Check(r, what, g, w, t)
		}
	case []float64:
		if g, ok := got.([]float64); ok {
			return Check(r, what, g, w, t)
		}
	case []int32:
		if g, ok := got.([]int32); ok {
			return Check(r, what, g, w, Exact)
		}
	case []bool:
		if g, ok := got.([]bool); ok {
			return Check(r, what, bits(g), bits(w), Exact)
		}
	}
	r.Fatalf("%s: got %T, want %T", what, got, want)
	return false
}

func bits(b []bool) []uint8 {
	out := make([]uint8, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// A Reporter is the part of testing.TB the checks use.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Check reports an error on r when got differs from want within t, and
// returns whether they match.
func Check[T Number](r Reporter, what string, got, want []T, t Tol) bool {
	r.Helper()
	if d := Diff(got, want, t); d != "" {
		r.Errorf("%s: %s", what, d)
		return false
	}
	return true
}

// Require is Check, but stops the test on a mismatch.
func Require[T Number](r Reporter, what string, got, want []T, t Tol) {
	r.Helper()
	if d := Diff(got, want, t); d != "" {
		r.Fatalf("%s: %s", what, d)
	}
}
