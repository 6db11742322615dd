package wgsl_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// loopProbe is one invocation counting the iterations of two loops of
// params.a and params.b iterations (uniforms, so the compiler cannot
// fold them): out[0] after the first, out[1] after both.
const loopProbe = `struct Params { a: u32, b: u32, c: u32, d: u32, }
@group(1) @binding(0) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> b_out: array<u32>;

@compute @workgroup_size(1)
fn main() {
	var n = 0u;
	for (var i = 0u; i < params.a; i++) {
		n += 1u;
	}
	b_out[0] = n;
	for (var i = 0u; i < params.b; i++) {
		n += 1u;
	}
	b_out[1] = n;
}
`

// TestLoopLimitGPU documents what the adapter does with long loops.
// lavapipe stops an invocation's loops after DefaultMaxLoopTrips
// iterations, all its loops together, each loop paying one more for the
// pass that exits it (loops.go): one loop of 70000 stops at 65535, and
// after a loop of 40000 a second one runs 65535 - 40001 iterations.
// Adapters without a limit count everything. Anything else means the
// cost model that the planners rely on is wrong.
func TestLoopLimitGPU(t *testing.T) {
	g := openGPU(t)
	probe := func(a, b uint32) [2]uint32 {
		out := alloc(t, g, 8)
		p := wgsl.NewParams(wgsl.ParamField{Name: "a", Type: "u32"}, wgsl.ParamField{Name: "b", Type: "u32"},
			wgsl.ParamField{Name: "c", Type: "u32"}, wgsl.ParamField{Name: "d", Type: "u32"})
		p.SetU32("a", a).SetU32("b", b)
		k := device.Kernel{Source: loopProbe, Entry: "main", Params: p.Bytes(), Groups: [3]uint32{1, 1, 1}, Bindings: []device.Binding{{Buf: out}}}
		if err := g.Run(k); err != nil {
			t.Fatal(err)
		}
		v := bytesU32(read(t, g, out))
		return [2]uint32{v[0], v[1]}
	}
	one, two := probe(70000, 0), probe(40000, 40000)
	const lim = wgsl.DefaultMaxLoopTrips
	switch {
	case one == [2]uint32{70000, 70000} && two == [2]uint32{40000, 80000}:
		t.Logf("%s: no loop limit", g.Info())
	case one == [2]uint32{lim, lim} && two == [2]uint32{40000, lim - 1}:
		t.Logf("%s: loops stop after %d iterations per invocation, all loops together (lavapipe)", g.Info(), lim)
	default:
		t.Fatalf("%s: a loop of 70000 counts %v, two of 40000 count %v: neither unlimited nor lavapipe's %d trips", g.Info(), one, two, lim)
	}
}

// testTrips is the loop trip limit under which the split tests run the
// planners, so that small inputs take the plans that split long loops.
const testTrips = 40

func splitLimits(g *device.GPU, trips int) wgsl.Limits {
	lim := limits(g)
	lim.MaxLoopTrips = trips
	return lim
}

// A splitCase is a view reduced or scanned along dim.
type splitCase struct {
	name string
	x    wgsl.Layout
	dim  int
}

// wantKernels fails unless p has at least n kernels: the split happened.
func wantKernels(t *testing.T, what string, p wgsl.Plan, err error, n int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(p.Kernels) < n {
		t.Fatalf("%s: %d kernels, want a split into %d or more", what, len(p.Kernels), n)
	}
}

