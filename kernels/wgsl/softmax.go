package wgsl

import "fmt"

// LineArgs are the operands of a kernel along lines of one dimension.
type LineArgs struct {
	Out, X Layout // same shape; a 0-d X counts as shape [1]
	Dim    int
	// InPlace says X lives in Out's buffer (with X's layout, normally
	// equal to Out's): it is read through the output binding.
	InPlace bool
	Limits  Limits
}

// Softmax returns the plan writing softmax (log false) or log-softmax
// (log true) of X along Dim into Out, f32, in three passes over each line:
// the max m (NaN wins), s = Σ exp(x - m) accumulated in f32, then
// exp(x - m)/s or (x - m) - log s (as log1p(s - 1), accurate when one
// element dominates). A line whose max is not finite (a NaN,
// a +inf, or all -inf) is all NaN, as in torch.
//
// Lines of up to 32 elements, and side-by-side lines (Dim outer in
// memory) when there are at least 2048, run one invocation per line;
// otherwise one workgroup (64, or 256 from 2048 elements) per line: one
// kernel. Fewer than 64 lines of at least 16384 elements, and lines whose
// loops would cost more than Limits.MaxLoopTrips (loops.go), split into
// segments of about 8192 elements, one workgroup each, in three kernels:
// each segment's max, then each segment's Σ exp(x - m) given the line's
// max m (the max of its segments'), then the output given m and the sum
// of the segments' sums, added in segment order. The scratch buffer holds
// the partial maxes and sums (8 bytes per segment).
//
// Bindings: "out" (read_write), then "x" (read) unless InPlace. The
// segmented plan's kernels bind "scratch" (read_write), "x" (read; "out"
// when InPlace); "scratch" (read_write), "x" (likewise); then "out"
// (read_write), "scratch" (read), "x" (read) unless InPlace.
func Softmax(log bool, a LineArgs) (Plan, error) {
	li, d, err := lineKernel("Softmax", F32, a)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Plan{}, err
	}
	lim := a.Limits.orDefault()
	n := li.length
	d.Softmax, d.Log = true, log
	serial := (n <= serialMaxRed || (li.sideBySide(0) && li.nLines >= serialSideBySide)) && 3*trips(n) <= lim.MaxLoopTrips
	few := fewLong(li.nLines, n)
	if serial || !few && softmaxGroupTrips(n, lim) <= lim.MaxLoopTrips {
		d.Mode, d.WG = "group", rowWG(serial, n, lim)
		if serial {
			d.Mode = "serial"
		}
		k, err := d.kernel("softmax", serial, li.nLines, lim, d.bindings())
		return Plan{Kernels: []Kernel{k}}, err
	}
	seglen, segs, err := segments("Softmax", n, max(2, firstSegments(false, li.nLines, n)), func(seglen, segs int) int {
		wg := rowWG(false, seglen, lim)
		strided := trips(ceilDiv(seglen, wg))
		return max(trips(segs)+strided+treeTrips(wg), 2*trips(segs)+strided)
	}, lim)
	if err != nil {
		return Plan{}, err
	}
	// Pass 1: the segments' maxes, scratch[o·segs + s].
	k1, err := d.partials("max", li, a.X.Offset, false, segs, lim)
	if err != nil {
		return Plan{}, err
	}
	x := d.inputBinding()
	// Passes 2 and 3: the sums into scratch[segs·nLines + o·segs + s],
	// then the output.
	d.p.SetU32("nseg", uint32(segs)).SetU32("seglen", uint32(seglen)).SetU32("part", uint32(segs*li.nLines))
	d.WG = rowWG(false, seglen, lim)
	plan := Plan{Kernels: []Kernel{k1}, Scratch: int64(8 * segs * li.nLines)}
	for _, stage := range []int{2, 3} {
		binds := []Binding{{Name: "scratch"}, x}
		if stage == 3 {
			binds = d.bindings(Binding{Name: "scratch", ReadOnly: true})
		}
		d.Stage = stage
		k, err := d.kernel("softmax_seg", false, li.nLines*segs, lim, binds)
		if err != nil {
			return Plan{}, err
		}
		plan.Kernels = append(plan.Kernels, k)
	}
	return plan, nil
}

