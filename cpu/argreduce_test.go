package cpu

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestArgReduceRuns checks that the runs of torch's max and min give
// ArgReduce's results (the first best element, NaN beating every number)
// over every dim of inputs of each layout, with ties, signed zeros,
// infinities and NaNs, writing
// values to contiguous and strided outputs and to none.
func TestArgReduceRuns(t *testing.T) {
	r := newRand(11)
	picks := []struct {
		name   string
		better func(v, best float32) bool
		runs   func(best []float32, at []int32, row []float32, k int32)
	}{
		{"max", func(v, best float32) bool { return v > best || (v != v && best == best) }, ArgMaxRuns[float32]},
		{"min", func(v, best float32) bool { return v < best || (v != v && best == best) }, ArgMinRuns[float32]},
	}
	for _, shape := range [][]int{{3, 4, 33}, {2, 5, 7, 9}, {65, 2}} {
		for _, kind := range []string{kContig, kPerm, kStep} {
			xl, size := makeLayout(r, shape, kind)
			x := make([]float32, size)
			// Ties, signed zeros, infinities and NaNs of both signs.
			pool := []float32{-2, -1, float32(math.Copysign(0, -1)), 0, 1, 2, 0.5, -0.5,
				float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN())}
			for i := range x {
				x[i] = pool[r.IntN(len(pool)-2)]
				if r.IntN(23) == 0 {
					x[i] = pool[len(pool)-1-r.IntN(2)]
				}
			}
			for dim := range shape {
				keep := slices.Clone(shape)
				keep[dim] = 1
				for _, p := range picks {
					for _, outKind := range []string{"none", kContig, kStep} {
						t.Run(fmt.Sprintf("%v/%s/dim%d/%s/vals_%s", shape, kind, dim, p.name, outKind), func(t *testing.T) {
							il := Contiguous(keep...)
							n := il.NumElements()
							var vl Layout
							var want, got []float32
							if outKind != "none" {
								var vn int
								vl, vn = makeLayout(r, keep, outKind)
								want, got = make([]float32, vn), make([]float32, vn)
							}
							wantI, gotI := make([]int32, n), make([]int32, n)
							ArgReduce(p.better, want, vl, wantI, il, x, xl, dim)
							ArgReduceRuns(p.better, p.runs, got, vl, gotI, il, x, xl, dim)
							if !slices.Equal(wantI, gotI) {
								t.Fatalf("indices %v, want %v", gotI, wantI)
							}
							for i := range want {
								if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
									t.Fatalf("values %v, want %v", got, want)
								}
							}
						})
					}
				}
			}
		}
	}
}
