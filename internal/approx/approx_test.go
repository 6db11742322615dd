package approx

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestEqual(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tenth, fifth := 0.1, 0.2 // variables: constants would add exactly
	cases := []struct {
		tol       Tol
		got, want float64
		ok        bool
	}{
		{Exact, 1, 1, true},
		{Exact, 1, math.Nextafter(1, 2), false},
		{Exact, nan, nan, true},
		{Close32, nan, 1, false},
		{Close32, 1, nan, false},
		{Close32, inf, inf, true},
		{Close32, inf, -inf, false},
		{Close32, 1e30, inf, false},
		{Rel1(1e-3), 1.0019, 1, true}, // 1e-3·(1+1)
		{Rel1(1e-3), 1.0021, 1, false},
		{Tol{Rel: 1e-3, Scale: 1}, 1e-4, 0, true}, // relative to max(|want|, 1)
		{Tol{Rel: 1e-3, Scale: 1}, 1.1e-3, 0, false},
		{AbsRel(0, 1e-6), 1e6 + 0.9, 1e6, true},
		{AbsRel(0, 1e-6), 1e6 + 1.1, 1e6, false},
		{Float32(1), float64(float32(0.1)), 0.1, true},
		{Float64(1), tenth + fifth, 0.3, true},
		{Exact, tenth + fifth, 0.3, false},
	}
	for _, c := range cases {
		if got := c.tol.Equal(c.got, c.want); got != c.ok {
			t.Errorf("%v.Equal(%v, %v) = %v, want %v", c.tol, c.got, c.want, got, c.ok)
		}
	}
}

func TestReduce(t *testing.T) {
	tol := Rel1(1e-6).Reduce(100)
	if want := Rel1(1e-5); !Float64(4).Equal(tol.Abs, want.Abs) || !Float64(4).Equal(tol.Rel, want.Rel) {
		t.Errorf("Reduce(100) = %v, want abs and rel ×10", tol)
	}
	if Rel1(1e-6).Reduce(0) != Rel1(1e-6) {
		t.Error("Reduce(0) widened the tolerance")
	}
	// A float32 sum of n terms in another order stays within Reduce(n).
	for _, n := range []int{7, 65, 4097} {
		var fwd, bwd float32
		var ref float64
		for i := range n {
			v := float32(math.Sin(float64(i))) * 3
			fwd += v
			ref += float64(v)
		}
		for i := n - 1; i >= 0; i-- {
			bwd += float32(math.Sin(float64(i))) * 3
		}
		tol := Float32(4).WithScale(3).Reduce(n)
		if !tol.Equal(float64(fwd), ref) || !tol.Equal(float64(bwd), ref) {
			t.Errorf("n=%d: sums %v and %v are not within %v of %v", n, fwd, bwd, tol, ref)
		}
	}
}

func TestMismatch(t *testing.T) {
	if i := Mismatch([]float32{1, 2, 3}, []float32{1, 2, 3}, Exact); i != -1 {
		t.Errorf("equal slices: %d, want -1", i)
	}
	if i := Mismatch([]int32{1, 2, 4}, []int32{1, 2, 3}, Exact); i != 2 {
		t.Errorf("third element differs: %d, want 2", i)
	}
	if i := Mismatch([]float64{1}, []float64{1, 2}, Close64); i != 2 {
		t.Errorf("lengths differ: %d, want len(want) = 2", i)
	}
}

// recorder is a Reporter that keeps the messages.
type recorder struct{ errs, fatals []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, a...))
}

func TestCheckRequire(t *testing.T) {
	var r recorder
	if !Check(&r, "ok", []float64{1, 2}, []float64{1, 2 + 1e-14}, Close64) || len(r.errs) != 0 {
		t.Errorf("matching values reported: %v", r.errs)
	}
	if Check(&r, "x", []float64{1, 2.5}, []float64{1, 2}, Close64) || len(r.errs) != 1 || !strings.HasPrefix(r.errs[0], "x: [1] = 2.5, want 2") {
		t.Errorf("a mismatch reported %q", r.errs)
	}
	Require(&r, "y", []float32{1}, []float32{1, 2}, Exact)
	if len(r.fatals) != 1 || r.fatals[0] != "y: 1 elements, want 2" {
		t.Errorf("a length mismatch reported %q", r.fatals)
	}
}

func TestRatioAndMagnitude(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	if m := Magnitude([]float64{-3, nan, inf, 2}); m != 3 {
		t.Errorf("Magnitude = %v, want 3 (finite values only)", m)
	}
	r := Ratio([]float64{1.5, 2, nan}, []float64{1, 2, nan}, Abs(1))
	if r != 0.5 {
		t.Errorf("Ratio = %v, want 0.5", r)
	}
	if r := Ratio([]float64{1}, []float64{1, 2}, Abs(1)); r != 0 {
		t.Errorf("Ratio of different lengths = %v, want 0", r)
	}
	if r := Ratio([]float64{1.5}, []float64{1}, Exact); !math.IsInf(r, 1) {
		t.Errorf("Ratio of a mismatch under Exact = %v, want +Inf", r)
	}
}
