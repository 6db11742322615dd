package wgsl

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/layout"
)

// IndexSelect returns the kernel of torch.index_select: out[..., i, ...] =
// x[..., index[i], ...] along dim. index is a 1-D i32 view; out's shape is
// x's with dim's extent replaced by len(index). A 0-d x counts as shape
// [1]. Elements move as u32 bits (any 4-byte type).
//
// Bindings: "out" (read_write), "x" (read), "index" (read).
func IndexSelect(out, x Layout, dim int, index Layout, lim Limits) (Kernel, error) {
	if len(index.Shape) != 1 {
		return Kernel{}, fmt.Errorf("wgsl: IndexSelect: index has rank %d, want 1", len(index.Shape))
	}
	out, x, dim = layout.Promote0D(out, x, dim)
	if len(out.Shape) != len(x.Shape) || dim < 0 || dim >= len(out.Shape) || out.Shape[dim] != index.Shape[0] {
		return Kernel{}, fmt.Errorf("wgsl: IndexSelect: out %v, x %v, dim %d, index of %d", out.Shape, x.Shape, dim, index.Shape[0])
	}
	il := spread(index, out.Shape, dim)
	li, err := planLines("IndexSelect", []Layout{out, x, il}, dim, offDim, false)
	if err != nil {
		return Kernel{}, err
	}
	return gatherKernel(li, x.Shape[dim], index.Offset, lim)
}

// Gather returns the kernel of torch.gather: out[p] = x[p with coordinate
// index[p] along dim], index being an i32 view of out's shape whose
// extents off dim are at most x's. Elements move as u32 bits.
//
// Bindings: "out" (read_write), "x" (read), "index" (read).
func Gather(out, x Layout, dim int, index Layout, lim Limits) (Kernel, error) {
	if len(x.Shape) == 0 {
		out, x, index, dim = layout.One1D(out), layout.One1D(x), layout.One1D(index), 0
	}
	if !sameShape(index.Shape, out.Shape) {
		return Kernel{}, fmt.Errorf("wgsl: Gather: index shape %v, out %v", index.Shape, out.Shape)
	}
	li, err := planLines("Gather", []Layout{out, x, index}, dim, ranksOnly, false)
	if err != nil {
		return Kernel{}, err
	}
	return gatherKernel(li, x.Shape[dim], index.Offset, lim)
}

// SliceScatter returns the kernel of torch.slice_scatter into zeros: out
// = zeros of out's shape with x written into its slice
// [start:start+step·len(x):step] along dim, in one dispatch (every
// element of out is written: x's where the slice covers it, 0 elsewhere).
// out and x have one shape off dim; x's extent along dim is the slice's
// length, start ≥ 0 and step ≥ 1. Elements move as u32 bits (any 4-byte
// type).
//
// Bindings: "out" (read_write), "x" (read).
func SliceScatter(out, x Layout, dim, start, step int, lim Limits) (Kernel, error) {
	out, x, dim = layout.Promote0D(out, x, dim)
	if len(out.Shape) != len(x.Shape) || dim < 0 || dim >= len(out.Shape) || start < 0 || step < 1 ||
		(x.Shape[dim] > 0 && start+(x.Shape[dim]-1)*step >= out.Shape[dim]) {
		return Kernel{}, fmt.Errorf("wgsl: SliceScatter: out %v, x %v, dim %d, start %d, step %d", out.Shape, x.Shape, dim, start, step)
	}
	li, err := planLines("SliceScatter", []Layout{out, x}, dim, offDim, false)
	if err != nil {
		return Kernel{}, err
	}
	p, d, groups, err := indexPosition(indexData{Slice: true}, li, 0, lim)
	if err != nil {
		return Kernel{}, err
	}
	p.SetU32("xlen", uint32(x.Shape[dim])).SetU32("xstride", uint32(li.dstep[1])).SetU32("ostride", uint32(li.dstep[0]))
	p.SetU32("start", uint32(start)).SetU32("step", uint32(step))
	src, err := render("gather", d)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups,
		Bindings: []Binding{{Name: "out"}, {Name: "x", ReadOnly: true}}}, nil
}