// TestSplitPlansGPU runs the reductions and arg-reductions that split
// long loops into segments, with a limit of testTrips trips so that small
// inputs need them, against the CPU: one invocation per (segment, output)
// and one workgroup per (output, segment), with many and few outputs.
func TestSplitPlansGPU(t *testing.T) {
	g := openGPU(t)
	lim := splitLimits(g, testTrips)
	r := rng(21)
	tr := wgsl.Layout{Shape: []int{12000, 7}, Strides: []int{1, 12000}}
	for _, c := range []splitCase{
		{"serial-300x2100", wgsl.Contiguous(300, 2100), 0},
		{"group-70x12000", wgsl.Contiguous(70, 12000), 1},
		{"two-stage-100000", wgsl.Contiguous(100000), 0},
		{"transposed-7x12000", tr, 0},
	} {
		size := layout.Numel(c.x.Shape)
		out := keepdim(c.x.Shape, c.dim)
		n := layout.Numel(out.Shape)
		x, xi := r.f32s(size, -1, 1), r.i32s(size, -3, 3)
		x[size/2] = float32(math.NaN())
		for _, op := range []struct{ name string }{{"sum"}, {"max"}, {"min"}} {
			what := c.name + "/" + op.name
			p, err := wgsl.Reduce(op.name, wgsl.F32, out, c.x, lim)
			wantKernels(t, what, p, err, 2)
			b := bufs{"out": alloc(t, g, 4*n), "x": upload(t, g, f32bytes(x))}
			runPlan(t, g, p, b)
			want := make([]float32, n)
			cpuReduce(op.name, want, cl(out), x, cl(c.x))
			approx.Require(t, what, readF32(t, g, b["out"]), want, approx.AbsRel(1e-6*float64(size/n), 0))

			p, err = wgsl.Reduce(op.name, wgsl.I32, out, c.x, lim)
			wantKernels(t, what+"/i32", p, err, 2)
			b = bufs{"out": alloc(t, g, 4*n), "x": upload(t, g, i32bytes(xi))}
			runPlan(t, g, p, b)
			wantI := make([]int32, n)
			cpuReduce(op.name, wantI, cl(out), xi, cl(c.x))
			approx.Require(t, what+"/i32", readI32(t, g, b["out"]), wantI, approx.Exact)
			if op.name == "sum" {
				continue
			}
			// Arg-reductions: ties (few values) and a NaN, values and indices.
			vals := out
			p, err = wgsl.ArgReduce(op.name, wgsl.F32, out, &vals, c.x, c.dim, lim)
			wantKernels(t, what+"/arg", p, err, 2)
			xf := make([]float32, size)
			for i, v := range xi {
				xf[i] = float32(v)
			}
			xf[size/3] = float32(math.NaN())
			b = bufs{"idx": alloc(t, g, 4*n), "vals": alloc(t, g, 4*n), "x": upload(t, g, f32bytes(xf))}
			runPlan(t, g, p, b)
			wantV := make([]float32, n)
			cpuArgReduce(op.name, wantV, cl(vals), wantI, cl(out), xf, cl(c.x), c.dim)
			approx.Require(t, what+"/arg idx", readI32(t, g, b["idx"]), wantI, approx.Exact)
			approx.Require(t, what+"/arg vals", readF32(t, g, b["vals"]), wantV, approx.AbsRel(0, 0))

			p, err = wgsl.ArgReduce(op.name, wgsl.I32, out, nil, c.x, c.dim, lim)
			wantKernels(t, what+"/arg i32", p, err, 2)
			b = bufs{"idx": alloc(t, g, 4*n), "x": upload(t, g, i32bytes(xi))}
			runPlan(t, g, p, b)
			cpuArgReduce(op.name, nil, cpu.Layout{}, wantI, cl(out), xi, cl(c.x), c.dim)
			approx.Require(t, what+"/arg i32 idx", readI32(t, g, b["idx"]), wantI, approx.Exact)
		}
	}
}

// TestSplitLinesGPU runs softmax and CumSum on lines split into segments
// (testTrips trips; 200 for CumSum, whose chunks and chunk count are both
// bounded), out of place and in place, against the CPU.
func TestSplitLinesGPU(t *testing.T) {
	g := openGPU(t)
	lim, scan := splitLimits(g, testTrips), splitLimits(g, 200)
	r := rng(22)
	for _, c := range []splitCase{
		{"rows-70x3000", wgsl.Contiguous(70, 3000), 1},
		{"few-5x20000", wgsl.Contiguous(5, 20000), 1},
		{"strided-1000x3", wgsl.Contiguous(1000, 3), 0},
		{"transposed", wgsl.Layout{Shape: []int{3, 1000}, Strides: []int{1, 3}, Offset: 1}, 1},
	} {
		size := c.x.Offset + layout.Numel(c.x.Shape)
		out := wgsl.Contiguous(c.x.Shape...)
		n := layout.Numel(out.Shape)
		length := c.x.Shape[c.dim]
		for _, inPlace := range []bool{false, true} {
			xl := c.x
			if inPlace {
				xl, size = out, n
			}
			// load uploads x, into the output buffer when in place.
			load := func(x []byte) bufs {
				if inPlace {
					return bufs{"out": upload(t, g, x)}
				}
				return bufs{"out": alloc(t, g, 4*n), "x": upload(t, g, x)}
			}
			x := r.f32s(size, -8, 8)
			x[size-1] = float32(math.NaN()) // one NaN line
			for _, log := range []bool{false, true} {
				what := fmt.Sprintf("%s/log %v/in place %v", c.name, log, inPlace)
				p, err := wgsl.Softmax(log, wgsl.LineArgs{Out: out, X: xl, Dim: c.dim, InPlace: inPlace, Limits: lim})
				wantKernels(t, what, p, err, 3)
				b := load(f32bytes(x))
				runPlan(t, g, p, b)
				want := make([]float32, n)
				cpu.Softmax(log, want, cl(out), x, cl(xl), c.dim)
				approx.Require(t, what, readF32(t, g, b["out"]), want, approx.AbsRel(2e-6, 1e-5))
			}
			what := fmt.Sprintf("%s/cumsum/in place %v", c.name, inPlace)
			p, err := wgsl.CumSum(wgsl.F32, wgsl.LineArgs{Out: out, X: xl, Dim: c.dim, InPlace: inPlace, Limits: scan})
			wantKernels(t, what, p, err, 3)
			x = r.f32s(size, -1, 1)
			b := load(f32bytes(x))
			runPlan(t, g, p, b)
			want := make([]float32, n)
			cpu.CumSum(want, cl(out), x, cl(xl), c.dim)
			approx.Require(t, what, readF32(t, g, b["out"]), want, approx.AbsRel(1e-6*float64(length), 0))

			p, err = wgsl.CumSum(wgsl.I32, wgsl.LineArgs{Out: out, X: xl, Dim: c.dim, InPlace: inPlace, Limits: scan})
			wantKernels(t, what+"/i32", p, err, 3)
			xi := r.i32s(size, -1<<30, 1<<30)
			b = load(i32bytes(xi))
			runPlan(t, g, p, b)
			wantI := make([]int32, n)
			cpu.CumSum(wantI, cl(out), xi, cl(xl), c.dim)
			approx.Require(t, what+"/i32", readI32(t, g, b["out"]), wantI, approx.Exact)
		}
	}
}

