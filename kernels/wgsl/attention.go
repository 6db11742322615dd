package wgsl

import "fmt"

// AttentionShape is the geometry of a variable-length scaled
// dot-product attention (cpu.Attention) over packed rows: q, k, v and
// out are contiguous (N, H, D) f32 arrays at the element offsets below,
// a segment table "seg" holds each row's segment as two i32 (start,
// end), MaxSpan is the most keys a row sees (the longest segment), and
// row i attends, with weights softmax(Scale·q[i]·k[j]), to the keys of
// its segment (up to i when Causal).
type AttentionShape struct {
	N, H, D int
	MaxSpan int
	Scale   float32
	Causal  bool
	// Element offsets of the operands in their buffers: Q, K, V, Out,
	// LSE (N, H), Seg, G (the gradient of out) and Res, the backward's
	// (3, N, H, D) result holding dq, dk and dv.
	Q, K, V, Out, LSE, Seg, G, Res int
}

// attentionData is the attention templates' data and render-cache key.
type attentionData struct {
	D, WG int
	Keys  bool // attention_grad: the pass over keys (dk, dv)
}

func (attentionData) fields() []ParamField {
	var f []ParamField
	for _, name := range []string{"n", "heads", "causal", "k0", "kc", "soff", "qoff", "koff", "voff", "ooff", "loff", "goff", "dqoff", "dkoff", "dvoff"} {
		f = append(f, ParamField{name, "u32", 0})
	}
	return append(f, ParamField{"scale", "f32", 0})
}

// Struct is the params' WGSL declaration.
func (d attentionData) Struct() string { return NewParams(d.fields()...).Struct() }

// check rejects shapes the kernels cannot address or loop over.
func (a AttentionShape) check(what string) error {
	if a.N < 0 || a.H < 1 || a.D < 1 || a.MaxSpan < 0 || a.MaxSpan > a.N {
		return fmt.Errorf("wgsl: %s: bad shape %+v", what, a)
	}
	if 3*a.N*a.H*a.D >= 1<<31 {
		return fmt.Errorf("wgsl: %s: (%d, %d, %d) exceeds the 2^31 elements a kernel addresses", what, a.N, a.H, a.D)
	}
	return nil
}

// chunk returns how many keys one dispatch's loop may visit when each
// costs perKey trips on top of fixed trips, and how many dispatches
// cover MaxSpan keys.
func (a AttentionShape) chunk(what string, fixed, perKey int, lim Limits) (kc, n int, err error) {
	kc = (lim.MaxLoopTrips - fixed - 1) / perKey
	if kc < 1 {
		return 0, 0, fmt.Errorf("wgsl: %s: head size %d loops more than the %d trips an invocation may take", what, a.D, lim.MaxLoopTrips)
	}
	return kc, max(1, ceilDiv(a.MaxSpan, kc)), nil
}

// params returns the params of every attention kernel, for chunk k0 of
// kc keys.
func (a AttentionShape) params(d attentionData, k0, kc int) []byte {
	p := NewParams(d.fields()...)
	causal := 0
	if a.Causal {
		causal = 1
	}
	for name, v := range map[string]int{"n": a.N * a.H, "heads": a.H, "causal": causal, "k0": k0, "kc": kc, "soff": a.Seg,
		"qoff": a.Q, "koff": a.K, "voff": a.V, "ooff": a.Out, "loff": a.LSE, "goff": a.G,
		"dqoff": a.Res, "dkoff": a.Res + a.N*a.H*a.D, "dvoff": a.Res + 2*a.N*a.H*a.D} {
		p.SetU32(name, uint32(v))
	}
	return p.SetF32("scale", a.Scale).Bytes()
}

