package wgsl

import (
	"fmt"
	"sort"
)

// Reduction strategy thresholds (see Reduce).
const (
	serialMaxRed     = 32    // reduced extent up to which one invocation reduces a whole output
	serialSideBySide = 2048  // outputs from which side-by-side reductions run one invocation per output
	twoStageMaxOut   = 64    // outputs below which long reductions split into segments
	twoStageMinRed   = 16384 // reduced extent from which they do
	segmentTarget    = 8192  // elements per segment of the first stage
	maxSegments      = 256
)

// reduceDims is a reduction's coalesced kept and reduced dimensions, each
// set ordered by x stride (outermost first) as cpu.Reduce orders them.
type reduceDims struct {
	kShape, kX, kD []int // kept: extents, x strides, out strides
	rShape, rX     []int // reduced: extents, x strides
	nOut, nRed     int
}

func planReduceDims(out, x Layout) (reduceDims, error) {
	if err := checkLayout(x, "reduce input"); err != nil {
		return reduceDims{}, err
	}
	if err := checkLayout(out, "reduce output"); err != nil {
		return reduceDims{}, err
	}
	if len(out.Shape) != len(x.Shape) {
		return reduceDims{}, fmt.Errorf("wgsl: reduce: output rank %d, input rank %d (use the keepdim shape)", len(out.Shape), len(x.Shape))
	}
	type dim struct{ n, xs, ds int }
	var kept, red []dim
	for d, n := range x.Shape {
		switch {
		case out.Shape[d] == n:
			kept = append(kept, dim{n, x.Strides[d], out.Strides[d]})
		case out.Shape[d] == 1:
			red = append(red, dim{n, x.Strides[d], 0})
		default:
			return reduceDims{}, fmt.Errorf("wgsl: reduce: output shape %v does not keep or reduce input shape %v", out.Shape, x.Shape)
		}
	}
	for _, s := range [][]dim{kept, red} {
		sort.SliceStable(s, func(i, j int) bool { return s[i].xs > s[j].xs })
	}
	var r reduceDims
	split := func(ds []dim) (shape, xs, os []int) {
		for _, d := range ds {
			shape, xs, os = append(shape, d.n), append(xs, d.xs), append(os, d.ds)
		}
		return
	}
	ks, kx, kd := split(kept)
	rs, rx, _ := split(red)
	r.nOut, r.nRed = numel(ks), numel(rs)
	var st [][]int
	r.kShape, st = coalesce(ks, [][]int{kx, kd})
	r.kX, r.kD = st[0], st[1]
	r.rShape, st = coalesce(rs, [][]int{rx})
	r.rX = st[0]
	if len(r.kShape) > MaxRank || len(r.rShape) > MaxRank {
		return r, fmt.Errorf("wgsl: reduce: more than %d dimensions after coalescing", MaxRank)
	}
	return r, nil
}

// sideBySide reports whether neighbouring outputs are closer in x than
// neighbouring reduced elements, so one invocation per output reads
// memory in order.
func (r reduceDims) sideBySide() bool {
	return r.kX[len(r.kX)-1] < r.rX[len(r.rX)-1] && r.nOut > 1
}

// Reduce returns the plan computing out = op(x) over the dimensions where
// out (x's rank, the keepdim shape) has extent 1 and x does not. op is
// "sum", "max" or "min" (torch.amax/amin: a NaN anywhere makes the result
// NaN), typ is f32 or i32 (i32 sums wrap). f32 sums accumulate in f32
// (the CPU accumulates in float64: results agree within float
// tolerance). An empty reduced extent gives 0, as on the CPU.
//
// Strategy: reduced extents up to 32, and side-by-side reductions (the
// reduced dimension is outer in memory) with at least 2048 outputs, run
// one invocation per output. Otherwise one workgroup (64, or 256 for long
// rows) per output walks the row with a stride and finishes with a tree
// in workgroup memory. With fewer than 64 outputs of at least 16384
// elements (whole-tensor sums), the first stage reduces segments of about
// 8192 elements into a scratch buffer (Plan.Scratch, typ elements), and a
// second reduces the partial results.
//
// Bindings: "out" (read_write), "x" (read); the two-stage plan has
// "scratch" (read_write), "x" (read), then "out" (read_write), "scratch"
// (read).
func Reduce(op, typ string, out, x Layout, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	if op != "sum" && op != "max" && op != "min" {
		return Plan{}, fmt.Errorf("wgsl: Reduce: unknown op %q", op)
	}
	if typ != F32 && typ != I32 {
		return Plan{}, fmt.Errorf("wgsl: Reduce: type %q (want f32 or i32)", typ)
	}
	r, err := planReduceDims(out, x)
	if err != nil {
		return Plan{}, err
	}
	if r.nOut == 0 {
		return Plan{}, nil
	}
	if r.nRed == 0 {
		k, err := Elementwise("p0", nil, typ, ElementwiseArgs{Out: out, Limits: lim})
		return Plan{Kernels: []Kernel{k}}, err
	}
	serial := r.nRed <= serialMaxRed || (r.sideBySide() && r.nOut >= serialSideBySide)
	if serial || r.nOut >= twoStageMaxOut || r.nRed < twoStageMinRed {
		k, err := reduceKernel(op, typ, r, out.Offset, x.Offset, serial, 1, false, lim)
		return Plan{Kernels: []Kernel{k.Kernel}}, err
	}
	segs := min(maxSegments, (r.nRed+segmentTarget-1)/segmentTarget)
	k1, err := reduceKernel(op, typ, r, 0, x.Offset, false, segs, true, lim)
	if err != nil {
		return Plan{}, err
	}
	segs = int(k1.segs)
	k1.Bindings[0].Name = "scratch"
	// Stage 2 reduces the (kept..., segs) partials.
	r2 := reduceDims{
		kShape: r.kShape, kD: r.kD, kX: Contiguous(r.kShape...).Strides,
		rShape: []int{segs}, rX: []int{1}, nOut: r.nOut, nRed: segs,
	}
	for i := range r2.kX {
		r2.kX[i] *= segs
	}
	k2, err := reduceKernel(op, typ, r2, out.Offset, 0, segs <= serialMaxRed, 1, false, lim)
	if err != nil {
		return Plan{}, err
	}
	k2.Bindings[1].Name = "scratch"
	return Plan{Kernels: []Kernel{k1.Kernel, k2.Kernel}, Scratch: int64(4 * r.nOut * segs)}, nil
}

