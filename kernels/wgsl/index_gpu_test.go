package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

func TestIndexSelectGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(14)
	type isCase struct {
		name string
		x    wgsl.Layout
		size int
		dim  int
		nidx int
	}
	for _, c := range []isCase{
		{"rows", wgsl.Contiguous(7, 33), 7 * 33, 0, 5},
		{"cols", wgsl.Contiguous(7, 33), 7 * 33, 1, 65},
		{"transposed", wgsl.Layout{Shape: []int{33, 7}, Strides: []int{1, 33}, Offset: 3}, 7*33 + 3, 1, 9},
		{"embedding", wgsl.Contiguous(65, 8), 65 * 8, 0, 33},
		{"0-d", wgsl.Layout{Offset: 2}, 3, 0, 1},
	} {
		x := r.i32s(c.size, -1000, 1000)
		lim := 1
		if len(c.x.Shape) > 0 {
			lim = c.x.Shape[c.dim]
		}
		index := r.i32s(c.nidx+1, 0, lim) // element 0 is skipped: offset 1
		il := wgsl.Layout{Shape: []int{c.nidx}, Strides: []int{1}, Offset: 1}
		var out wgsl.Layout
		if len(c.x.Shape) > 0 {
			s := append([]int(nil), c.x.Shape...)
			s[c.dim] = c.nidx
			out = wgsl.Contiguous(s...)
		}
		n := layout.Numel(out.Shape)
		k, err := wgsl.IndexSelect(out, c.x, c.dim, il, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": alloc(t, g, 4*n), "x": upload(t, g, i32bytes(x)), "index": upload(t, g, i32bytes(index))}
		run(t, g, k, b)
		want := make([]int32, n)
		if err := cpu.IndexSelect(want, cl(out), x, cl(c.x), c.dim, index[1:]); err != nil {
			t.Fatal(err)
		}
		approx.Require(t, c.name, readI32(t, g, b["out"]), want, approx.Exact)
	}
}

func TestGatherGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(15)
	type gCase struct {
		name   string
		x      wgsl.Layout
		size   int
		dim    int
		ishape []int
	}
	for _, c := range []gCase{
		{"dim1", wgsl.Contiguous(7, 33), 7 * 33, 1, []int{7, 5}},
		{"dim0", wgsl.Contiguous(7, 33), 7 * 33, 0, []int{3, 33}},
		{"x-larger", wgsl.Layout{Shape: []int{9, 33}, Strides: []int{1, 9}, Offset: 1}, 9*33 + 1, 1, []int{7, 65}},
	} {
		x := r.f32s(c.size, -1, 1)
		il := wgsl.Contiguous(c.ishape...)
		index := r.i32s(layout.Numel(c.ishape), 0, c.x.Shape[c.dim])
		out := wgsl.Contiguous(c.ishape...)
		k, err := wgsl.Gather(out, c.x, c.dim, il, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": alloc(t, g, 4*len(index)), "x": upload(t, g, f32bytes(x)), "index": upload(t, g, i32bytes(index))}
		run(t, g, k, b)
		want := make([]float32, len(index))
		if err := cpu.Gather(want, cl(out), x, cl(c.x), c.dim, index, cpu.Layout(il)); err != nil {
			t.Fatal(err)
		}
		approx.Require(t, c.name, readF32(t, g, b["out"]), want, approx.AbsRel(0, 0))
	}
	// Out-of-range indices read nothing and write 0.
	x := []float32{1, 2, 3}
	index := []int32{-1, 2, 3, 1 << 30}
	l := wgsl.Contiguous(4)
	k, err := wgsl.Gather(l, wgsl.Contiguous(3), 0, l, limits(g))
	if err != nil {
		t.Fatal(err)
	}
	b := bufs{"out": upload(t, g, f32bytes([]float32{9, 9, 9, 9})), "x": upload(t, g, f32bytes(x)), "index": upload(t, g, i32bytes(index))}
	run(t, g, k, b)
	approx.Require(t, "out of range", readF32(t, g, b["out"]), []float32{0, 3, 0, 0}, approx.AbsRel(0, 0))
}

// indexScatters are the index-scatter kernels and their CPU references.
var indexScatters = []struct {
	name string
	gpu  func(typ string, dst wgsl.Layout, dim int, index, src wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error)
	cpu  func(dst []float32, dl cpu.Layout, dim int, index []int32, src []float32, sl cpu.Layout) error
}{
	{"index_add", wgsl.IndexAdd, cpu.IndexAdd[float32]},
	{"index_amax", wgsl.IndexAmax, cpu.IndexAmax[float32]},
}

