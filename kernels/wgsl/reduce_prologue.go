package wgsl

import (
	"fmt"
	"strings"
)

// A Prologue is an elementwise expression a row kernel reads instead of
// its input x, so that a pending elementwise result feeding a reduction
// costs no dispatch and no memory: Nodes as Fused's over the inputs In
// (typed by InTypes, each a view with x's shape, broadcast with stride
// 0), the last giving the kernel's element type; ScalarType is the type
// of the nodes' scalars ("" means f32). At most MaxFusedInputs inputs.
type Prologue struct {
	Nodes      []FusedNode
	InTypes    []string
	In         []Layout
	ScalarType string
}

// rdPro is a prologue's part of the reduce template's data (see
// rdData): its functions, its inputs' storage and value types, its
// scalars and the rank of its coalesced walk; empty without one.
type rdPro struct {
	Fns       string
	PScalar   string
	NPro, NSc int
	PR        int
	PSt, PVal [MaxFusedInputs]string
}

// proPlan is a prologue ready for a kernel: its template data and its
// coalesced shape and input strides and offsets, for the params.
type proPlan struct {
	d       rdPro
	shape   []int
	strides [][]int
	offs    []int
	sc      []uint32
}

// plan checks p against x's shape and the kernel's element type typ.
func (p *Prologue) plan(shape []int, typ string) (*proPlan, error) {
	n := len(p.In)
	if n > MaxFusedInputs || len(p.InTypes) != n {
		return nil, fmt.Errorf("wgsl: prologue: %d inputs with %d types (at most %d)", n, len(p.InTypes), MaxFusedInputs)
	}
	pl := &proPlan{d: rdPro{PScalar: p.ScalarType, NPro: n, NSc: 2 * len(p.Nodes)}}
	if pl.d.PScalar == "" {
		pl.d.PScalar = F32
	}
	strides := [][]int{Contiguous(shape...).Strides}
	for k, l := range p.In {
		if err := checkLayout(l, "prologue input"); err != nil {
			return nil, err
		}
		if !sameShape(l.Shape, shape) {
			return nil, fmt.Errorf("wgsl: prologue: input %d has shape %v, x %v", k, l.Shape, shape)
		}
		st, err := storageType(p.InTypes[k])
		if err != nil {
			return nil, err
		}
		pl.d.PSt[k], pl.d.PVal[k] = st, p.InTypes[k]
		strides = append(strides, l.Strides)
		pl.offs = append(pl.offs, l.Offset)
	}
	fns, err := fusedFns(p.Nodes, p.InTypes, typ, pl.d.PScalar)
	if err != nil {
		return nil, err
	}
	pl.d.Fns = fns
	cs, cst := coalesce(shape, strides)
	if len(cs) == 0 {
		cs, cst = []int{1}, make([][]int, len(strides))
		for k := range cst {
			cst[k] = []int{0}
		}
	}
	if len(cs) > MaxRank {
		return nil, fmt.Errorf("wgsl: prologue: %d dimensions after coalescing (at most %d)", len(cs), MaxRank)
	}
	pl.shape, pl.strides, pl.d.PR = cs, cst[1:], len(cs)
	pl.sc = fusedScalars(p.Nodes, pl.d.PScalar)
	return pl, nil
}

// fields are the prologue's params: its walk's extents, each input's
// offset and strides, and the nodes' scalars.
func (d rdPro) fields() []ParamField {
	if d.Fns == "" {
		return nil
	}
	fs := []ParamField{{"psh", "array", vec4s(d.PR)}, {"poffs", "array", vec4s(d.NPro)}}
	for k := range d.NPro {
		fs = append(fs, ParamField{fmt.Sprintf("ps%d", k), "array", vec4s(d.PR)})
	}
	return append(fs, ParamField{"sc", "array", vec4s(d.NSc)})
}

// setParams writes the prologue's params into p.
func (pl *proPlan) setParams(p *Params) {
	if pl == nil {
		return
	}
	p.SetArray("psh", u32s(pl.shape, 4*vec4s(pl.d.PR), 1)).SetArray("poffs", u32s(pl.offs, 4*vec4s(pl.d.NPro), 0))
	for k, st := range pl.strides {
		p.SetArray(fmt.Sprintf("ps%d", k), u32s(st, 4*vec4s(pl.d.PR), 0))
	}
	p.SetArray("sc", pl.sc)
}

// bindings are the kernel's bindings: out, then x or the prologue's
// inputs.
func (d rdPro) bindings() []Binding {
	if d.Fns == "" {
		return []Binding{{Name: "out"}, {Name: "x", ReadOnly: true}}
	}
	bs := []Binding{{Name: "out"}}
	for k := range d.NPro {
		bs = append(bs, Binding{Name: ewNames[k], ReadOnly: true})
	}
	return bs
}

// ProInputs are the prologue's input bindings.
func (d rdPro) ProInputs() []ewInput {
	in := make([]ewInput, d.NPro)
	for k := range in {
		in[k] = ewInput{Binding: k + 1, Name: ewNames[k], Arr: d.PSt[k]}
	}
	return in
}

// XVal is xval(i), the kernel's element i of x (flat, x contiguous):
// b_x[i], or the prologue at i: each input's offset from i by the walk,
// its value, then op_.
func (d rdData) XVal() (string, error) {
	if d.Fns == "" {
		return fmt.Sprintf("fn xval(i: u32) -> %s {\n\treturn b_x[i];\n}", d.T), nil
	}
	uses := d.Fns
	if d.T == F32 && d.Op != "sum" {
		uses += " isnan_(" // combine's, declared once with the prologue's helpers
	}
	pre, err := prelude(uses, d.PScalar)
	if err != nil {
		return "", err
	}
	w := walk{Flat: "i", Shape: "psh", Rank: d.PR}
	args := make([]string, d.NPro)
	for k := range d.NPro {
		v := fmt.Sprintf("o%d", k)
		w.Vars, w.Inits, w.Strides = append(w.Vars, v), append(w.Inits, ax("poffs", k)), append(w.Strides, fmt.Sprintf("ps%d", k))
		args[k] = fmt.Sprintf("b_%s[%s]", ewNames[k], v)
		if d.PVal[k] == Bool {
			args[k] = "(" + args[k] + " != 0u)"
		}
	}
	return fmt.Sprintf("%s\n%s\n\nfn xval(i: u32) -> %s {\n%s\treturn op_(%s);\n}", pre, d.Fns, d.T, w.Code(), strings.Join(args, ", ")), nil
}

// ReduceFused is Reduce over x of the given shape computed by the
// prologue pro rather than read from a buffer: out = op(pro(inputs)).
// Bindings: "out" (read_write), then the prologue's inputs "x", "y", "z",
// ... (read); a two-stage plan's second kernel binds "out" and
// "scratch" as Reduce's.
func ReduceFused(op, typ string, out Layout, shape []int, pro *Prologue, lim Limits) (Plan, error) {
	pl, err := pro.plan(shape, typ)
	if err != nil {
		return Plan{}, err
	}
	return reduce(op, typ, out, Contiguous(shape...), pl, lim)
}