// softmaxGroupTrips is what an invocation of the one-workgroup-per-line
// softmax costs: three strided loops and two trees.
func softmaxGroupTrips(n int, lim Limits) int {
	wg := rowWG(false, n, lim)
	return 3*trips(ceilDiv(n, wg)) + 2*treeTrips(wg)
}

// CumSum returns the plan writing the inclusive cumulative sum of X along
// Dim into Out, typ f32 or i32 (i32 wraps; torch would return int64),
// accumulating in typ (the CPU accumulates f32 in float64: results agree
// within float tolerance). One invocation walks each line serially,
// except for fewer than 64 lines of at least 16384 elements and lines
// whose loop would cost more than Limits.MaxLoopTrips (loops.go): those
// split into chunks of about 8192 elements for a chunked scan in three
// kernels: each chunk's total (a serial Reduce stage) into the scratch
// buffer, then per line the exclusive scan of its chunks' totals in
// place, then one invocation per chunk scans it from its offset.
//
// Bindings: "out" (read_write), then "x" (read) unless InPlace. The
// chunked plan's kernels bind "scratch" (read_write), "x" (read; "out"
// when InPlace); "scratch" (read_write); then "out" (read_write), "x"
// (read) unless InPlace, "scratch" (read).
func CumSum(typ string, a LineArgs) (Plan, error) {
	if typ != F32 && typ != I32 {
		return Plan{}, fmt.Errorf("wgsl: CumSum: type %q (want f32 or i32)", typ)
	}
	li, d, err := lineKernel("CumSum", typ, a)
	if err != nil || li.nLines == 0 || li.length == 0 {
		return Plan{}, err
	}
	lim := a.Limits.orDefault()
	n := li.length
	d.WG = lim.wgSize(256)
	if !fewLong(li.nLines, n) && trips(n) <= lim.MaxLoopTrips {
		k, err := d.kernel("cumsum", true, li.nLines, lim, d.bindings())
		return Plan{Kernels: []Kernel{k}}, err
	}
	seglen, segs, err := segments("CumSum", n, ceilDiv(n, segmentTarget), func(seglen, segs int) int { return max(trips(seglen), trips(segs)) }, lim)
	if err != nil {
		return Plan{}, err
	}
	// Pass 1: the chunks' totals, scratch[c·nLines + o].
	k1, err := d.partials("sum", li, a.X.Offset, true, segs, lim)
	if err != nil {
		return Plan{}, err
	}
	d.p.SetU32("nseg", uint32(segs)).SetU32("seglen", uint32(seglen))
	k2, err := d.kernel("cumsum_offsets", true, li.nLines, lim, []Binding{{Name: "scratch"}})
	if err != nil {
		return Plan{}, err
	}
	d.Chunked = true
	k3, err := d.kernel("cumsum", true, li.nLines*segs, lim, d.bindings(Binding{Name: "scratch", ReadOnly: true}))
	if err != nil {
		return Plan{}, err
	}
	return Plan{Kernels: []Kernel{k1, k2, k3}, Scratch: int64(4 * segs * li.nLines)}, nil
}

// lineData is the line templates' data and render-cache key (see
// srcKey): the element type, the strategy ("serial" or "group") and
// workgroup size, the pass of a segmented plan, which kernel (softmax or
// log-softmax, else cumsum), whether x lives in out, whether a cumsum
// scans chunks, and the rank of the lines' positions.
type lineData struct {
	T, Mode                        string
	WG, Stage                      int
	Softmax, Log, InPlace, Chunked bool
	KR                             int
}

// fields are the params: nout, len, xstride, ostride, nseg, seglen,
// part, offs (x, out), the positions' extents (ksh) and the strides over
// them of x (kx) and out (ko).
func (d lineData) fields() []ParamField {
	return []ParamField{{"nout", "u32", 0}, {"len", "u32", 0}, {"xstride", "u32", 0}, {"ostride", "u32", 0},
		{"nseg", "u32", 0}, {"seglen", "u32", 0}, {"part", "u32", 0},
		{"offs", "array", 1}, {"ksh", "array", vec4s(d.KR)}, {"kx", "array", vec4s(d.KR)}, {"ko", "array", vec4s(d.KR)}}
}

