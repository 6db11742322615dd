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
// infinities and NaNs of both signs, writing values to contiguous and
// strided outputs and to none: float32 (the AVX-512 loops where the CPU
// has them, and the branch-free Go), float64 and int32.
func TestArgReduceRuns(t *testing.T) {
	defer func(z bool) { vecZ = z }(vecZ)
	for _, z := range []bool{vecZ, false} {
		vecZ = z
		t.Run(fmt.Sprintf("float32/vector_loops_%v", z), func(t *testing.T) {
			checkArgRuns(t, func(v float64) float32 { return float32(v) }, func(v float32) uint64 { return uint64(math.Float32bits(v)) })
		})
	}
	t.Run("float64", func(t *testing.T) { checkArgRuns(t, func(v float64) float64 { return v }, math.Float64bits) })
	t.Run("int32", func(t *testing.T) {
		checkArgRuns(t, func(v float64) int32 {
			if v != v || math.IsInf(v, 0) {
				return int32(math.Copysign(math.MaxInt32, v))
			}
			return int32(v * 2)
		}, func(v int32) uint64 { return uint64(v) })
	})
}

func checkArgRuns[T Number](t *testing.T, conv func(float64) T, bits func(T) uint64) {
	r := newRand(11)
	picks := []struct {
		name   string
		better func(v, best T) bool
		runs   func(best []T, at []int32, row []T, k int32)
	}{
		{"max", func(v, best T) bool { return v > best || (v != v && best == best) }, ArgMaxRuns[T]},
		{"min", func(v, best T) bool { return v < best || (v != v && best == best) }, ArgMinRuns[T]},
	}
	pool := []float64{-2, -1, math.Copysign(0, -1), 0, 1, 2, 0.5, -0.5, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()}
	for _, shape := range [][]int{{3, 4, 33}, {2, 5, 7, 9}, {65, 2}, {2, 3, 130}} {
		for _, kind := range []string{kContig, kPerm, kStep} {
			xl, size := makeLayout(r, shape, kind)
			x := make([]T, size)
			for i := range x {
				x[i] = conv(pool[r.IntN(len(pool)-2)])
				if r.IntN(23) == 0 {
					x[i] = conv(pool[len(pool)-1-r.IntN(2)])
				}
			}
			for dim := range shape {
				keep := slices.Clone(shape)
				keep[dim] = 1
				for _, p := range picks {
					for _, outKind := range []string{"none", kContig, kStep} {
						il := Contiguous(keep...)
						n := il.NumElements()
						var vl Layout
						var want, got []T
						if outKind != "none" {
							var vn int
							vl, vn = makeLayout(r, keep, outKind)
							want, got = make([]T, vn), make([]T, vn)
						}
						wantI, gotI := make([]int32, n), make([]int32, n)
						ArgReduce(p.better, want, vl, wantI, il, x, xl, dim)
						ArgReduceRuns(p.better, p.runs, got, vl, gotI, il, x, xl, dim)
						name := fmt.Sprintf("%v/%s/dim%d/%s/vals_%s", shape, kind, dim, p.name, outKind)
						if !slices.Equal(wantI, gotI) {
							t.Fatalf("%s: indices %v, want %v", name, gotI, wantI)
						}
						for i := range want {
							if bits(want[i]) != bits(got[i]) {
								t.Fatalf("%s: values %v, want %v", name, got, want)
							}
						}
					}
				}
			}
		}
	}
}
