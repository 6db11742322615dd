package tensor

import (
	"math"

	"github.com/tessera-ml/tessera/cpu"
)

// loopMath is floatMath with a loop for contiguous runs: loop(p)
// computes what g(p) computes, element for element, in float64 and
// rounded once, without a call per element. One instantiation per float
// type; the Int32 kernels of numberMath and wrappingMath stay as they
// are.
func loopMath(k cpuKernels, g func(p [2]float64) func(float64) float64, loop32 func(p [2]float64) func(dst, x []float32), loop64 func(p [2]float64) func(dst, x []float64)) cpuKernels {
	k[Float32] = k1(withLoop(viaFloat64[float32](g), loop32))
	k[Float64] = k1(withLoop(viaFloat64[float64](g), loop64))
	return k
}

func withLoop[T cpu.Float](f func(p [2]float64) cpu.Fn1[T, T], loop func(p [2]float64) func(dst, x []T)) func(p [2]float64) cpu.Fn1[T, T] {
	return func(p [2]float64) cpu.Fn1[T, T] {
		fn := f(p)
		fn.Vec = loop(p)
		return fn
	}
}

// The loops of loopMath.

func sqrtLoop[T cpu.Float]([2]float64) func(dst, x []T) { return cpu.SqrtVec[T] }

func tanhLoop[T cpu.Float]([2]float64) func(dst, x []T) {
	return func(dst, x []T) {
		x = x[:len(dst)]
		for i, v := range x {
			dst[i] = T(math.Tanh(float64(v)))
		}
	}
}

// clampLoop is clamp with Go's min and max, which keep NaN and order
// signed zeros as math.Min and math.Max do.
func clampLoop[T cpu.Float](p [2]float64) func(dst, x []T) {
	lo, hi := p[0], p[1]
	if float64(T(lo)) == lo && float64(T(hi)) == hi { // min and max are exact: computing in T gives the same values
		return func(dst, x []T) { cpu.ClampVec(dst, x, T(lo), T(hi)) }
	}
	return func(dst, x []T) {
		x = x[:len(dst)]
		for i, v := range x {
			dst[i] = T(min(max(float64(v), lo), hi))
		}
	}
}

// addScalarLoop and mulScalarLoop compute in T when a is a T value:
// one rounding of the exact result either way (float32 sums and
// products rounded from float64 are correctly rounded).
func addScalarLoop[T cpu.Float](p [2]float64) func(dst, x []T) {
	a := p[0]
	if float64(T(a)) == a {
		return func(dst, x []T) { cpu.AddVecScalar(dst, x, T(a)) }
	}
	return func(dst, x []T) {
		x = x[:len(dst)]
		for i, v := range x {
			dst[i] = T(float64(v) + a)
		}
	}
}

func mulScalarLoop[T cpu.Float](p [2]float64) func(dst, x []T) {
	a := p[0]
	if float64(T(a)) == a {
		return func(dst, x []T) { cpu.MulVecScalar(dst, x, T(a)) }
	}
	return func(dst, x []T) {
		x = x[:len(dst)]
		for i, v := range x {
			dst[i] = T(float64(v) * a)
		}
	}
}
