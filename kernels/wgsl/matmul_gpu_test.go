package wgsl_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// mmCase is one product with its operand views over flat buffers, and
// whether the tiled kernel should read a and b as vec4s (va, vb).
type mmCase struct {
	name         string
	out, a, b    wgsl.Layout
	sizeA, sizeB int
	va, vb       bool
}

// rowMajor / colMajor return a (batch, r, c) view of a buffer holding
// batch (r, c) matrices row- or column-major; batch stride 0 broadcasts.
func rowMajor(batch, r, c, off int, bcast bool) wgsl.Layout {
	bs := r * c
	if bcast {
		bs = 0
	}
	return wgsl.Layout{Shape: []int{batch, r, c}, Strides: []int{bs, c, 1}, Offset: off}
}

func colMajor(batch, r, c, off int, bcast bool) wgsl.Layout {
	bs := r * c
	if bcast {
		bs = 0
	}
	return wgsl.Layout{Shape: []int{batch, r, c}, Strides: []int{bs, 1, r}, Offset: off}
}

// mmCases cover row-major and transposed operands, broadcast batches,
// ragged M, N and K, and padded or odd strides, each both with sizes,
// offsets and strides that allow vec4 loads (multiples of 4) and with
// ones that do not.
func mmCases() []mmCase {
	var cs []mmCase
	add := func(name string, batch, m, k, n int, a, b wgsl.Layout, va, vb bool) {
		sa, sb := bufferSize(a), bufferSize(b)
		cs = append(cs, mmCase{name, wgsl.Contiguous(batch, m, n), a, b, sa, sb, va, vb})
	}
	for _, tr := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		mk := func(tr bool, r, c, off int, bc bool, batch int) wgsl.Layout {
			if tr {
				return colMajor(batch, r, c, off, bc)
			}
			return rowMajor(batch, r, c, off, bc)
		}
		tn := fmt.Sprintf("ta=%v,tb=%v", tr.ta, tr.tb)
		add("7x33x65/"+tn, 1, 7, 33, 65, mk(tr.ta, 7, 33, 1, false, 1), mk(tr.tb, 33, 65, 3, false, 1), false, false)
		add("batched-bcast-a/"+tn, 3, 65, 17, 70, mk(tr.ta, 65, 17, 0, true, 3), mk(tr.tb, 17, 70, 0, false, 3), false, false)
		// Multiples of 4 but ragged for every tile and K step.
		add("vec4-68x36x132/"+tn, 2, 68, 36, 132, mk(tr.ta, 68, 36, 4, false, 2), mk(tr.tb, 36, 132, 8, true, 2), true, true)
		add("vec4-bcast-b-4x4x4/"+tn, 3, 4, 4, 4, mk(tr.ta, 4, 4, 0, false, 3), mk(tr.tb, 4, 4, 12, true, 3), true, true)
		// The same sizes at offsets that are not multiples of 4.
		add("off-1-2/"+tn, 2, 68, 36, 132, mk(tr.ta, 68, 36, 1, false, 2), mk(tr.tb, 36, 132, 2, true, 2), false, false)
		add("off-4-2/"+tn, 2, 68, 36, 132, mk(tr.ta, 68, 36, 4, true, 2), mk(tr.tb, 36, 132, 2, false, 2), true, false)
		add("off-6-0/"+tn, 1, 68, 36, 132, mk(tr.ta, 68, 36, 6, false, 1), mk(tr.tb, 36, 132, 0, false, 1), false, true)
	}
	add("fits-64x128x64", 2, 64, 128, 64, rowMajor(2, 64, 128, 0, false), rowMajor(2, 128, 64, 0, true), true, true)
	add("fits-128x24x256", 1, 128, 24, 256, rowMajor(1, 128, 24, 0, false), colMajor(1, 24, 256, 0, false), true, true)
	add("fits-off-3", 1, 128, 32, 128, rowMajor(1, 128, 32, 3, false), colMajor(1, 32, 128, 1, false), false, false)
	add("edges-130x9x129", 2, 130, 9, 129, colMajor(2, 130, 9, 0, false), rowMajor(2, 9, 129, 0, true), false, false)
	// Rows padded to a multiple of 4 (a view of a wider matrix) or not,
	// a batch stride that is not, and a single row whose stride never
	// moves.
	pad := func(m, k, ld, off int) wgsl.Layout {
		return wgsl.Layout{Shape: []int{2, m, k}, Strides: []int{m * ld, ld, 1}, Offset: off}
	}
	add("padded-rows-4", 2, 70, 20, 66, pad(70, 20, 24, 4), rowMajor(2, 20, 66, 0, false), true, false)
	add("padded-rows-1", 2, 70, 20, 68, pad(70, 20, 21, 4), rowMajor(2, 20, 68, 0, false), false, true)
	add("batch-stride-2", 2, 9, 8, 16, wgsl.Layout{Shape: []int{2, 9, 8}, Strides: []int{74, 8, 1}}, colMajor(2, 8, 16, 0, false), false, true)
	add("m=1-odd-row-stride", 2, 1, 8, 12, wgsl.Layout{Shape: []int{2, 1, 8}, Strides: []int{8, 5, 1}}, rowMajor(2, 8, 12, 4, false), true, true)
	add("k=0", 1, 5, 0, 6, rowMajor(1, 5, 0, 0, false), rowMajor(1, 0, 6, 0, false), false, false)
	add("1x1", 1, 1, 1, 1, rowMajor(1, 1, 1, 0, false), rowMajor(1, 1, 1, 0, false), false, false)
	return cs
}