// attentionKernels renders template name and returns one kernel per
// chunk of kc keys covering MaxSpan.
func (a AttentionShape) attentionKernels(name string, d attentionData, kc, chunks int, binds []Binding, lim Limits) ([]Kernel, error) {
	groups, err := Grid(a.N*a.H, d.WG, lim)
	if err != nil {
		return nil, err
	}
	src, err := render(name, d)
	if err != nil {
		return nil, err
	}
	ks := make([]Kernel, chunks)
	for c := range ks {
		ks[c] = Kernel{Source: src, Entry: "main", Params: a.params(d, c*kc, kc), Groups: groups, Bindings: binds}
	}
	return ks, nil
}

// AttentionForward returns the plan writing out (N, H, D) and lse (N,
// H), the logsumexp of each row's scaled scores, as cpu.AttentionForward:
// one invocation per (row, head) streams over its keys with an online
// softmax, never forming a score matrix. Rows longer than one
// invocation's loop budget (Limits.MaxLoopTrips) take several dispatches
// over chunks of keys, each resuming from the normalised state the last
// one stored; their number depends on the longest segment only, never on
// the number of segments.
//
// Bindings: "out", "lse" (read_write), "q", "k", "v", "seg" (read).
func AttentionForward(a AttentionShape, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	if err := a.check("AttentionForward"); err != nil {
		return Plan{}, err
	}
	d := attentionData{D: a.D, WG: lim.wgSize(64)}
	kc, n, err := a.chunk("AttentionForward", 3*trips(a.D), 1+2*trips(a.D), lim)
	if err != nil {
		return Plan{}, err
	}
	ks, err := a.attentionKernels("attention_fwd", d, kc, n, []Binding{{Name: "out"}, {Name: "lse"},
		{Name: "q", ReadOnly: true}, {Name: "k", ReadOnly: true}, {Name: "v", ReadOnly: true}, {Name: "seg", ReadOnly: true}}, lim)
	return Plan{Kernels: ks}, err
}

// AttentionBackward returns the plan writing dq, dk and dv into "res",
// the (3, N, H, D) result at a.Res, as cpu.AttentionBackward: a kernel
// for δ = rowsum(g ⊙ out) into the scratch buffer, then a pass over rows
// for dq and a pass over keys for dk and dv, each recomputing the
// weights from q, k and lse (and each split into chunks of keys as
// AttentionForward is). No pass writes another invocation's rows.
//
// Bindings: "res", "scratch" (read_write), "q", "k", "v", "out", "g",
// "lse", "seg" (read); no kernel binds more than eight.
func AttentionBackward(a AttentionShape, lim Limits) (Plan, error) {
	lim = lim.orDefault()
	if err := a.check("AttentionBackward"); err != nil {
		return Plan{}, err
	}
	wg := lim.wgSize(64)
	if trips(a.D) > lim.MaxLoopTrips {
		return Plan{}, fmt.Errorf("wgsl: AttentionBackward: head size %d loops more than the %d trips an invocation may take", a.D, lim.MaxLoopTrips)
	}
	delta, err := a.attentionKernels("attention_delta", attentionData{D: a.D, WG: wg}, 0, 1,
		[]Binding{{Name: "scratch"}, {Name: "g", ReadOnly: true}, {Name: "out", ReadOnly: true}}, lim)
	if err != nil {
		return Plan{}, err
	}
	kc, n, err := a.chunk("AttentionBackward", 2*trips(a.D), 1+3*trips(a.D), lim)
	if err != nil {
		return Plan{}, err
	}
	ro := func(name string) Binding { return Binding{Name: name, ReadOnly: true} }
	binds := []Binding{{Name: "res"}, ro("q"), ro("k"), ro("v"), ro("g"), ro("lse"), ro("scratch"), ro("seg")}
	plan := Plan{Kernels: delta, Scratch: int64(4 * max(1, a.N*a.H))}
	for _, keys := range []bool{false, true} {
		ks, err := a.attentionKernels("attention_grad", attentionData{D: a.D, WG: wg, Keys: keys}, kc, n, binds, lim)
		if err != nil {
			return Plan{}, err
		}
		plan.Kernels = append(plan.Kernels, ks...)
	}
	return plan, nil
}