// TestSplitDispatchesGPU runs scatters and matmuls split into one kernel
// per range of the index or of K (testTrips trips) and per range of
// batches: the results are bitwise those of the CPU (scatters) and of the
// unsplit plan (matmul).
func TestSplitDispatchesGPU(t *testing.T) {
	g := openGPU(t)
	lim := splitLimits(g, testTrips)
	r := rng(23)
	dst, index, src := r.f32s(7*3, -1, 1), r.i32s(100, 0, 7), r.f32s(100*3, -1, 1)
	dl, sl := wgsl.Contiguous(7, 3), wgsl.Contiguous(100, 3)
	for _, op := range indexScatters {
		p, err := op.gpu(wgsl.F32, dl, 0, wgsl.Contiguous(100), sl, lim)
		wantKernels(t, op.name, p, err, 3)
		b := bufs{"dst": upload(t, g, f32bytes(dst)), "index": upload(t, g, i32bytes(index)), "src": upload(t, g, f32bytes(src))}
		runPlan(t, g, p, b)
		want := append([]float32(nil), dst...)
		if err := op.cpu(want, cl(dl), 0, index, src, cl(sl)); err != nil {
			t.Fatal(err)
		}
		approx.Require(t, op.name+" (bitwise)", readF32(t, g, b["dst"]), want, approx.AbsRel(0, 0))
	}

	il := wgsl.Contiguous(3, 100)
	sindex := r.i32s(300, 0, 7)
	p, err := wgsl.ScatterAdd(wgsl.I32, wgsl.Contiguous(3, 7), 1, il, il, lim)
	wantKernels(t, "scatter_add", p, err, 3)
	di, si := r.i32s(21, -100, 100), r.i32s(300, -100, 100)
	b := bufs{"dst": upload(t, g, i32bytes(di)), "index": upload(t, g, i32bytes(sindex)), "src": upload(t, g, i32bytes(si))}
	runPlan(t, g, p, b)
	wantI := append([]int32(nil), di...)
	if err := cpu.ScatterAdd(wantI, cl(wgsl.Contiguous(3, 7)), 1, sindex, cl(il), si, cl(il)); err != nil {
		t.Fatal(err)
	}
	approx.Require(t, "scatter_add", readI32(t, g, b["dst"]), wantI, approx.Exact)

	// MatMul: 5 batches in z ranges of 2, K = 1300 in ranges of 592 (64×64
	// tiles), 296 (128×128) and 37 (naive).
	out, a, bm := wgsl.Contiguous(5, 9, 7), rowMajor(5, 9, 1300, 0, false), colMajor(5, 1300, 7, 0, false)
	av, bv := r.f32s(bufferSize(a), -1, 1), r.f32s(bufferSize(bm), -1, 1)
	split := lim
	split.MaxWorkgroupsPerDimension = 2
	for _, gen := range []struct {
		name string
		f    func(out, a, b wgsl.Layout, lim wgsl.Limits) (wgsl.Plan, error)
	}{{"tiled64", tiled(64)}, {"tiled128", tiled(128)}, {"naive", wgsl.MatMulNaive}} {
		var got [2][]float32
		for i, l := range []wgsl.Limits{limits(g), split} {
			p, err := gen.f(out, a, bm, l)
			wantKernels(t, gen.name, p, err, 1+8*i)
			bs := bufs{"out": alloc(t, g, 4*layout.Numel(out.Shape)), "a": upload(t, g, f32bytes(av)), "b": upload(t, g, f32bytes(bv))}
			runPlan(t, g, p, bs)
			got[i] = readF32(t, g, bs["out"])
		}
		approx.Require(t, gen.name+" split (bitwise)", got[1], got[0], approx.AbsRel(0, 0))
	}
}
