package wgsl_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// mmCase is one product with its operand views over flat buffers.
type mmCase struct {
	name         string
	out, a, b    wgsl.Layout
	sizeA, sizeB int
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

func mmCases() []mmCase {
	var cs []mmCase
	add := func(name string, batch, m, k, n int, a, b wgsl.Layout) {
		sa, sb := bufferSize(a), bufferSize(b)
		cs = append(cs, mmCase{name, wgsl.Contiguous(batch, m, n), a, b, sa, sb})
	}
	for _, tr := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		mk := func(tr bool, r, c, off int, bc bool, batch int) wgsl.Layout {
			if tr {
				return colMajor(batch, r, c, off, bc)
			}
			return rowMajor(batch, r, c, off, bc)
		}
		add(fmt.Sprintf("7x33x65/ta=%v,tb=%v", tr.ta, tr.tb), 1, 7, 33, 65, mk(tr.ta, 7, 33, 1, false, 1), mk(tr.tb, 33, 65, 3, false, 1))
		add(fmt.Sprintf("batched-bcast-a/ta=%v,tb=%v", tr.ta, tr.tb), 3, 65, 17, 70, mk(tr.ta, 65, 17, 0, true, 3), mk(tr.tb, 17, 70, 0, false, 3))
	}
	add("fits-64x128x64", 2, 64, 128, 64, rowMajor(2, 64, 128, 0, false), rowMajor(2, 128, 64, 0, true))
	add("fits-128x24x256", 1, 128, 24, 256, rowMajor(1, 128, 24, 0, false), colMajor(1, 24, 256, 0, false))
	add("edges-130x9x129", 2, 130, 9, 129, colMajor(2, 130, 9, 0, false), rowMajor(2, 9, 129, 0, true))
	add("k=0", 1, 5, 0, 6, rowMajor(1, 5, 0, 0, false), rowMajor(1, 0, 6, 0, false))
	add("1x1", 1, 1, 1, 1, rowMajor(1, 1, 1, 0, false), rowMajor(1, 1, 1, 0, false))
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

func TestMatMulGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(11)
	for _, c := range mmCases() {
		a, b := r.f32s(c.sizeA, -1, 1), r.f32s(c.sizeB, -1, 1)
		n := numelOf(c.out.Shape)
		want := make([]float32, n)
		cpu.MatMul(want, cl(c.out), a, cl(c.a), b, cl(c.b))
		tol := 2e-6 * math.Sqrt(float64(c.a.Shape[2])+1)
		for _, gen := range []struct {
			name string
			f    func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error)
		}{{"tiled64", tiled(64)}, {"tiled128", tiled(128)}, {"tiled64x128", tiledConfig(64, 128, 8, 4, 8)},
			{"tiled128x64", tiledConfig(128, 64, 4, 8, 4)}, {"naive", wgsl.MatMulNaive}} {
			k, err := gen.f(c.out, c.a, c.b, limits(g))
			if err != nil {
				t.Fatal(err)
			}
			bs := bufs{"out": upload(t, g, f32bytes(r.f32s(n, 5, 6))), "a": upload(t, g, f32bytes(a)), "b": upload(t, g, f32bytes(b))}
			run(t, g, k, bs)
			checkF32(t, c.name+"/"+gen.name, readF32(t, g, bs["out"]), want, tol, 0)
		}
	}
}

// TestMatMulManyBatches loops over more batches than workgroups in z.
func TestMatMulManyBatches(t *testing.T) {
	g := openGPU(t)
	lim := limits(g)
	lim.MaxWorkgroupsPerDimension = 4
	r := rng(12)
	out, a, b := wgsl.Contiguous(9, 5, 3), rowMajor(9, 5, 4, 0, false), colMajor(9, 4, 3, 0, false)
	av, bv := r.f32s(bufferSize(a), -1, 1), r.f32s(bufferSize(b), -1, 1)
	want := make([]float32, 9*5*3)
	cpu.MatMul(want, cl(out), av, cl(a), bv, cl(b))
	for _, f := range []func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error){tiled(64), tiled(128), wgsl.MatMulNaive} {
		k, err := f(out, a, b, lim)
		if err != nil {
			t.Fatal(err)
		}
		if k.Groups[2] != 4 {
			t.Fatalf("groups %v", k.Groups)
		}
		bs := bufs{"out": alloc(t, g, 4*len(want)), "a": upload(t, g, f32bytes(av)), "b": upload(t, g, f32bytes(bv))}
		run(t, g, k, bs)
		checkF32(t, "many batches", readF32(t, g, bs["out"]), want, 1e-5, 0)
	}
}

func tiled(tile int) func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error) {
	return func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error) {
		return wgsl.MatMulTiled(tile, out, a, b, lim)
	}
}

// tiledConfig is the tiled template with TM×TN tiles other than
// MatMulTiled's, which shows that every parameter reaches the kernel.
func tiledConfig(tm, tn, ks, rm, rn int) func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error) {
	return func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error) {
		return wgsl.MatMulTiledConfig(tm, tn, ks, rm, rn, out, a, b, lim)
	}
}

// BenchmarkMatMul reports GFLOP/s of the tiled and naive kernels on
// square products, waiting for the GPU inside the timed loop.
func BenchmarkMatMul(b *testing.B) {
	g := openGPU(b)
	for _, n := range []int{256, 512} {
		for _, gen := range []struct {
			name string
			f    func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Kernel, error)
		}{{"tiled64", tiled(64)}, {"tiled128", tiled(128)}, {"naive", wgsl.MatMulNaive}} {
			b.Run(fmt.Sprintf("%s/%d", gen.name, n), func(b *testing.B) {
				l := wgsl.Contiguous(1, n, n)
				k, err := gen.f(l, l, l, limits(g))
				if err != nil {
					b.Fatal(err)
				}
				r := rng(13)
				bs := bufs{"out": alloc(b, g, 4*n*n), "a": upload(b, g, f32bytes(r.f32s(n*n, -1, 1))), "b": upload(b, g, f32bytes(r.f32s(n*n, -1, 1)))}
				run(b, g, k, bs)
				if err := g.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					run(b, g, k, bs)
					if err := g.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/time.Since(start).Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