// IndexAdd returns the plan of torch.index_add_ (in place on dst):
// dst[..., index[i], ...] += src[..., i, ...] along dim, typ f32 or i32.
// index is a 1-D i32 view; src's shape is dst's with dim's extent
// replaced by len(index). Deterministic: one invocation per element of
// dst scans the whole index (len(index) reads per element of dst) and
// adds the matching src elements in index order, the CPU's order, so
// results are bitwise equal. Out-of-range indices are skipped. A scan
// whose loop would cost more than Limits.MaxLoopTrips (loops.go) runs as
// one kernel per range of the index, in order, each adding to what the
// previous left: the same additions in the same order.
//
// Bindings: "dst" (read_write), "index" (read), "src" (read).
func IndexAdd(typ string, dst Layout, dim int, index, src Layout, lim Limits) (Plan, error) {
	return indexScatter("IndexAdd", false, typ, dst, dim, index, src, lim)
}

// IndexAmax returns the plan of torch.index_reduce_ with "amax" and
// include_self (in place on dst): dst[..., index[i], ...] =
// max(dst[..., index[i], ...], src[..., i, ...]) along dim, a NaN on
// either side winning; typ f32 or i32. Shapes, bindings, cost and the
// split of long scans are IndexAdd's.
func IndexAmax(typ string, dst Layout, dim int, index, src Layout, lim Limits) (Plan, error) {
	return indexScatter("IndexAmax", true, typ, dst, dim, index, src, lim)
}

// indexScatter is IndexAdd, or IndexAmax when takeMax.
func indexScatter(what string, takeMax bool, typ string, dst Layout, dim int, index, src Layout, lim Limits) (Plan, error) {
	if len(index.Shape) != 1 {
		return Plan{}, fmt.Errorf("wgsl: %s: index has rank %d, want 1", what, len(index.Shape))
	}
	dst, src, dim = layout.Promote0D(dst, src, dim)
	if len(dst.Shape) != len(src.Shape) || dim < 0 || dim >= len(dst.Shape) || src.Shape[dim] != index.Shape[0] {
		return Plan{}, fmt.Errorf("wgsl: %s: dst %v, src %v, dim %d, index of %d", what, dst.Shape, src.Shape, dim, index.Shape[0])
	}
	li, err := planLines(what, []Layout{dst, src, spread(index, dst.Shape, dim)}, dim, offDim, false)
	if err != nil {
		return Plan{}, err
	}
	return scatterKernel(indexData{Scatter: true, T: typ, Max: takeMax}, li, src.Shape[dim], index.Offset, nil, lim)
}

// ScatterAdd returns the plan of torch.scatter_add_ (in place on dst):
// dst[p with coordinate index[p] along dim] += src[p] for every position
// p of src, typ f32 or i32; index and src have one shape whose extents
// off dim are at most dst's. Deterministic: one invocation per element of
// dst scans its line of index along dim (src's extent along dim reads per
// element of dst) in order, so results are bitwise equal to the CPU's.
// Out-of-range indices are skipped. Long scans split as in IndexAdd.
//
// Bindings: "dst" (read_write), "index" (read), "src" (read).
func ScatterAdd(typ string, dst Layout, dim int, index, src Layout, lim Limits) (Plan, error) {
	if len(dst.Shape) == 0 {
		dst, index, src, dim = layout.One1D(dst), layout.One1D(index), layout.One1D(src), 0
	}
	if !sameShape(index.Shape, src.Shape) || len(src.Shape) != len(dst.Shape) || dim < 0 || dim >= len(dst.Shape) {
		return Plan{}, fmt.Errorf("wgsl: ScatterAdd: dst %v, index %v, src %v, dim %d", dst.Shape, index.Shape, src.Shape, dim)
	}
	var bounds []int
	for d := range dst.Shape {
		if d != dim && src.Shape[d] != dst.Shape[d] {
			if src.Shape[d] > dst.Shape[d] {
				return Plan{}, fmt.Errorf("wgsl: ScatterAdd: src %v exceeds dst %v off dim %d", src.Shape, dst.Shape, dim)
			}
			bounds = append([]int(nil), src.Shape...)
			bounds[dim] = 1
		}
	}
	li, err := planLines("ScatterAdd", []Layout{dst, src, index}, dim, ranksOnly, bounds != nil)
	if err != nil {
		return Plan{}, err
	}
	return scatterKernel(indexData{Scatter: true, T: typ, Bounded: bounds != nil}, li, src.Shape[dim], index.Offset, bounds, lim)
}

