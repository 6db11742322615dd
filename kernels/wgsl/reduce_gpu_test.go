package wgsl_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// keepdim returns the contiguous keepdim layout of shape with dims reduced.
func keepdim(shape []int, dims ...int) wgsl.Layout {
	s := append([]int(nil), shape...)
	for _, d := range dims {
		s[d] = 1
	}
	return wgsl.Contiguous(s...)
}

type reduceCase struct {
	name string
	x    wgsl.Layout
	size int // elements of x's buffer
	dims []int
}

func reduceCases() []reduceCase {
	c3 := wgsl.Contiguous(7, 33, 65)
	tr := wgsl.Layout{Shape: []int{65, 33, 7}, Strides: []int{1, 65, 65 * 33}, Offset: 0} // c3 permuted (2, 1, 0)
	var cs []reduceCase
	for _, dims := range [][]int{{2}, {1}, {0}, {0, 2}, {0, 1, 2}} {
		cs = append(cs, reduceCase{fmt.Sprint("contig", dims), c3, 7 * 33 * 65, dims})
		cs = append(cs, reduceCase{fmt.Sprint("transposed", dims), tr, 7 * 33 * 65, dims})
	}
	return append(cs,
		reduceCase{"whole-40000", wgsl.Layout{Shape: []int{40000}, Strides: []int{1}, Offset: 3}, 40003, []int{0}},
		reduceCase{"rows-3x20001", wgsl.Contiguous(3, 20001), 3 * 20001, []int{1}},
		reduceCase{"cols-40x2100", wgsl.Contiguous(40, 2100), 40 * 2100, []int{0}},
		reduceCase{"empty", wgsl.Contiguous(3, 0), 0, []int{1}},
	)
}

func TestReduceGPU(t *testing.T) {
	g := openGPU(t)
	lim := limits(g)
	r := rng(7)
	for _, c := range reduceCases() {
		out := keepdim(c.x.Shape, c.dims...)
		nOut := out.Shape
		n := 1
		for _, d := range nOut {
			n *= d
		}
		red := max(1, layout.Numel(c.x.Shape)/max(n, 1))
		for _, op := range []struct{ name string }{{"sum"}, {"max"}, {"min"}} {
			if op.name != "sum" && layout.Numel(c.x.Shape) == 0 {
				continue // undefined (the op layer rejects it): the GPU leaves 0, the CPU its identity
			}
			x := r.f32s(c.size, -1, 1)
			if op.name != "sum" && len(x) > 100 {
				// NaNs first in a line, inside, and in several lines.
				for _, i := range []int{c.x.Offset, 17, 1000, len(x) - 1} {
					x[i] = float32(math.NaN())
				}
			}
			plan, err := wgsl.Reduce(op.name, wgsl.F32, out, c.x, lim)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, op.name, err)
			}
			b := bufs{"out": upload(t, g, f32bytes(make([]float32, n))), "x": upload(t, g, f32bytes(x))}
			runPlan(t, g, plan, b)
			want := make([]float32, n)
			cpuReduce(op.name, want, cl(out), x, cl(c.x))
			approx.Require(t, fmt.Sprintf("%s/%s (%d kernels)", c.name, op.name, len(plan.Kernels)), readF32(t, g, b["out"]), want, approx.AbsRel(3e-7*float64(red)+1e-6, 0))

			xi := r.i32s(c.size, -1000, 1000)
			plan, err = wgsl.Reduce(op.name, wgsl.I32, out, c.x, lim)
			if err != nil {
				t.Fatal(err)
			}
			b = bufs{"out": upload(t, g, i32bytes(make([]int32, n))), "x": upload(t, g, i32bytes(xi))}
			runPlan(t, g, plan, b)
			wantI := make([]int32, n)
			cpuReduce(op.name, wantI, cl(out), xi, cl(c.x))
			approx.Require(t, c.name+"/i32/"+op.name, readI32(t, g, b["out"]), wantI, approx.Exact)
		}
	}
}

func TestArgReduceGPU(t *testing.T) {
	g := openGPU(t)
	lim := limits(g)
	r := rng(8)
	type argCase struct {
		name string
		x    wgsl.Layout
		size int
		dim  int
	}
	cs := []argCase{
		{"contig-last", wgsl.Contiguous(7, 33, 65), 7 * 33 * 65, 2},
		{"contig-mid", wgsl.Contiguous(7, 33, 65), 7 * 33 * 65, 1},
		{"transposed", wgsl.Layout{Shape: []int{65, 33}, Strides: []int{1, 65}, Offset: 4}, 65*33 + 4, 1},
		{"long", wgsl.Contiguous(3, 5000), 15000, 1},
		{"side-by-side", wgsl.Contiguous(40, 2100), 84000, 0},
		{"0-d", wgsl.Layout{Offset: 1}, 2, 0},
	}
	for _, c := range cs {
		for _, op := range []struct{ name string }{{"max"}, {"min"}} {
			var il wgsl.Layout
			if len(c.x.Shape) > 0 {
				il = keepdim(c.x.Shape, c.dim)
			}
			n := layout.Numel(il.Shape)
			// Few distinct values make ties; NaNs land in some lines.
			xi := r.i32s(c.size, -3, 3)
			x := make([]float32, c.size)
			for i, v := range xi {
				x[i] = float32(v)
				if i%97 == 5 {
					x[i] = float32(math.NaN())
				}
			}
			vl := il
			k, err := wgsl.ArgReduce(op.name, wgsl.F32, il, &vl, c.x, c.dim, lim)
			if err != nil {
				t.Fatal(err)
			}
			b := bufs{"idx": alloc(t, g, 4*n), "vals": alloc(t, g, 4*n), "x": upload(t, g, f32bytes(x))}
			runPlan(t, g, k, b)
			wantI, wantV := make([]int32, n), make([]float32, n)
			cpuArgReduce(op.name, wantV, cl(vl), wantI, cl(il), x, cl(c.x), c.dim)
			approx.Require(t, c.name+"/"+op.name+" idx", readI32(t, g, b["idx"]), wantI, approx.Exact)
			approx.Require(t, c.name+"/"+op.name+" vals", readF32(t, g, b["vals"]), wantV, approx.AbsRel(0, 0))

			k, err = wgsl.ArgReduce(op.name, wgsl.I32, il, nil, c.x, c.dim, lim)
			if err != nil {
				t.Fatal(err)
			}
			b = bufs{"idx": alloc(t, g, 4*n), "x": upload(t, g, i32bytes(xi))}
			runPlan(t, g, k, b)
			cpuArgReduce(op.name, nil, cpu.Layout{}, wantI, cl(il), xi, cl(c.x), c.dim)
			approx.Require(t, c.name+"/i32/"+op.name+" idx", readI32(t, g, b["idx"]), wantI, approx.Exact)
		}
	}
}