// Struct is the params' WGSL declaration.
func (d lineData) Struct() string { return NewParams(d.fields()...).Struct() }

// Prelude is the helpers softmax calls.
func (d lineData) Prelude() string {
	if d.Softmax {
		return mustPrelude("isnan_", "isinf_", "log1p")
	}
	return ""
}

// KeptWalk turns the line index o into the offsets xb and ob.
func (d lineData) KeptWalk() string {
	return walk{Flat: "o", Shape: "ksh", Rank: d.KR, Vars: []string{"xb", "ob"},
		Inits: []string{"params.offs[0].x", "params.offs[0].y"}, Strides: []string{"kx", "ko"}}.Code()
}

// A linePlan is a LineArgs plan in the making: the template data and the
// params its kernels share.
type linePlan struct {
	lineData
	p *Params
}

// lineKernel plans the lines of a LineArgs kernel and fills its params:
// nout, len, xstride, ostride, nseg and seglen (1 and len: whole lines),
// part (0), offs (x, out), ksh, kx, ko.
func lineKernel(what, typ string, a LineArgs) (lines, *linePlan, error) {
	li, err := planLines(what, []Layout{a.X, a.Out}, a.Dim, allDims, false)
	if err != nil {
		return li, nil, err
	}
	d := &linePlan{lineData: lineData{T: typ, InPlace: a.InPlace, KR: len(li.shape)}}
	kr := d.KR
	p := NewParams(d.fields()...)
	p.SetU32("nout", uint32(li.nLines)).SetU32("len", uint32(li.length)).SetU32("xstride", uint32(li.dstep[0])).SetU32("ostride", uint32(li.dstep[1]))
	p.SetU32("nseg", 1).SetU32("seglen", uint32(li.length))
	p.SetArray("offs", u32s([]int{a.X.Offset, a.Out.Offset}, 4, 0)).SetArray("ksh", u32s(li.shape, 4*vec4s(kr), 1))
	p.SetArray("kx", u32s(li.strides[0], 4*vec4s(kr), 0)).SetArray("ko", u32s(li.strides[1], 4*vec4s(kr), 0))
	d.p = p
	return li, d, nil
}

// partials returns the first pass of a segmented plan: a Reduce stage
// writing op over each of the segs segments of each line to the scratch
// buffer (serial: at s·nLines + o; else at o·segs + s), reading x through
// inputBinding.
func (d *linePlan) partials(op string, li lines, xOff int, serial bool, segs int, lim Limits) (Kernel, error) {
	r := reduceDims{kShape: li.shape, kX: li.strides[0], kD: make([]int, len(li.shape)),
		rShape: []int{li.length}, rX: []int{li.dstep[0]}, nOut: li.nLines, nRed: li.length}
	k, err := reduceKernel(op, d.T, r, 0, xOff, serial, segs, true, nil, lim)
	k.Bindings = []Binding{{Name: "scratch"}, d.inputBinding()}
	return k, err
}

// inputBinding is the read-only binding through which a kernel that
// writes only scratch reads x: "out" when x lives there.
func (d lineData) inputBinding() Binding {
	if d.InPlace {
		return Binding{Name: "out", ReadOnly: true}
	}
	return Binding{Name: "x", ReadOnly: true}
}

// bindings returns "out", then "x" unless in place, then extra.
func (d lineData) bindings(extra ...Binding) []Binding {
	b := []Binding{{Name: "out"}}
	if !d.InPlace {
		b = append(b, Binding{Name: "x", ReadOnly: true})
	}
	return append(b, extra...)
}

// kernel renders template tmpl with the current data and params over n
// rows: invocations in workgroups of d.WG (serial), else workgroups.
func (d *linePlan) kernel(tmpl string, serial bool, n int, lim Limits, bindings []Binding) (Kernel, error) {
	groups, err := rowGrid(serial, n, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	src, err := render(tmpl, d.lineData)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Source: src, Entry: "main", Params: d.p.Bytes(), Groups: groups, Bindings: bindings}, nil
}