type segKernel struct {
	Kernel
	segs uint32
}

func reduceKernel(op, typ string, r reduceDims, outOff, xOff int, serial bool, segs int, partial bool, lim Limits) (segKernel, error) {
	kr, rr := len(r.kShape), len(r.rShape)
	p := NewParams(
		ParamField{"nout", "u32", 0}, ParamField{"nred", "u32", 0}, ParamField{"nseg", "u32", 0}, ParamField{"seglen", "u32", 0},
		ParamField{"offs", "array", 1},
		ParamField{"ksh", "array", vec4s(kr)}, ParamField{"kx", "array", vec4s(kr)}, ParamField{"kd", "array", vec4s(kr)},
		ParamField{"rsh", "array", vec4s(rr)}, ParamField{"rx", "array", vec4s(rr)},
	)
	seglen := (r.nRed + segs - 1) / segs
	segs = (r.nRed + seglen - 1) / seglen
	p.SetU32("nout", uint32(r.nOut)).SetU32("nred", uint32(r.nRed)).SetU32("nseg", uint32(segs)).SetU32("seglen", uint32(seglen))
	p.SetArray("offs", u32s([]int{xOff, outOff}, 4, 0))
	p.SetArray("ksh", u32s(r.kShape, 4*vec4s(kr), 1)).SetArray("kx", u32s(r.kX, 4*vec4s(kr), 0)).SetArray("kd", u32s(r.kD, 4*vec4s(kr), 0))
	p.SetArray("rsh", u32s(r.rShape, 4*vec4s(rr), 1)).SetArray("rx", u32s(r.rX, 4*vec4s(rr), 0))

	mode, wg := "group", lim.wgSize(64)
	if seglen >= 2048 {
		wg = lim.wgSize(256)
	}
	flat := "o"
	if serial {
		mode, wg = "serial", lim.wgSize(256)
	}
	d := rdData{
		Struct: p.Struct(), T: typ, Op: op, Mode: mode, WG: wg, Partial: partial,
		Identity: identity(op, typ),
		KeptWalk: walk{Flat: flat, Shape: "ksh", Rank: kr, Vars: []string{"xb", "ob"},
			Inits: []string{"params.offs[0].x", "params.offs[0].y"}, Strides: []string{"kx", "kd"}}.Code(),
		RedWalk: walk{Flat: "r", Shape: "rsh", Rank: rr, Vars: []string{"ro"}, Inits: []string{"0u"}, Strides: []string{"rx"}}.Code(),
	}
	if typ == F32 && op != "sum" {
		d.Prelude = mustPrelude("isnan_")
	}
	var groups [3]uint32
	var err error
	if serial {
		groups, err = Grid(r.nOut, wg, lim)
	} else {
		groups, err = Grid(r.nOut*segs, 1, lim)
	}
	if err != nil {
		return segKernel{}, err
	}
	src, err := render("reduce", fmt.Sprintf("%s|%s|%s|%d|%v|%d|%d", op, typ, mode, wg, partial, kr, rr), d)
	if err != nil {
		return segKernel{}, err
	}
	k := Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups,
		Bindings: []Binding{{Name: "out"}, {Name: "x", ReadOnly: true}}}
	return segKernel{k, uint32(segs)}, nil
}

