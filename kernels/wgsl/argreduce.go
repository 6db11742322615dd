package wgsl

import "fmt"

// ArgReduce returns the plan computing the index (int32, where torch
// returns int64) and, when vals is not nil, the value of the max (op
// "max") or min ("min") of x along dim. idx and vals are keepdim layouts
// (x's shape with extent 1 at dim). Ties go to the first occurrence; a
// NaN beats every number, the first NaN winning, as in torch. A 0-d x
// counts as shape [1]. An empty extent along dim gives an empty plan (the
// caller rejects it).
//
// Lines of up to 32 elements, and side-by-side lines (dim outer in
// memory) when there are at least 2048, run one invocation per line;
// otherwise one workgroup per line reduces (value, index) pairs in
// workgroup memory. Fewer than 64 lines of at least 16384 elements, and
// lines whose loops would cost more than Limits.MaxLoopTrips (loops.go),
// split into segments as in Reduce: the first stage writes each
// segment's winner to the scratch buffer as a pair of u32 (value bits,
// index along the line), the second picks each line's winner from its
// segments' pairs, which segments' order and the indices make exact.
//
// Bindings: "idx" (read_write), ["vals" (read_write)], "x" (read); the
// two-stage plan has "scratch" (read_write), "x" (read), then "idx",
// ["vals"], "scratch" (read).
func ArgReduce(op, typ string, idx Layout, vals *Layout, x Layout, dim int, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	if op != "max" && op != "min" {
		return Plan{}, fmt.Errorf("wgsl: ArgReduce: unknown op %q", op)
	}
	if typ != F32 && typ != I32 {
		return Plan{}, fmt.Errorf("wgsl: ArgReduce: type %q (want f32 or i32)", typ)
	}
	ls := []Layout{x, idx}
	if vals != nil {
		ls = append(ls, *vals)
	}
	li, err := planLines("ArgReduce", ls, dim, offDim, false)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Plan{}, err
	}
	serial := li.length <= serialMaxRed || (li.sideBySide(0) && li.nLines >= serialSideBySide)
	_, segs, err := segments("ArgReduce", li.length, firstSegments(serial, li.nLines, li.length), func(seglen, _ int) int { return rowTrips(serial, seglen, lim) }, lim)
	if err != nil {
		return Plan{}, err
	}
	in := argLines{shape: li.shape, kx: li.strides[0], n: li.nLines, length: li.length, xstride: li.dstep[0], xoff: x.Offset}
	dst := &argDst{ki: li.strides[1], idxOff: idx.Offset}
	if vals != nil {
		dst.kv, dst.valsOff, dst.vals = li.strides[2], vals.Offset, true
	}
	if segs == 1 {
		k, err := argKernel(op, typ, in, serial, 1, false, dst, lim)
		return Plan{Kernels: []Kernel{k}}, err
	}
	k1, err := argKernel(op, typ, in, serial, segs, false, nil, lim)
	if err != nil {
		return Plan{}, err
	}
	pairs := in.pairs(serial, segs)
	serial2 := secondStageSerial(segs <= serialMaxRed || (pairs.sideBySide() && pairs.n >= serialSideBySide), segs, lim)
	if err := withinTrips("ArgReduce, second stage", rowTrips(serial2, segs, lim), lim); err != nil {
		return Plan{}, err
	}
	k2, err := argKernel(op, typ, pairs, serial2, 1, true, dst, lim)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Kernels: []Kernel{k1, k2}, Scratch: int64(8 * li.nLines * segs)}, nil
}

// argLines is what an argreduce kernel reads: n lines of length elements
// (or pairs), at positions shape with strides kx from xoff, xstride apart
// along a line.
type argLines struct {
	shape, kx                []int
	n, length, xstride, xoff int
}

// sideBySide reports whether neighbouring lines are closer in memory than
// neighbouring elements of one line.
func (a argLines) sideBySide() bool { return a.n > 1 && a.kx[len(a.kx)-1] < a.xstride }

// pairs returns the lines of the partial pairs that a first stage split
// into segs segments writes: at (line, segment) by workgroups, at
// (segment, line) serially.
func (a argLines) pairs(serial bool, segs int) argLines {
	p := argLines{shape: a.shape, kx: Contiguous(a.shape...).Strides, n: a.n, length: segs, xstride: 1}
	if serial {
		p.xstride = a.n
		return p
	}
	for i := range p.kx {
		p.kx[i] *= segs
	}
	return p
}

