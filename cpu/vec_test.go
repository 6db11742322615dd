package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// vecInputs returns n float32 values with the awkward ones mixed in:
// zeros of both signs, infinities, NaN, subnormals and huge values.
func vecInputs(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, math.MaxFloat32, 1}
	x := make([]float32, n)
	for i := range x {
		if r.IntN(8) == 0 {
			x[i] = special[r.IntN(len(special))]
		} else {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
		}
	}
	return x
}

// sameBits reports whether a and b hold the same values, NaNs counting
// as equal to NaNs.
func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// TestVecLoopsMatchGo runs every float32 vector function with the
// assembly loops (vecZ) and with the Go loops, at lengths around the
// loops' steps of 16 and 64 and in place, and wants the same bits.
func TestVecLoopsMatchGo(t *testing.T) {
	if !vecZ {
		t.Skip("no vector loops on this CPU")
	}
	r := rand.New(rand.NewPCG(1, 2))
	fns := map[string]func(d, a, b, c []float32){
		"AddVec":           func(d, a, b, _ []float32) { AddVec(d, a, b) },
		"SubVec":           func(d, a, b, _ []float32) { SubVec(d, a, b) },
		"MulVec":           func(d, a, b, _ []float32) { MulVec(d, a, b) },
		"DivVec":           func(d, a, b, _ []float32) { DivVec(d, a, b) },
		"AddVecScalar":     func(d, a, b, _ []float32) { AddVecScalar(d, a, b[0]) },
		"MulVecScalar":     func(d, a, b, _ []float32) { MulVecScalar(d, a, b[0]) },
		"SqrtVec":          func(d, a, _, _ []float32) { SqrtVec(d, a) },
		"AddcmulVec":       func(d, a, b, c []float32) { AddcmulVec(d, a, b, c, 0.37) },
		"AddcdivVec":       func(d, a, b, c []float32) { AddcdivVec(d, a, b, c, -1.9) },
		"AddcmulScalarVec": func(d, a, b, c []float32) { AddcmulScalarVec(d, a, b, c[0], 0.37) },
		"AddcmulScalar1":   func(d, a, b, _ []float32) { AddcmulScalarVec(d, a, b, 1, -0.01) },
		"ClampVec":         func(d, a, _, _ []float32) { ClampVec(d, a, -0.5, 2) },
		"ClampVec0":        func(d, a, _, _ []float32) { ClampVec(d, a, 0, 2) },
		"ClampVecLoHi":     func(d, a, _, _ []float32) { ClampVec(d, a, 3, -1) },
		"ReLUVec":          func(d, a, _, _ []float32) { ReLUVec(d, a) },
		"ReLUBackwardVec":  func(d, a, b, _ []float32) { ReLUBackwardVec(d, a, b) },
		"selectWords":      func(d, a, b, c []float32) { selectWords(as32(d), condBytes(c), as32(a), as32(b), 1) },
		"selectWords1":     func(d, a, b, c []float32) { selectWords(as32(d), condBytes(c), as32(a), as32(b), 0) },
	}
	for name, f := range fns {
		for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 130, 1000} {
			a, b, c := vecInputs(r, n+1), vecInputs(r, n+1), vecInputs(r, n+1)
			run := func(z, inPlace bool) []float32 {
				defer func(on bool) { vecZ = on }(vecZ)
				vecZ = z
				d := make([]float32, n)
				if inPlace {
					copy(d, a)
					f(d, d, b, c)
				} else {
					f(d, a, b, c)
				}
				return d
			}
			for _, inPlace := range []bool{false, true} {
				if got, want := run(true, inPlace), run(false, inPlace); !sameBits(got, want) {
					t.Errorf("%s n=%d in place %v: the vector loop gives %v, the Go loop %v", name, n, inPlace, got, want)
				}
			}
		}
	}
}

// condBytes is a select's condition from c: 1 where c is positive,
// else 0.
func condBytes(c []float32) []uint8 {
	m := make([]uint8, len(c))
	for i, v := range c {
		if v > 0 {
			m[i] = 1
		}
	}
	return m
}

// TestVecLoopsStayInBounds checks that the masked tails write nothing
// past n.
func TestVecLoopsStayInBounds(t *testing.T) {
	for _, n := range []int{1, 7, 16, 70} {
		d := make([]float32, n+16)
		for i := range d {
			d[i] = -7
		}
		x := make([]float32, n+16)
		AddVec(d[:n], x, x)
		for i := n; i < len(d); i++ {
			if d[i] != -7 {
				t.Fatalf("n=%d: element %d past the end was written", n, i)
			}
		}
	}
}