func bufferSize(l wgsl.Layout) int {
	last := l.Offset
	for d, n := range l.Shape {
		if n == 0 {
			return l.Offset
		}
		last += (n - 1) * l.Strides[d]
	}
	return last + 1
}

// mmGen is a matmul kernel generator under test; vec4 says whether it
// may read operands as vec4s.
type mmGen struct {
	name string
	f    func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error)
	vec4 bool
}

// mmGens are the tiled configurations with vec4 loads allowed and off,
// and the naive kernel.
func mmGens() []mmGen {
	var gs []mmGen
	for _, c := range []struct {
		name               string
		tm, tn, ks, rm, rn int
	}{{"tiled64", 64, 64, 16, 4, 4}, {"tiled128", 128, 128, 8, 8, 8}, {"tiled64x128", 64, 128, 8, 4, 8}, {"tiled128x64", 128, 64, 4, 8, 4}} {
		gs = append(gs, mmGen{c.name, tiledConfig(c.tm, c.tn, c.ks, c.rm, c.rn), true},
			mmGen{c.name + "-scalar", tiledScalar(c.tm, c.tn, c.ks, c.rm, c.rn), false})
	}
	return append(gs, mmGen{"tiled64-public", tiled(64), true}, mmGen{"tiled128-public", tiled(128), true}, mmGen{"naive", wgsl.MatMulNaive, false})
}

func TestMatMulGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(11)
	for _, c := range mmCases() {
		a, b := r.f32s(c.sizeA, -1, 1), r.f32s(c.sizeB, -1, 1)
		n := layout.Numel(c.out.Shape)
		want := make([]float32, n)
		cpu.MatMul(want, cl(c.out), a, cl(c.a), b, cl(c.b))
		tol := 2e-6 * math.Sqrt(float64(c.a.Shape[2])+1)
		for _, gen := range mmGens() {
			k, err := gen.f(c.out, c.a, c.b, limits(g))
			if err != nil {
				t.Fatal(err)
			}
			va, vb := strings.Contains(k.Kernels[0].Source, "b_a4"), strings.Contains(k.Kernels[0].Source, "b_b4")
			if va != (gen.vec4 && c.va) || vb != (gen.vec4 && c.vb) {
				t.Errorf("%s/%s: vec4 loads a %v, b %v; want %v, %v", c.name, gen.name, va, vb, gen.vec4 && c.va, gen.vec4 && c.vb)
			}
			bs := bufs{"out": upload(t, g, f32bytes(r.f32s(n, 5, 6))), "a": upload(t, g, f32bytes(a)), "b": upload(t, g, f32bytes(b))}
			runPlan(t, g, k, bs)
			approx.Require(t, c.name+"/"+gen.name, readF32(t, g, bs["out"]), want, approx.AbsRel(tol, 0))
		}
	}
}