// argDst is where the final stage writes: idx, and vals when set, at
// their offsets and strides over the lines' positions.
type argDst struct {
	ki, kv          []int
	idxOff, valsOff int
	vals            bool
}

// argKernel renders one argreduce kernel over in, split into segs
// segments, reading pairs (pairsIn) or elements, and writing to dst, or
// when dst is nil each segment's pair to the scratch buffer.
func argKernel(op, typ string, in argLines, serial bool, segs int, pairsIn bool, dst *argDst, lim Limits) (Kernel, error) {
	seglen := ceilDiv(in.length, segs)
	segs = ceilDiv(in.length, seglen)
	d := argData{T: typ, Op: op, Mode: "group", WG: rowWG(serial, seglen, lim), Vals: dst != nil && dst.vals,
		PairsIn: pairsIn, PairsOut: dst == nil, KR: len(in.shape)}
	if serial {
		d.Mode = "serial"
	}
	kr := d.KR
	p := NewParams(d.fields()...)
	p.SetU32("nout", uint32(in.n)).SetU32("len", uint32(in.length)).SetU32("xstride", uint32(in.xstride))
	p.SetU32("nseg", uint32(segs)).SetU32("seglen", uint32(seglen))
	p.SetArray("ksh", u32s(in.shape, 4*vec4s(kr), 1)).SetArray("kx", u32s(in.kx, 4*vec4s(kr), 0))
	offs := []int{in.xoff, 0, 0}
	if dst != nil {
		offs[1], offs[2] = dst.idxOff, dst.valsOff
		p.SetArray("ki", u32s(dst.ki, 4*vec4s(kr), 0))
		if d.Vals {
			p.SetArray("kv", u32s(dst.kv, 4*vec4s(kr), 0))
		}
	}
	p.SetArray("offs", u32s(offs, 4, 0))
	groups, err := rowGrid(serial, in.n*segs, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	src, err := render("argreduce", d)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups}
	input := Binding{Name: "x", ReadOnly: true}
	if pairsIn {
		input.Name = "scratch"
	}
	switch {
	case dst == nil:
		k.Bindings = []Binding{{Name: "scratch"}, input}
	case d.Vals:
		k.Bindings = []Binding{{Name: "idx"}, {Name: "vals"}, input}
	default:
		k.Bindings = []Binding{{Name: "idx"}, input}
	}
	return k, nil
}

// argData is the argreduce template's data and render-cache key (see
// srcKey): op, type, strategy ("serial" or "group"), workgroup size,
// whether it writes values, reads or writes (value, index) pairs, and the
// rank of the lines' positions.
type argData struct {
	T, Op, Mode             string
	WG                      int
	Vals, PairsIn, PairsOut bool
	KR                      int
}

// fields are the params: counts, offs (x, idx, vals), the positions'
// extents and the strides over them of x, idx and vals.
func (d argData) fields() []ParamField {
	return []ParamField{{"nout", "u32", 0}, {"len", "u32", 0}, {"xstride", "u32", 0},
		{"nseg", "u32", 0}, {"seglen", "u32", 0},
		{"offs", "array", 1}, {"ksh", "array", vec4s(d.KR)},
		{"kx", "array", vec4s(d.KR)}, {"ki", "array", vec4s(d.KR)}, {"kv", "array", vec4s(d.KR)}}
}

// Struct is the params' WGSL declaration.
func (d argData) Struct() string { return NewParams(d.fields()...).Struct() }

// Prelude is isnan_ for f32.
func (d argData) Prelude() string {
	if d.T == F32 {
		return mustPrelude("isnan_")
	}
	return ""
}

// KeptWalk turns the line index o into the offsets xb and, unless the
// kernel writes pairs, ib (and vb with values).
func (d argData) KeptWalk() string {
	w := walk{Flat: "o", Shape: "ksh", Rank: d.KR, Vars: []string{"xb"}, Inits: []string{"params.offs[0].x"}, Strides: []string{"kx"}}
	if !d.PairsOut {
		w.Vars, w.Inits, w.Strides = append(w.Vars, "ib"), append(w.Inits, "params.offs[0].y"), append(w.Strides, "ki")
	}
	if d.Vals {
		w.Vars, w.Inits, w.Strides = append(w.Vars, "vb"), append(w.Inits, "params.offs[0].z"), append(w.Strides, "kv")
	}
	return w.Code()
}
