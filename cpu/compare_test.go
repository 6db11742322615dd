package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompareScalarLoopsMatchGo runs the six comparisons, against a
// scalar and of two runs, with the AVX-512 loops and with the Go loops,
// at lengths around the loops' steps, against zeros of both signs, NaN
// and finite values, and wants the same results.
func TestCompareScalarLoopsMatchGo(t *testing.T) {
	if !vecZ {
		t.Skip("no vector loops on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	fns := map[string]func(d []bool, x []float32, y float32){
		"Eq": EqScalarVec[float32], "Ne": NeScalarVec[float32], "Lt": LtScalarVec[float32],
		"Le": LeScalarVec[float32], "Gt": GtScalarVec[float32], "Ge": GeScalarVec[float32],
	}
	vfns := map[string]func(d []bool, x, y []float32){
		"Eq": EqVec[float32], "Ne": NeVec[float32], "Lt": LtVec[float32],
		"Le": LeVec[float32], "Gt": GtVec[float32], "Ge": GeVec[float32],
	}
	ys := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), 1, -0.25}
	for name, f := range fns {
		for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 130, 1000} {
			x := vecInputs(r, n)
			for i := range x {
				if r.IntN(4) == 0 {
					x[i] = ys[r.IntN(len(ys))] // hit equality
				}
			}
			for _, y := range ys {
				run := func(z bool, f func(d []bool)) []bool {
					defer func(on bool) { vecZ = on }(vecZ)
					vecZ = z
					d := make([]bool, n+16) // the tail must stay false
					f(d[:n])
					return d
				}
				scalar := func(d []bool) { f(d, x, y) }
				if got, want := run(true, scalar), run(false, scalar); !slices.Equal(got, want) {
					t.Errorf("%sScalarVec n=%d y=%v: the vector loop gives %v, the Go loop %v", name, n, y, got, want)
				}
				yv := vecInputs(r, n)
				for i := range yv {
					if r.IntN(3) == 0 {
						yv[i] = x[i] // hit equality
					}
				}
				vec := func(d []bool) { vfns[name](d, x, yv) }
				if got, want := run(true, vec), run(false, vec); !slices.Equal(got, want) {
					t.Errorf("%sVec n=%d: the vector loop gives %v, the Go loop %v", name, n, got, want)
				}
			}
		}
	}
}
