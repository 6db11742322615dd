package wgsl

import (
	"fmt"
	"sort"

	"github.com/tessera-ml/tessera/internal/layout"
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
	r.nOut, r.nRed = layout.Numel(ks), layout.Numel(rs)
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
// second reduces the partial results. Rows whose loops would cost more
// than Limits.MaxLoopTrips (loops.go) split into segments the same way,
// in either mode (one invocation per segment and output, serially).
//
// Bindings: "out" (read_write), "x" (read); the two-stage plan has
// "scratch" (read_write), "x" (read), then "out" (read_write), "scratch"
// (read).
func Reduce(op, typ string, out, x Layout, lim Limits) (Plan, error) {
	return reduce(op, typ, out, x, nil, lim)
}

// reduce is Reduce, reading x through the prologue pro when not nil.
func reduce(op, typ string, out, x Layout, pro *proPlan, lim Limits) (Plan, error) {
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
	_, segs, err := segments("Reduce", r.nRed, firstSegments(serial, r.nOut, r.nRed), func(seglen, _ int) int { return rowTrips(serial, seglen, lim) }, lim)
	if err != nil {
		return Plan{}, err
	}
	if segs == 1 {
		k, err := reduceKernel(op, typ, r, out.Offset, x.Offset, serial, 1, false, pro, lim)
		return Plan{Kernels: []Kernel{k}}, err
	}
	k1, err := reduceKernel(op, typ, r, 0, x.Offset, serial, segs, true, pro, lim)
	if err != nil {
		return Plan{}, err
	}
	k1.Bindings[0].Name = "scratch"
	r2 := r.partials(serial, segs)
	serial2 := secondStageSerial(r2.nRed <= serialMaxRed || (r2.sideBySide() && r2.nOut >= serialSideBySide), segs, lim)
	if err := withinTrips("Reduce, second stage", rowTrips(serial2, segs, lim), lim); err != nil {
		return Plan{}, err
	}
	k2, err := reduceKernel(op, typ, r2, out.Offset, 0, serial2, 1, false, nil, lim)
	if err != nil {
		return Plan{}, err
	}
	k2.Bindings[1].Name = "scratch"
	return Plan{Kernels: []Kernel{k1, k2}, Scratch: int64(4 * r.nOut * segs)}, nil
}

// fewLong reports whether rows of n elements are few and long: fewer
// than 64 of at least 16384 elements, which segments of about 8192
// elements reduce in parallel.
func fewLong(rows, n int) bool { return rows < twoStageMaxOut && n >= twoStageMinRed }

// firstSegments is the segment count a row kernel's strategy starts from
// (before the loop trip limit may ask for more): segments of about 8192
// elements for few long rows reduced by workgroups, else one.
func firstSegments(serial bool, rows, n int) int {
	if !serial && fewLong(rows, n) {
		return min(maxSegments, ceilDiv(n, segmentTarget))
	}
	return 1
}

// secondStageSerial reports whether the second stage of a two-stage
// plan, which reduces segs partial results per row, runs one invocation
// per row: where the strategy says so and its loop fits the limit.
func secondStageSerial(strategy bool, segs int, lim Limits) bool {
	return strategy && rowTrips(true, segs, lim) <= lim.MaxLoopTrips
}

// partials returns the dimensions of the second stage, which reduces the
// segs partial results of each output that the first stage wrote: as
// (output, segment) by workgroups, as (segment, output) serially.
func (r reduceDims) partials(serial bool, segs int) reduceDims {
	r2 := reduceDims{
		kShape: r.kShape, kD: r.kD, kX: Contiguous(r.kShape...).Strides,
		rShape: []int{segs}, rX: []int{1}, nOut: r.nOut, nRed: segs,
	}
	if serial {
		r2.rX[0] = r.nOut
		return r2
	}
	for i := range r2.kX {
		r2.kX[i] *= segs
	}
	return r2
}

// reduceKernel renders one reduce kernel over r, split into segs segments
// (1: whole rows). With partial, the kernel writes each segment's result
// to out (the scratch buffer) at o·segs + s by workgroups, or s·nOut + o
// serially, else each output's to out through r.kD. With pro, x is
// computed by that prologue.
func reduceKernel(op, typ string, r reduceDims, outOff, xOff int, serial bool, segs int, partial bool, pro *proPlan, lim Limits) (Kernel, error) {
	seglen := ceilDiv(r.nRed, segs)
	segs = ceilDiv(r.nRed, seglen)
	d := rdData{T: typ, Op: op, Mode: "group", WG: rowWG(serial, seglen, lim), Partial: partial, KR: len(r.kShape), RR: len(r.rShape)}
	if serial {
		d.Mode = "serial"
	}
	if pro != nil {
		d.rdPro = pro.d
	}
	p := NewParams(d.fields()...)
	kr, rr := d.KR, d.RR
	p.SetU32("nout", uint32(r.nOut)).SetU32("nred", uint32(r.nRed)).SetU32("nseg", uint32(segs)).SetU32("seglen", uint32(seglen))
	p.SetArray("offs", u32s([]int{xOff, outOff}, 4, 0))
	p.SetArray("ksh", u32s(r.kShape, 4*vec4s(kr), 1)).SetArray("kx", u32s(r.kX, 4*vec4s(kr), 0)).SetArray("kd", u32s(r.kD, 4*vec4s(kr), 0))
	p.SetArray("rsh", u32s(r.rShape, 4*vec4s(rr), 1)).SetArray("rx", u32s(r.rX, 4*vec4s(rr), 0))
	pro.setParams(p)
	groups, err := rowGrid(serial, r.nOut*segs, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	src, err := render("reduce", d)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: p.Bytes(), Groups: groups, Bindings: d.bindings()}, nil
}

// rowGrid is the grid of a row kernel over n rows (or row segments): one
// invocation each in workgroups of wg (serial), else one workgroup each.
func rowGrid(serial bool, n, wg int, lim Limits) ([3]uint32, error) {
	if serial {
		return Grid(n, wg, lim)
	}
	return Grid(n, 1, lim)
}

// rdData is the reduce template's data and render-cache key (see
// srcKey): op, type, strategy ("serial" or "group"), workgroup size,
// whether it writes segments' partial results, the ranks of the kept
// and reduced dimensions, and the prologue computing x, if any.
type rdData struct {
	rdPro
	T, Op, Mode string
	WG          int
	Partial     bool
	KR, RR      int
}

// fields are the params: counts, offs (x, out), the kept extents and
// their x and out strides, the reduced extents and their x strides.
func (d rdData) fields() []ParamField {
	return append([]ParamField{
		{"nout", "u32", 0}, {"nred", "u32", 0}, {"nseg", "u32", 0}, {"seglen", "u32", 0},
		{"offs", "array", 1},
		{"ksh", "array", vec4s(d.KR)}, {"kx", "array", vec4s(d.KR)}, {"kd", "array", vec4s(d.KR)},
		{"rsh", "array", vec4s(d.RR)}, {"rx", "array", vec4s(d.RR)},
	}, d.rdPro.fields()...)
}

// Struct is the params' WGSL declaration.
func (d rdData) Struct() string { return NewParams(d.fields()...).Struct() }

// Identity is the reduction's identity, a WGSL literal of type T.
func (d rdData) Identity() string { return identity(d.Op, d.T) }

// Prelude is isnan_ for f32 max and min (XVal declares it with a
// prologue's helpers).
func (d rdData) Prelude() string {
	if d.T == F32 && d.Op != "sum" && d.Fns == "" {
		return mustPrelude("isnan_")
	}
	return ""
}

// KeptWalk turns the output index o into the offsets xb and ob.
func (d rdData) KeptWalk() string {
	return walk{Flat: "o", Shape: "ksh", Rank: d.KR, Vars: []string{"xb", "ob"},
		Inits: []string{"params.offs[0].x", "params.offs[0].y"}, Strides: []string{"kx", "kd"}}.Code()
}

// RedWalk turns the reduced index r into the offset ro.
func (d rdData) RedWalk() string {
	return walk{Flat: "r", Shape: "rsh", Rank: d.RR, Vars: []string{"ro"}, Inits: []string{"0u"}, Strides: []string{"rx"}}.Code()
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