// TestMatMulManyBatches splits more batches than workgroups in z into
// kernels.
func TestMatMulManyBatches(t *testing.T) {
	g := openGPU(t)
	lim := limits(g)
	lim.MaxWorkgroupsPerDimension = 4
	r := rng(12)
	out, a, b := wgsl.Contiguous(9, 5, 3), rowMajor(9, 5, 4, 0, false), colMajor(9, 4, 3, 0, false)
	av, bv := r.f32s(bufferSize(a), -1, 1), r.f32s(bufferSize(b), -1, 1)
	want := make([]float32, 9*5*3)
	cpu.MatMul(want, cl(out), av, cl(a), bv, cl(b))
	for _, f := range []func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error){tiled(64), tiled(128), wgsl.MatMulNaive} {
		k, err := f(out, a, b, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Kernels) != 3 || k.Kernels[0].Groups[2] != 4 || k.Kernels[2].Groups[2] != 1 {
			t.Fatalf("%d kernels, groups %v", len(k.Kernels), k.Kernels[0].Groups)
		}
		bs := bufs{"out": alloc(t, g, 4*len(want)), "a": upload(t, g, f32bytes(av)), "b": upload(t, g, f32bytes(bv))}
		runPlan(t, g, k, bs)
		approx.Require(t, "many batches", readF32(t, g, bs["out"]), want, approx.AbsRel(1e-5, 0))
	}
}

func tiled(tile int) func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
	return func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
		return wgsl.MatMulTiled(tile, out, a, b, lim)
	}
}

// tiledConfig is the tiled template with TM×TN tiles other than
// MatMulTiled's, which shows that every parameter reaches the kernel.
func tiledConfig(tm, tn, ks, rm, rn int) func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
	return func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
		return wgsl.MatMulTiledConfig(tm, tn, ks, rm, rn, out, a, b, lim)
	}
}

// tiledScalar is tiledConfig with vec4 loads off.
func tiledScalar(tm, tn, ks, rm, rn int) func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
	return func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error) {
		return wgsl.MatMulTiledScalar(tm, tn, ks, rm, rn, out, a, b, lim)
	}
}

// BenchmarkMatMul reports GFLOP/s of the tiled and naive kernels on
// square products, waiting for the GPU inside the timed loop.
func BenchmarkMatMul(b *testing.B) {
	g := openGPU(b)
	for _, n := range []int{256, 512} {
		for _, gen := range []struct {
			name string
			f    func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error)
		}{{"tiled64", tiled(64)}, {"tiled128", tiled(128)}, {"naive", wgsl.MatMulNaive}} {
			b.Run(fmt.Sprintf("%s/%d", gen.name, n), func(b *testing.B) {
				l := wgsl.Contiguous(1, n, n)
				k, err := gen.f(l, l, l, limits(g))
				if err != nil {
					b.Fatal(err)
				}
				r := rng(13)
				bs := bufs{"out": alloc(b, g, 4*n*n), "a": upload(b, g, f32bytes(r.f32s(n*n, -1, 1))), "b": upload(b, g, f32bytes(r.f32s(n*n, -1, 1)))}
				runPlan(b, g, k, bs)
				if err := g.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					runPlan(b, g, k, bs)
					if err := g.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/time.Since(start).Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