// spread views a 1-D index as an operand of shape: its stride along dim,
// 0 elsewhere.
func spread(index Layout, shape []int, dim int) Layout {
	st := make([]int, len(shape))
	st[dim] = index.Strides[0]
	return Layout{Shape: shape, Strides: st, Offset: index.Offset}
}

// indexData is the gather and scatter templates' data and render-cache
// key (see srcKey): which kernel (and for scatter, its combine), the element type (scatter), workgroup
// size, whether dim is inner in memory, whether positions are bounded
// (scatter) and the rank of the positions off dim.
type indexData struct {
	Scatter           bool
	Slice             bool // gather: SliceScatter's, positions from start and step, no index
	Max               bool // scatter: take the maximum instead of adding
	T                 string
	WG                int
	DimInner, Bounded bool
	KR                int
}

// vars are the offset variables of the operands: out (or dst), x (or
// src), index (none for SliceScatter).
func (d indexData) vars() []string {
	if d.Slice {
		return []string{"ob", "xb"}
	}
	if d.Scatter {
		return []string{"ob", "sb", "ib"}
	}
	return []string{"ob", "xb", "ib"}
}

// fields are the params: n, nlines, len, the kernel's own (gather: xlen
// and the strides along dim, then SliceScatter's start and step or the
// index's stride; scatter: the range of source positions
// jbeg, jend, the strides along dim and, bounded, kbound), offs, the
// positions' extents and each operand's strides over them.
func (d indexData) fields() []ParamField {
	fields := []ParamField{{"n", "u32", 0}, {"nlines", "u32", 0}, {"len", "u32", 0}}
	if d.Scatter {
		fields = append(fields, ParamField{"jbeg", "u32", 0}, ParamField{"jend", "u32", 0}, ParamField{"ostride", "u32", 0},
			ParamField{"sstride", "u32", 0}, ParamField{"istride", "u32", 0})
		if d.Bounded {
			fields = append(fields, ParamField{"kbound", "array", vec4s(d.KR)})
		}
	} else if d.Slice {
		fields = append(fields, ParamField{"xlen", "u32", 0}, ParamField{"xstride", "u32", 0}, ParamField{"ostride", "u32", 0},
			ParamField{"start", "u32", 0}, ParamField{"step", "u32", 0})
	} else {
		fields = append(fields, ParamField{"xlen", "u32", 0}, ParamField{"xstride", "u32", 0}, ParamField{"ostride", "u32", 0}, ParamField{"istride", "u32", 0})
	}
	fields = append(fields, ParamField{"offs", "array", 1}, ParamField{"ksh", "array", vec4s(d.KR)})
	for _, v := range d.vars() {
		fields = append(fields, ParamField{"k" + v, "array", vec4s(d.KR)})
	}
	return fields
}

// Prelude is isnan_ for the f32 scatter-max.
func (d indexData) Prelude() string {
	if d.Max && d.T == F32 {
		return mustPrelude("isnan_")
	}
	return ""
}

