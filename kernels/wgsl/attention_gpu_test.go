package wgsl_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestAttentionGPU runs the attention plans on ragged segments (1, 7, 33
// rows and an empty one), causal and not, at operand offsets, against
// package cpu, with the default loop budget (one dispatch per pass) and
// with budgets low enough that long rows take several chunks, which
// must compose to the same result.
func TestAttentionGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(71)
	lens, h, d := []int{1, 7, 0, 33}, 2, 3
	seg := []int32{}
	n := 0
	for _, l := range lens {
		for range l {
			seg = append(seg, int32(n), int32(n+l))
		}
		n += l
	}
	m := n * h * d
	const off = 5 // every operand starts 5 elements into its buffer
	q, k, v, gr := r.f32s(off+m, -2, 2), r.f32s(off+m, -2, 2), r.f32s(off+m, -2, 2), r.f32s(off+m, -1, 1)
	for _, causal := range []bool{false, true} {
		a := cpu.Attention{N: n, H: h, D: d, Seg: seg, Scale: 0.6, Causal: causal}
		out, lse := make([]float32, m), make([]float32, n*h)
		cpu.AttentionForward(out, lse, q[off:], k[off:], v[off:], a)
		dq, dk, dv := make([]float32, m), make([]float32, m), make([]float32, m)
		cpu.AttentionBackward(dq, dk, dv, q[off:], k[off:], v[off:], out, lse, gr[off:], a)
		for _, trips := range []int{0, 200, 80} {
			lim := limits(g)
			lim.MaxLoopTrips = trips
			name := fmt.Sprintf("causal %v, %d trips", causal, trips)
			s := wgsl.AttentionShape{N: n, H: h, D: d, MaxSpan: 33, Scale: 0.6, Causal: causal,
				Q: off, K: off, V: off, Out: off, LSE: off, Seg: off, G: off, Res: off}
			fwd, err := wgsl.AttentionForward(s, lim)
			if err != nil {
				t.Fatal(err)
			}
			bwd, err := wgsl.AttentionBackward(s, lim)
			if err != nil {
				t.Fatal(err)
			}
			if trips == 80 && (len(fwd.Kernels) < 3 || len(bwd.Kernels) < 5) {
				t.Errorf("%s: %d forward and %d backward kernels, want chunks", name, len(fwd.Kernels), len(bwd.Kernels))
			}
			b := bufs{"q": upload(t, g, f32bytes(q)), "k": upload(t, g, f32bytes(k)), "v": upload(t, g, f32bytes(v)),
				"g": upload(t, g, f32bytes(gr)), "seg": upload(t, g, i32bytes(append(make([]int32, off), seg...))),
				"out": alloc(t, g, 4*(off+m)), "lse": alloc(t, g, 4*(off+n*h)), "res": alloc(t, g, 4*(off+3*m))}
			runPlan(t, g, fwd, b)
			runPlan(t, g, bwd, b)
			tol := approx.AbsRel(2e-6, 2e-5)
			approx.Require(t, name+" out", readF32(t, g, b["out"])[off:], out, tol)
			approx.Require(t, name+" lse", readF32(t, g, b["lse"])[off:], lse, tol)
			res := readF32(t, g, b["res"])[off:]
			approx.Require(t, name+" dq", res[:m], dq, tol)
			approx.Require(t, name+" dk", res[m:2*m], dk, tol)
			approx.Require(t, name+" dv", res[2*m:], dv, tol)
		}
	}
}

// TestAttentionErrors: shapes the kernels cannot run are errors.
func TestAttentionErrors(t *testing.T) {
	for _, s := range []wgsl.AttentionShape{{N: 3, H: 0, D: 2}, {N: 3, H: 1, D: 0}, {N: 3, H: 1, D: 2, MaxSpan: 4}, {N: 1 << 20, H: 64, D: 64}} {
		if _, err := wgsl.AttentionForward(s, wgsl.Limits{}); err == nil {
			t.Errorf("AttentionForward(%+v) ran", s)
		}
		if _, err := wgsl.AttentionBackward(s, wgsl.Limits{}); err == nil {
			t.Errorf("AttentionBackward(%+v) ran", s)
		}
	}
	wide := wgsl.AttentionShape{N: 3, H: 1, D: 40000, MaxSpan: 3}
	if _, err := wgsl.AttentionForward(wide, wgsl.Limits{}); err == nil {
		t.Error("a head of 40000 values ran past the loop budget")
	}
}