// TestIndexAddGPU checks IndexAdd and IndexAmax against the CPU's,
// bitwise, NaN included for the max.
func TestIndexAddGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(16)
	for _, c := range []struct {
		name string
		dst  wgsl.Layout
		dim  int
		nidx int
	}{
		{"rows", wgsl.Contiguous(7, 33), 0, 10},
		{"cols", wgsl.Contiguous(7, 33), 1, 40},
		{"strided", wgsl.Layout{Shape: []int{33, 7}, Strides: []int{1, 33}, Offset: 0}, 0, 65},
	} {
		index := r.i32s(c.nidx, 0, c.dst.Shape[c.dim])
		ss := append([]int(nil), c.dst.Shape...)
		ss[c.dim] = c.nidx
		sl := wgsl.Contiguous(ss...)
		src := r.f32s(layout.Numel(ss), -1, 1)
		dst := r.f32s(layout.Numel(c.dst.Shape), -1, 1)
		src[3], dst[5] = float32(math.NaN()), float32(math.NaN())
		for _, op := range indexScatters {
			k, err := op.gpu(wgsl.F32, c.dst, c.dim, wgsl.Contiguous(c.nidx), sl, limits(g))
			if err != nil {
				t.Fatal(err)
			}
			b := bufs{"dst": upload(t, g, f32bytes(dst)), "index": upload(t, g, i32bytes(index)), "src": upload(t, g, f32bytes(src))}
			runPlan(t, g, k, b)
			want := append([]float32(nil), dst...)
			if err := op.cpu(want, cl(c.dst), c.dim, index, src, cl(sl)); err != nil {
				t.Fatal(err)
			}
			approx.Require(t, op.name+" "+c.name+" (bitwise)", readF32(t, g, b["dst"]), want, approx.AbsRel(0, 0))
		}
	}
	// Out-of-range indices are skipped.
	dst := []int32{1, 2, 3}
	index := []int32{2, -1, 5, 0, 2}
	src := []int32{10, 20, 30, 40, 50}
	k, err := wgsl.IndexAdd(wgsl.I32, wgsl.Contiguous(3), 0, wgsl.Contiguous(5), wgsl.Contiguous(5), limits(g))
	if err != nil {
		t.Fatal(err)
	}
	b := bufs{"dst": upload(t, g, i32bytes(dst)), "index": upload(t, g, i32bytes(index)), "src": upload(t, g, i32bytes(src))}
	runPlan(t, g, k, b)
	approx.Require(t, "out of range", readI32(t, g, b["dst"]), []int32{41, 2, 63}, approx.Exact)
}

func TestScatterAddGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(17)
	for _, c := range []struct {
		name   string
		dst    []int
		dim    int
		ishape []int
	}{
		{"dim1", []int{7, 33}, 1, []int{7, 50}},
		{"dim0", []int{7, 33}, 0, []int{12, 33}},
		{"smaller", []int{7, 33}, 1, []int{5, 20}},
		{"3d", []int{3, 7, 5}, 1, []int{2, 9, 5}},
	} {
		dl, il := wgsl.Contiguous(c.dst...), wgsl.Contiguous(c.ishape...)
		index := r.i32s(layout.Numel(c.ishape), 0, c.dst[c.dim])
		for _, typ := range []string{wgsl.F32, wgsl.I32} {
			k, err := wgsl.ScatterAdd(typ, dl, c.dim, il, il, limits(g))
			if err != nil {
				t.Fatal(err)
			}
			if typ == wgsl.F32 {
				src, dst := r.f32s(len(index), -1, 1), r.f32s(layout.Numel(c.dst), -1, 1)
				b := bufs{"dst": upload(t, g, f32bytes(dst)), "index": upload(t, g, i32bytes(index)), "src": upload(t, g, f32bytes(src))}
				runPlan(t, g, k, b)
				want := append([]float32(nil), dst...)
				if err := cpu.ScatterAdd(want, cl(dl), c.dim, index, cl(il), src, cl(il)); err != nil {
					t.Fatal(err)
				}
				approx.Require(t, c.name+" (bitwise)", readF32(t, g, b["dst"]), want, approx.AbsRel(0, 0))
				continue
			}
			src, dst := r.i32s(len(index), -100, 100), r.i32s(layout.Numel(c.dst), -100, 100)
			b := bufs{"dst": upload(t, g, i32bytes(dst)), "index": upload(t, g, i32bytes(index)), "src": upload(t, g, i32bytes(src))}
			runPlan(t, g, k, b)
			want := append([]int32(nil), dst...)
			if err := cpu.ScatterAdd(want, cl(dl), c.dim, index, cl(il), src, cl(il)); err != nil {
				t.Fatal(err)
			}
			approx.Require(t, c.name+"/i32", readI32(t, g, b["dst"]), want, approx.Exact)
		}
	}
}