type rdData struct {
	Struct, T, Op, Mode, Identity string
	WG                            int
	Partial, Vals                 bool
	Prelude, KeptWalk, RedWalk    string
}

func identity(op, typ string) string {
	switch {
	case op == "sum" && typ == F32:
		return "0.0"
	case op == "sum":
		return "0"
	case op == "max" && typ == F32:
		return "bitcast<f32>(0xff800000u)"
	case op == "max":
		return "i32(-2147483647 - 1)"
	case typ == F32:
		return "bitcast<f32>(0x7f800000u)"
	}
	return "2147483647"
}

// ArgReduce returns the kernel computing the index (int32, where torch
// returns int64) and, when vals is not nil, the value of the max (op
// "max") or min ("min") of x along dim. idx and vals are keepdim layouts
// (x's shape with extent 1 at dim). Ties go to the first occurrence; a
// NaN beats every number, the first NaN winning, as in torch. A 0-d x
// counts as shape [1]. An empty extent along dim gives no kernel (the
// caller rejects it).
//
// Lines of up to 32 elements, and side-by-side lines (dim outer in
// memory) when there are at least 2048, run one invocation per line;
// otherwise one workgroup per line reduces (value, index) pairs in
// workgroup memory.
//
// Bindings: "idx" (read_write), ["vals" (read_write)], "x" (read).
func ArgReduce(op, typ string, idx Layout, vals *Layout, x Layout, dim int, lim Limits) (Kernel, error) {
	lim = lim.orDefault()
	if op != "max" && op != "min" {
		return Kernel{}, fmt.Errorf("wgsl: ArgReduce: unknown op %q", op)
	}
	if typ != F32 && typ != I32 {
		return Kernel{}, fmt.Errorf("wgsl: ArgReduce: type %q (want f32 or i32)", typ)
	}
	ls := []Layout{x, idx}
	if vals != nil {
		ls = append(ls, *vals)
	}
	li, err := planLines("ArgReduce", ls, dim, offDim, false)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Kernel{}, err
	}
	kr := len(li.shape)
	p := NewParams(ParamField{"nout", "u32", 0}, ParamField{"len", "u32", 0}, ParamField{"xstride", "u32", 0},
		ParamField{"offs", "array", 1}, ParamField{"ksh", "array", vec4s(kr)},
		ParamField{"kx", "array", vec4s(kr)}, ParamField{"ki", "array", vec4s(kr)}, ParamField{"kv", "array", vec4s(kr)})
	p.SetU32("nout", uint32(li.nLines)).SetU32("len", uint32(li.length)).SetU32("xstride", uint32(li.dstep[0]))
	offs := []int{x.Offset, idx.Offset, 0}
	if vals != nil {
		offs[2] = vals.Offset
	}
	p.SetArray("offs", u32s(offs, 4, 0)).SetArray("ksh", u32s(li.shape, 4*vec4s(kr), 1))
	for k, f := range []string{"kx", "ki", "kv"}[:len(ls)] {
		p.SetArray(f, u32s(li.strides[k], 4*vec4s(kr), 0))
	}
	serial := li.length <= serialMaxRed || (li.sideBySide(0) && li.nLines >= serialSideBySide)
	mode, wg := "group", lim.wgSize(64)
	if serial {
		mode, wg = "serial", lim.wgSize(256)
	} else if li.length >= 2048 {
		wg = lim.wgSize(256)
	}
	w := walk{Flat: "o", Shape: "ksh", Rank: kr, Vars: []string{"xb", "ib"},
		Inits: []string{"params.offs[0].x", "params.offs[0].y"}, Strides: []string{"kx", "ki"}}
	if vals != nil {
		w.Vars, w.Inits, w.Strides = append(w.Vars, "vb"), append(w.Inits, "params.offs[0].z"), append(w.Strides, "kv")
	}
	d := rdData{Struct: p.Struct(), T: typ, Op: op, Mode: mode, WG: wg, Vals: vals != nil, KeptWalk: w.Code()}
	if typ == F32 {
		d.Prelude = mustPrelude("isnan_")
	}
	var groups [3]uint32
	if serial {
		groups, err = Grid(li.nLines, wg, lim)
	} else {
		groups, err = Grid(li.nLines, 1, lim)
	}
	if err != nil {
		return Kernel{}, err
	}
	src, err := render("argreduce", fmt.Sprintf("%s|%s|%s|%d|%v|%d", op, typ, mode, wg, vals != nil, kr), d)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups, Bindings: []Binding{{Name: "idx"}}}
	if vals != nil {
		k.Bindings = append(k.Bindings, Binding{Name: "vals"})
	}
	k.Bindings = append(k.Bindings, Binding{Name: "x", ReadOnly: true})
	return k, nil
}
