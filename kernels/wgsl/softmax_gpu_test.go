package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

type lineCase struct {
	name string
	x    wgsl.Layout
	size int
	dim  int
}

func lineCases() []lineCase {
	return []lineCase{
		{"last-7x33", wgsl.Contiguous(7, 33), 7 * 33, 1},
		{"last-5x65", wgsl.Contiguous(5, 65), 5 * 65, 1},
		{"mid-3x65x7", wgsl.Contiguous(3, 65, 7), 3 * 65 * 7, 1},
		{"first-65x33", wgsl.Contiguous(65, 33), 65 * 33, 0},
		{"transposed", wgsl.Layout{Shape: []int{33, 65}, Strides: []int{1, 33}, Offset: 2}, 65*33 + 2, 1},
		{"long-3x3000", wgsl.Contiguous(3, 3000), 9000, 1},
		{"side-by-side-40x2100", wgsl.Contiguous(40, 2100), 84000, 0},
		{"0-d", wgsl.Layout{Offset: 1}, 2, 0},
	}
}

func TestSoftmaxGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(9)
	for _, c := range lineCases() {
		out := wgsl.Contiguous(c.x.Shape...)
		n := layout.Numel(c.x.Shape)
		for _, log := range []bool{false, true} {
			x := r.f32s(c.size, -8, 8)
			if c.size > 100 {
				x[c.x.Offset] = float32(math.NaN())
				x[c.x.Offset+1] = float32(math.Inf(-1))
				x[c.size-1] = float32(math.NaN())
			}
			k, err := wgsl.Softmax(log, wgsl.LineArgs{Out: out, X: c.x, Dim: c.dim, Limits: limits(g)})
			if err != nil {
				t.Fatal(err)
			}
			b := bufs{"out": alloc(t, g, 4*n), "x": upload(t, g, f32bytes(x))}
			runPlan(t, g, k, b)
			want := make([]float32, n)
			cpu.Softmax(log, want, cl(out), x, cl(c.x), c.dim)
			approx.Require(t, c.name, readF32(t, g, b["out"]), want, approx.AbsRel(2e-6, 2e-6))
		}
	}
	// Special lines: all -inf, a +inf, in place.
	x := []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), 1, float32(math.Inf(1)), 2, 0, 1, 2, 0, -9, -10}
	l := wgsl.Contiguous(4, 3)
	for _, log := range []bool{false, true} {
		k, err := wgsl.Softmax(log, wgsl.LineArgs{Out: l, X: l, Dim: 1, InPlace: true, Limits: limits(g)})
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": upload(t, g, f32bytes(x))}
		runPlan(t, g, k, b)
		want := append([]float32(nil), x...)
		cpu.Softmax(log, want, cl(l), want, cl(l), 1)
		approx.Require(t, "special in place", readF32(t, g, b["out"]), want, approx.AbsRel(1e-6, 1e-6))
	}
}

func TestCumSumGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(10)
	for _, c := range lineCases() {
		out := wgsl.Layout{Shape: c.x.Shape, Strides: wgsl.Contiguous(c.x.Shape...).Strides, Offset: 1}
		n := layout.Numel(c.x.Shape) + 1
		x := r.f32s(c.size, -1, 1)
		k, err := wgsl.CumSum(wgsl.F32, wgsl.LineArgs{Out: out, X: c.x, Dim: c.dim, Limits: limits(g)})
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": upload(t, g, f32bytes(make([]float32, n))), "x": upload(t, g, f32bytes(x))}
		runPlan(t, g, k, b)
		want := make([]float32, n)
		cpu.CumSum(want, cl(out), x, cl(c.x), c.dim)
		approx.Require(t, c.name, readF32(t, g, b["out"]), want, approx.AbsRel(2e-6*math.Sqrt(float64(c.size)), 0))

		xi := r.i32s(c.size, -1<<30, 1<<30)
		k, err = wgsl.CumSum(wgsl.I32, wgsl.LineArgs{Out: out, X: c.x, Dim: c.dim, Limits: limits(g)})
		if err != nil {
			t.Fatal(err)
		}
		b = bufs{"out": upload(t, g, i32bytes(make([]int32, n))), "x": upload(t, g, i32bytes(xi))}
		runPlan(t, g, k, b)
		wantI := make([]int32, n)
		cpu.CumSum(wantI, cl(out), xi, cl(c.x), c.dim)
		approx.Require(t, c.name+"/i32", readI32(t, g, b["out"]), wantI, approx.Exact)
	}
}
