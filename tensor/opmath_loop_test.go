package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
)

// TestUnaryLoopsMatchElements checks, for every one-input float kernel
// of the op table that has a loop for contiguous runs (Fn1.Vec), that
// the loop gives the element function's results bit for bit (any NaN
// for a NaN), on special values and random ones of several scales. Exp
// is the exception: its AVX2 loop is documented within 2 ulp
// (cpu.ExpVecF32), and is checked to that bound.
func TestUnaryLoopsMatchElements(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 5, -5, 1e-8, 3e38, -3e38,
		math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat32, 1 - 1e-7}
	for range 200 {
		xs = append(xs, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(13)-6)))
	}
	params := [][2]float64{{0, 0}, {-5, 5}, {0, math.Inf(1)}, {1e-8, 0}, {-0.01, 0}, {0.1, 3}}
	checked := 0
	for op := range numOps {
		info := opTable[op]
		if info.fam != famUnary {
			continue
		}
		for _, p := range params {
			if k, ok := info.cpu[Float32].(fn1[float32, float32]); ok {
				checked += checkLoop(t, op, p, k(p), xs, func(v float64) float32 { return float32(v) })
			}
			if k, ok := info.cpu[Float64].(fn1[float64, float64]); ok {
				checked += checkLoop(t, op, p, k(p), xs, func(v float64) float64 { return v })
			}
		}
	}
	if checked == 0 {
		t.Fatal("no unary kernel has a loop")
	}
}

func checkLoop[T cpu.Float](t *testing.T, op Op, p [2]float64, f cpu.Fn1[T, T], xs []float64, conv func(float64) T) int {
	t.Helper()
	if f.Vec == nil {
		return 0
	}
	in := make([]T, len(xs))
	for i, v := range xs {
		in[i] = conv(v)
	}
	got := make([]T, len(in))
	f.Vec(got, in)
	for i, x := range in {
		want := f.F(x)
		g := got[i]
		if g != g && want != want {
			continue
		}
		if op == OpExp && ulps[T](float64(g), float64(want)) <= 2 {
			continue
		}
		if g != want || math.Signbit(float64(g)) != math.Signbit(float64(want)) {
			t.Errorf("%v %v p=%v at x=%v: loop %v, element %v", op, *new(T), p, x, g, want)
		}
	}
	return 1
}

// ulps is the distance from a to b in steps of T at b (∞ when either is
// not finite and they differ).
func ulps[T cpu.Float](a, b float64) float64 {
	if a == b {
		return 0
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || a != a || b != b {
		return math.Inf(1)
	}
	step := math.Nextafter(b, math.Inf(1)) - b
	if _, f32 := any(T(0)).(float32); f32 {
		step = float64(math.Nextafter32(float32(b), float32(math.Inf(1)))) - b
	}
	return math.Abs(a-b) / step
}
