package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// evalUnary runs expr over x (f32 -> f32, contiguous).
func evalUnary(t *testing.T, expr string, x []float32, p0 float64) []float32 {
	g := openGPU(t)
	l := wgsl.Contiguous(len(x))
	return bytesF32(runEW(t, g, expr, []string{wgsl.F32}, wgsl.F32, wgsl.ElementwiseArgs{Out: l, In: []wgsl.Layout{l}, P0: p0, Limits: limits(g)},
		make([]byte, 4*len(x)), [][]byte{f32bytes(x)}))
}

func TestErfAccuracyGPU(t *testing.T) {
	var x []float32
	for v := -6.0; v <= 6; v += 1e-3 {
		x = append(x, float32(v))
	}
	x = append(x, float32(math.Inf(1)), float32(math.Inf(-1)), 1e-30, -1e-30, 0)
	got := evalUnary(t, "erf_(x)", x, 0)
	maxAbs, maxRel := 0.0, 0.0
	for i, v := range x {
		w := math.Erf(float64(v))
		d := math.Abs(float64(got[i]) - w)
		maxAbs = math.Max(maxAbs, d)
		if w != 0 {
			maxRel = math.Max(maxRel, d/math.Abs(w))
		}
	}
	t.Logf("erf_: max abs error %.3g, max rel error %.3g", maxAbs, maxRel)
	if maxAbs > 1e-6 || maxRel > 1e-6 {
		t.Fatalf("erf_ error %.3g abs, %.3g rel exceeds 1e-6", maxAbs, maxRel)
	}
	if nan := evalUnary(t, "erf_(x)", []float32{float32(math.NaN())}, 0); !math.IsNaN(float64(nan[0])) {
		t.Fatalf("erf_(NaN) = %v", nan[0])
	}
}

func TestLog1pAccuracyGPU(t *testing.T) {
	var x []float32
	for e := -30.0; e <= 20; e += 0.25 {
		x = append(x, float32(math.Exp2(e)), -float32(math.Exp2(e-20)))
	}
	for v := -0.99; v < 3; v += 0.01 {
		x = append(x, float32(v))
	}
	got := evalUnary(t, "log1p(x)", x, 0)
	maxRel := 0.0
	for i, v := range x {
		w := math.Log1p(float64(v))
		if math.IsInf(w, 0) {
			continue
		}
		if e := math.Abs(float64(got[i])-w) / math.Abs(w); !(e <= maxRel) {
			if math.IsNaN(e) {
				t.Fatalf("log1p(%v) = %v, want %v", v, got[i], w)
			}
			maxRel = e
		}
	}
	t.Logf("log1p: max rel error %.3g", maxRel)
	if maxRel > 1e-6 {
		t.Fatalf("log1p rel error %.3g", maxRel)
	}
	sp := evalUnary(t, "log1p(x)", []float32{-1, float32(math.Inf(1))}, 0)
	if !math.IsInf(float64(sp[0]), -1) || !math.IsInf(float64(sp[1]), 1) {
		t.Fatalf("log1p(-1), log1p(inf) = %v", sp)
	}
}

func TestPowSpecialsGPU(t *testing.T) {
	g := openGPU(t)
	inf, nan := math.Inf(1), math.NaN()
	xs := []float64{-2, -0.5, -0, 0, 0.5, 1, 2, -1, inf, -inf, nan, -3, 10}
	ys := []float64{0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, inf, -inf, nan, 7, 65, 66, -65}
	var x, y []float32
	for _, a := range xs {
		for _, b := range ys {
			x, y = append(x, float32(a)), append(y, float32(b))
		}
	}
	l := wgsl.Contiguous(len(x))
	got := bytesF32(runEW(t, g, "pow_(x, y)", []string{wgsl.F32, wgsl.F32}, wgsl.F32, wgsl.ElementwiseArgs{Out: l, In: []wgsl.Layout{l, l}, Limits: limits(g)},
		make([]byte, 4*len(x)), [][]byte{f32bytes(x), f32bytes(y)}))
	for i := range x {
		w := float32(math.Pow(float64(x[i]), float64(y[i])))
		gv := got[i]
		ok := gv == w && math.Signbit(float64(gv)) == math.Signbit(float64(w)) ||
			math.IsNaN(float64(w)) && math.IsNaN(float64(gv)) ||
			math.Abs(float64(gv-w)) <= 2.5e-7*(1+math.Abs(float64(y[i])*math.Log2(math.Abs(float64(x[i])))))*math.Abs(float64(w))
		if !ok {
			t.Errorf("pow_(%v, %v) = %v, want %v", x[i], y[i], gv, w)
		}
	}
}

func TestLogTanhHelpersGPU(t *testing.T) {
	for _, c := range []struct {
		expr   string
		f      func(float64) float64
		lo, hi float64
	}{
		{"log_(x)", math.Log, 1e-30, 1e30},
		{"tanh_(x)", math.Tanh, 1e-20, 20},
	} {
		var x []float32
		for i := 0; i < 20000; i++ {
			v := float32(c.lo * math.Pow(c.hi/c.lo, float64(i)/20000))
			x = append(x, v, -v, float32(1+float64(i-10000)*1e-5))
		}
		got := evalUnary(t, c.expr, x, 0)
		maxRel := 0.0
		for i, v := range x {
			w := c.f(float64(v))
			if math.IsNaN(w) || w == 0 {
				continue
			}
			maxRel = math.Max(maxRel, math.Abs(float64(got[i])-w)/math.Abs(w))
		}
		t.Logf("%s: max rel error %.3g", c.expr, maxRel)
		if maxRel > 1e-6 {
			t.Fatalf("%s: rel error %.3g", c.expr, maxRel)
		}
	}
}
