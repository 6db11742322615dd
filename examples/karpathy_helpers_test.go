package examples

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// randn returns n draws of N(0, scale²).
func randn(r *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64() * scale
	}
	return v
}

// leaf returns a float64 CPU leaf that requires grad.
func leaf(v []float64, shape ...int) *tensor.Tensor {
	return tensor.New(append([]float64(nil), v...), shape...).SetRequiresGrad(true)
}

// matVec returns A·x for row-major A (rows, len(x)).
func matVec(a []float64, rows int, x []float64) []float64 {
	out := make([]float64, rows)
	for i := range out {
		for k, v := range x {
			out[i] += a[i*len(x)+k] * v
		}
	}
	return out
}

// matTVec returns Aᵀ·y for row-major A (len(y), cols).
func matTVec(a []float64, cols int, y []float64) []float64 {
	out := make([]float64, cols)
	for i, v := range y {
		for k := range out {
			out[k] += a[i*cols+k] * v
		}
	}
	return out
}

// addOuter adds x·yᵀ to row-major A (len(x), len(y)).
func addOuter(a, x, y []float64) {
	for i, u := range x {
		for k, v := range y {
			a[i*len(y)+k] += u * v
		}
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// check compares got with want elementwise (|d| <= tol·(1 + |want|)) and
// returns the largest absolute difference.
func check(t *testing.T, what string, got *tensor.Tensor, want []float64, tol float64) float64 {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no gradient", what)
	}
	g := got.Float64s()
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	worst := 0.0
	for i := range g {
		d := math.Abs(g[i] - want[i])
		worst = max(worst, d)
		if !(d <= tol*(1+math.Abs(want[i]))) {
			t.Errorf("%s[%d] = %.17g, want %.17g", what, i, g[i], want[i])
			return worst
		}
	}
	return worst
}

// report logs the largest differences of one comparison.
type report map[string]float64

func (r report) log(t *testing.T) {
	t.Helper()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s %.1e", k, r[k]))
	}
	t.Logf("max |Tessera - float64 reference|: %s", strings.Join(parts, ", "))
}
