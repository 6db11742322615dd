package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestMatMulEpilogueGPU stores relu(a·b + bias) with bias broadcast
// along rows, and select(0, a·b·s, mask) with a bool mask, through the
// tiled and naive kernels, with one range of K and with several; and
// updates out in place as out + p0·(a·b).
func TestMatMulEpilogueGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(21)
	const bt, m, k, n = 2, 33, 65, 7
	out, a, b := wgsl.Contiguous(bt, m, n), rowMajor(bt, m, k, 0, false), colMajor(bt, k, n, 1, true)
	av, bv := r.f32s(bufferSize(a), -1, 1), r.f32s(bufferSize(b), -1, 1)
	prod := make([]float32, bt*m*n)
	cpu.MatMul(prod, cl(out), av, cl(a), bv, cl(b))
	bias := r.f32s(n, -1, 1)
	mask := make([]bool, bt*m*n)
	for i := range mask {
		mask[i] = i%3 != 0
	}
	biasL := wgsl.Layout{Shape: []int{bt, m, n}, Strides: []int{0, 0, 1}}
	relu := &wgsl.MatMulEpilogue{
		Nodes:   []wgsl.FusedNode{{Expr: "x + y", Args: []int{-2, -1}, Out: wgsl.F32}, {Expr: "max(x, 0.0)", Args: []int{0}, Out: wgsl.F32}},
		InTypes: []string{wgsl.F32}, In: []wgsl.Layout{biasL},
	}
	masked := &wgsl.MatMulEpilogue{
		Nodes:   []wgsl.FusedNode{{Expr: "x * p0", Args: []int{-2}, Out: wgsl.F32, P0: 0.5}, {Expr: "select(0.0, y, x)", Args: []int{-1, 0}, Out: wgsl.F32}},
		InTypes: []string{wgsl.Bool}, In: []wgsl.Layout{out},
	}
	wantRelu, wantMask := make([]float32, len(prod)), make([]float32, len(prod))
	for i, p := range prod {
		wantRelu[i] = float32(math.Max(float64(p+bias[i%n]), 0))
		if mask[i] {
			wantMask[i] = p * 0.5
		}
	}
	tol := approx.AbsRel(2e-6*math.Sqrt(k+1), 0)
	small := limits(g)
	small.MaxLoopTrips = 5 // several ranges of K
	naive := limits(g)
	naive.MaxWorkgroupStorage = 4 << 10 // MatMulFused falls back to the naive kernel
	for name, lim := range map[string]wgsl.Limits{"tiled": limits(g), "k-ranges": small, "naive": naive} {
		p, err := wgsl.MatMulFused(out, a, b, relu, lim)
		if err != nil {
			t.Fatal(err)
		}
		bs := bufs{"out": alloc(t, g, 4*len(prod)), "a": upload(t, g, f32bytes(av)), "b": upload(t, g, f32bytes(bv)), "x": upload(t, g, f32bytes(bias))}
		runPlan(t, g, p, bs)
		approx.Require(t, name+"/relu", readF32(t, g, bs["out"]), wantRelu, tol)
		p, err = wgsl.MatMulFused(out, a, b, masked, lim)
		if err != nil {
			t.Fatal(err)
		}
		bs["x"] = upload(t, g, boolbytes(mask))
		runPlan(t, g, p, bs)
		approx.Require(t, name+"/mask", readF32(t, g, bs["out"]), wantMask, tol)
	}
	// In place: out = out + 0.5·(a·b), out read through its own binding.
	acc := &wgsl.MatMulEpilogue{
		Nodes:   []wgsl.FusedNode{{Expr: "x + p0 * y", Args: []int{-1, -2}, Out: wgsl.F32, P0: 0.5}},
		InTypes: []string{wgsl.F32}, In: []wgsl.Layout{out}, Alias: []bool{true},
	}
	start := r.f32s(len(prod), -1, 1)
	want := make([]float32, len(prod))
	for i := range want {
		want[i] = start[i] + 0.5*prod[i]
	}
	p, err := wgsl.MatMulFused(out, a, b, acc, limits(g))
	if err != nil {
		t.Fatal(err)
	}
	bs := bufs{"out": upload(t, g, f32bytes(start)), "a": upload(t, g, f32bytes(av)), "b": upload(t, g, f32bytes(bv))}
	runPlan(t, g, p, bs)
	approx.Require(t, "in place", readF32(t, g, bs["out"]), want, tol)
	if _, err := wgsl.MatMulFused(out, a, b, acc, small); err == nil {
		t.Error("an in-place epilogue over several ranges of K: no error")
	}
}