// Struct is the params' WGSL declaration.
func (d indexData) Struct() string { return NewParams(d.fields()...).Struct() }

// Walk turns the position index o into the operands' offsets (and,
// bounded, whether the position is inside the bounds).
func (d indexData) Walk() string {
	w := walk{Flat: "o", Shape: "ksh", Rank: d.KR}
	if d.Bounded {
		w.Valid, w.Bounds = "inside", "kbound"
	}
	for k, v := range d.vars() {
		w.Vars = append(w.Vars, v)
		w.Inits = append(w.Inits, ax("offs", k))
		w.Strides = append(w.Strides, "k"+v)
	}
	return w.Code()
}

// indexPosition fills d's rank and workgroup and the params shared by
// gather and scatter: n, nlines, len over the first operand, offs (the
// first two operands', then the index's), the positions off dim (ksh) and
// each operand's strides over them.
func indexPosition(d indexData, li lines, indexOff int, lim Limits) (*Params, indexData, [3]uint32, error) {
	lim = lim.orDefault()
	d.KR, d.WG, d.DimInner = len(li.shape), lim.wgSize(256), !li.sideBySide(0)
	p := NewParams(d.fields()...)
	n := li.nLines * li.length
	p.SetU32("n", uint32(n)).SetU32("nlines", uint32(li.nLines)).SetU32("len", uint32(li.length))
	p.SetArray("offs", u32s([]int{li.offs[0], li.offs[1], indexOff}, 4, 0))
	p.SetArray("ksh", u32s(li.shape, 4*vec4s(d.KR), 1))
	for k, v := range d.vars() {
		p.SetArray("k"+v, u32s(li.strides[k], 4*vec4s(d.KR), 0))
	}
	groups, err := Grid(n, d.WG, lim)
	return p, d, groups, err
}

func gatherKernel(li lines, xlen, indexOff int, lim Limits) (Kernel, error) {
	p, d, groups, err := indexPosition(indexData{}, li, indexOff, lim)
	if err != nil {
		return Kernel{}, err
	}
	p.SetU32("xlen", uint32(xlen)).SetU32("xstride", uint32(li.dstep[1])).SetU32("ostride", uint32(li.dstep[0])).SetU32("istride", uint32(li.dstep[2]))
	src, err := render("gather", d)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups,
		Bindings: []Binding{{Name: "out"}, {Name: "x", ReadOnly: true}, {Name: "index", ReadOnly: true}}}, nil
}

// scatterKernel returns the scatter-add (or, d.Max, scatter-max) plan: one kernel per range of
// at most Limits.MaxLoopTrips - 1 source positions along dim.
func scatterKernel(d indexData, li lines, slen, indexOff int, bounds []int, lim Limits) (Plan, error) {
	if d.T != F32 && d.T != I32 {
		return Plan{}, fmt.Errorf("wgsl: scatter: type %q (want f32 or i32)", d.T)
	}
	lim = lim.orDefault()
	p, d, groups, err := indexPosition(d, li, indexOff, lim)
	if err != nil {
		return Plan{}, err
	}
	p.SetU32("ostride", uint32(li.dstep[0])).SetU32("sstride", uint32(li.dstep[1])).SetU32("istride", uint32(li.dstep[2]))
	if d.Bounded {
		p.SetArray("kbound", u32s(bounds, 4*vec4s(d.KR), 1))
	}
	src, err := render("scatter", d)
	if err != nil {
		return Plan{}, err
	}
	var plan Plan
	for _, r := range spans(slen, lim.MaxLoopTrips-1) {
		p.SetU32("jbeg", uint32(r[0])).SetU32("jend", uint32(r[1]))
		plan.Kernels = append(plan.Kernels, Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups,
			Bindings: []Binding{{Name: "dst"}, {Name: "index", ReadOnly: true}, {Name: "src", ReadOnly: true}}})
	}
	return plan, nil
}
