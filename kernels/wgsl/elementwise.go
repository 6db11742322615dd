package wgsl

import (
	"fmt"
	"strings"

	"github.com/tessera-ml/tessera/internal/layout"
)

// ElementwiseArgs are the operands of an Elementwise kernel.
type ElementwiseArgs struct {
	// Out is the output view; In the input views, each with Out's shape
	// (broadcast beforehand with stride 0), at most 3.
	Out Layout
	In  []Layout
	// Alias[i] says input i lives in the output's buffer (an in-place
	// op): it is read through the output binding with its own layout and
	// gets no binding of its own. Its type must be the output type. An
	// aliased input should have Out's layout or not overlap the written
	// elements (each invocation reads its inputs, then writes).
	Alias []bool
	// P0, P1 are the expression's scalar parameters. They are declared
	// with ScalarType: "" means the first numeric input type (f32 or
	// i32), else the output type if numeric, else f32; i32 saturates.
	P0, P1     float64
	ScalarType string
	Limits     Limits
}

// Elementwise returns the kernel computing out = expr(x, y, z; p0, p1)
// over Out's shape, where expr is a WGSL expression in the inputs x, y, z
// (typed by inTypes: f32, i32, or bool seen as a WGSL bool), the scalars
// p0 and p1, and the prelude helpers (Helpers); its value has outType
// (a bool result is stored as 0 or 1).
//
// Bindings: "out" (read_write), then "x", "y", "z" for each input not
// aliased to the output (read-only), in that order.
//
// Dimensions are coalesced first. When every operand then is contiguous
// or a single broadcast element, a contiguous kernel runs (4 elements per
// invocation through vec4 loads when n%4 == 0 and the offsets of the
// contiguous operands are multiples of 4); otherwise the strided kernel
// for that rank. An identity copy (expr "x", same type) moves u32 bits,
// so one kernel serves every element type. Casts ("f32(x)", "x != 0.0"),
// where ("select(z, y, x)"), addcmul ("x + p0 * y * z"), fill (no input,
// expr "p0") are all Elementwise.
func Elementwise(expr string, inTypes []string, outType string, a ElementwiseArgs) (Kernel, error) {
	pl, err := planElementwise(expr, inTypes, outType, a)
	if err != nil {
		return Kernel{}, err
	}
	return pl.kernel(a, nil)
}

// kernel renders the plan's kernel; extra, when not nil, sets params
// beyond the elementwise ones.
func (pl *ewPlan) kernel(a ElementwiseArgs, extra func(*Params)) (Kernel, error) {
	lim := a.Limits.orDefault()
	pl.WG = lim.wgSize(256)
	p := pl.params(a)
	if extra != nil {
		extra(p)
	}
	invocations := pl.n
	if pl.Mode == "vec4" {
		invocations = pl.n / 4
	}
	p.SetU32("n", uint32(invocations))
	groups, err := Grid(invocations, pl.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	source, err := render("elementwise", pl.ewData)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Source: source, Entry: "main", Params: p.Bytes(), Groups: groups, Bindings: []Binding{{Name: "out"}}}
	for _, in := range pl.Inputs() {
		k.Bindings = append(k.Bindings, Binding{Name: in.Name, ReadOnly: true})
	}
	return k, nil
}

var ewNames = [maxIn]string{"x", "y", "z", "x3", "x4", "x5", "x6"}

// maxIn is the most inputs an elementwise kernel reads: Elementwise's 3,
// Fused's MaxFusedInputs.
const maxIn = MaxFusedInputs

// ewPlan is an elementwise kernel's plan: the template data (types, mode,
// rank) and the coalesced operands, which go to the params.
type ewPlan struct {
	ewData
	n       int
	shape   []int   // coalesced
	strides [][]int // out, then inputs, over shape
	offs    []int   // out, then inputs
}

func planElementwise(expr string, inTypes []string, outType string, a ElementwiseArgs) (*ewPlan, error) {
	nIn := len(a.In)
	if nIn != len(inTypes) || nIn > maxIn {
		return nil, fmt.Errorf("wgsl: Elementwise: %d inputs with %d types (at most %d)", nIn, len(inTypes), maxIn)
	}
	if len(a.Alias) != 0 && len(a.Alias) != nIn {
		return nil, fmt.Errorf("wgsl: Elementwise: %d alias flags for %d inputs", len(a.Alias), nIn)
	}
	if err := checkLayout(a.Out, "Elementwise output"); err != nil {
		return nil, err
	}
	pl := &ewPlan{n: layout.Numel(a.Out.Shape), ewData: ewData{Expr: expr, NIn: nIn, OutVal: outType}}
	var err error
	if pl.OutSt, err = storageType(outType); err != nil {
		return nil, err
	}
	strides := [][]int{a.Out.Strides}
	pl.offs = []int{a.Out.Offset}
	for k, l := range a.In {
		if err := checkLayout(l, "Elementwise input"); err != nil {
			return nil, err
		}
		if !sameShape(l.Shape, a.Out.Shape) {
			return nil, fmt.Errorf("wgsl: Elementwise: input %d has shape %v, output %v (broadcast it first)", k, l.Shape, a.Out.Shape)
		}
		if pl.InSt[k], err = storageType(inTypes[k]); err != nil {
			return nil, err
		}
		pl.InVal[k] = inTypes[k]
		pl.Alias[k] = k < len(a.Alias) && a.Alias[k]
		if pl.Alias[k] && inTypes[k] != outType {
			return nil, fmt.Errorf("wgsl: Elementwise: input %d (%s) aliases the %s output", k, inTypes[k], outType)
		}
		strides = append(strides, l.Strides)
		pl.offs = append(pl.offs, l.Offset)
	}
	pl.Scalar = a.ScalarType
	if pl.Scalar == "" {
		pl.Scalar = F32
		for _, t := range append(append([]string(nil), inTypes...), outType) {
			if t == F32 || t == I32 {
				pl.Scalar = t
				break
			}
		}
	}
	if pl.Scalar != F32 && pl.Scalar != I32 {
		return nil, fmt.Errorf("wgsl: Elementwise: scalar type %q", pl.Scalar)
	}
	// An identity copy moves bits.
	if strings.TrimSpace(expr) == "x" && nIn == 1 && inTypes[0] == outType {
		pl.OutSt, pl.InSt[0], pl.InVal[0], pl.OutVal = "u32", "u32", "u32", "u32"
	}
	pl.shape, pl.strides = coalesce(a.Out.Shape, strides)
	if len(pl.shape) > MaxRank {
		return nil, fmt.Errorf("wgsl: Elementwise: %d dimensions after coalescing (at most %d)", len(pl.shape), MaxRank)
	}
	pl.Rank = len(pl.shape)
	// Contiguous: rank 1, output stride 1 (or a single element), inputs
	// stride 1 or 0; vec4 when n and the contiguous offsets allow.
	pl.Mode = "strided"
	contig := len(pl.shape) == 1 && (pl.strides[0][0] == 1 || pl.shape[0] == 1)
	for k := 0; k < nIn && contig; k++ {
		s := pl.strides[k+1][0]
		pl.ScalarIn[k] = s == 0
		contig = s == 1 || s == 0
	}
	if !contig {
		pl.ScalarIn = [maxIn]bool{}
	}
	if contig {
		pl.Mode = "vec4"
		if pl.n%4 != 0 || pl.n < 4 || a.Out.Offset%4 != 0 {
			pl.Mode = "contig"
		}
		for k := 0; k < nIn; k++ {
			if !pl.ScalarIn[k] && pl.offs[k+1]%4 != 0 {
				pl.Mode = "contig"
			}
		}
	}
	return pl, nil
}

// params encodes n (set by the caller), p0, p1, the offsets (in vec4s for
// vec4 operands) and, in strided mode, the shape and strides.
func (pl *ewPlan) params(a ElementwiseArgs) *Params {
	p := NewParams(pl.fields()...)
	setScalar(p, "p0", a.P0, pl.Scalar)
	setScalar(p, "p1", a.P1, pl.Scalar)
	po := append([]int(nil), pl.offs...)
	if pl.Mode == "vec4" {
		po[0] /= 4
		for k := range pl.NIn {
			if !pl.ScalarIn[k] {
				po[k+1] /= 4
			}
		}
	}
	p.SetArray("offs", u32s(po, 4*vec4s(pl.NIn+1), 0))
	if pl.Mode == "strided" {
		p.SetArray("shape", u32s(pl.shape, 4*vec4s(pl.Rank), 1))
		for k, st := range pl.strides {
			p.SetArray(fmt.Sprintf("st%d", k), u32s(st, 4*vec4s(pl.Rank), 0))
		}
	}
	return p
}

// ewData is the elementwise template's data and render-cache key: what
// the source depends on (the expression, types, mode, rank, aliasing and
// broadcast inputs) and nothing that varies per call (extents, strides,
// offsets and scalars go to the params). The text it derives comes from
// its methods, which run only when the cache misses.
type ewData struct {
	Expr          string // one op's expression in x, y, z, p0, p1; or
	Fns           string // a fused expression's op_ and node functions (fused.go)
	NSc           int    // the fused expression's scalars, in params.sc
	Mode          string // "strided", "contig" or "vec4"
	Rank          int    // coalesced dimensions (1 unless strided)
	WG            int
	Scalar        string // type of p0 and p1
	OutSt, OutVal string // output storage and value types
	NIn           int
	InSt, InVal   [maxIn]string // input storage and value types
	Alias         [maxIn]bool   // input k is read through the output binding
	ScalarIn      [maxIn]bool   // contiguous modes: input k is one broadcast element
}

// fields are the params: n, p0, p1, offs and, strided, the shape and
// each operand's strides (out, then inputs).
func (d ewData) fields() []ParamField {
	fields := []ParamField{{"n", "u32", 0}, {"p0", d.Scalar, 0}, {"p1", d.Scalar, 0}, {"offs", "array", vec4s(d.NIn + 1)}}
	if d.NSc > 0 {
		fields = append(fields, ParamField{"sc", "array", vec4s(d.NSc)})
	}
	if d.Mode == "strided" {
		fields = append(fields, ParamField{"shape", "array", vec4s(d.Rank)})
		for k := range d.NIn + 1 {
			fields = append(fields, ParamField{fmt.Sprintf("st%d", k), "array", vec4s(d.Rank)})
		}
	}
	return fields
}

// Struct is the params' WGSL declaration.
func (d ewData) Struct() string { return NewParams(d.fields()...).Struct() }

// Prelude is the helper functions the expression calls.
func (d ewData) Prelude() (string, error) { return prelude(d.Expr+d.Fns, d.Scalar) }

// OpFn is op_, the function of the inputs each element stores: the
// op's expression, or a fused expression's nodes.
func (d ewData) OpFn() string {
	if d.Fns != "" {
		return d.Fns
	}
	return "fn op_(" + d.FnParams() + ") -> " + d.OutVal + " {\n\tlet p0 = params.p0;\n\tlet p1 = params.p1;\n\treturn " + d.Expr + ";\n}"
}

// OutArr is the element type of the output binding's array.
func (d ewData) OutArr() string {
	if d.Mode == "vec4" {
		return "vec4<" + d.OutSt + ">"
	}
	return d.OutSt
}

// Inputs are the bindings of the inputs not aliased to the output.
func (d ewData) Inputs() []ewInput {
	var in []ewInput
	for k := range d.NIn {
		if d.Alias[k] {
			continue
		}
		arr := d.InSt[k]
		if d.Mode == "vec4" && !d.ScalarIn[k] {
			arr = "vec4<" + arr + ">"
		}
		in = append(in, ewInput{Binding: len(in) + 1, Name: ewNames[k], Arr: arr})
	}
	return in
}

// FnParams is op_'s parameter list.
func (d ewData) FnParams() string {
	fn := make([]string, d.NIn)
	for k := range fn {
		fn[k] = ewNames[k] + ": " + d.InVal[k]
	}
	return strings.Join(fn, ", ")
}

// Result is the value stored for op_(args): a bool as u32.
func (d ewData) Result(args string) string {
	if d.OutVal == Bool {
		return "u32(op_(" + args + "))"
	}
	return "op_(" + args + ")"
}

// src is the binding input k is read through.
func (d ewData) src(k int) string {
	if d.Alias[k] {
		return "b_out"
	}
	return "b_" + ewNames[k]
}

// load converts the stored value v of input k to its value type.
func (d ewData) load(k int, v string) string {
	if d.InVal[k] == Bool {
		return "(" + v + " != 0u)"
	}
	return v
}

// Walk (strided) computes each operand's offset o0 (out), o1... from i.
func (d ewData) Walk() string {
	w := walk{Flat: "i", Shape: "shape", Rank: d.Rank}
	for k := range d.NIn + 1 {
		w.Vars = append(w.Vars, fmt.Sprintf("o%d", k))
		w.Inits = append(w.Inits, ax("offs", k))
		w.Strides = append(w.Strides, fmt.Sprintf("st%d", k))
	}
	return w.Code()
}

// Args (strided and contig) are op_'s arguments at element i.
func (d ewData) Args() string {
	args := make([]string, d.NIn)
	for k := range args {
		switch {
		case d.Mode == "strided":
			args[k] = d.load(k, fmt.Sprintf("%s[o%d]", d.src(k), k+1))
		case d.ScalarIn[k]:
			args[k] = d.load(k, fmt.Sprintf("%s[%s]", d.src(k), ax("offs", k+1)))
		default:
			args[k] = d.load(k, fmt.Sprintf("%s[%s + i]", d.src(k), ax("offs", k+1)))
		}
	}
	return strings.Join(args, ", ")
}

// VecLoads (vec4) load each input's vec4, or its broadcast element.
func (d ewData) VecLoads() []string {
	loads := make([]string, d.NIn)
	for k := range loads {
		if d.ScalarIn[k] {
			loads[k] = fmt.Sprintf("let v%d = %s;", k, d.load(k, fmt.Sprintf("%s[%s]", d.src(k), ax("offs", k+1))))
		} else {
			loads[k] = fmt.Sprintf("let v%d = %s[%s + i];", k, d.src(k), ax("offs", k+1))
		}
	}
	return loads
}

// VecArgs (vec4) are op_'s arguments for each of the four components.
func (d ewData) VecArgs() []string {
	var args [4]string
	for c := range args {
		comp := make([]string, d.NIn)
		for k := range comp {
			if d.ScalarIn[k] {
				comp[k] = fmt.Sprintf("v%d", k)
			} else {
				comp[k] = d.load(k, fmt.Sprintf("v%d[%d]", k, c))
			}
		}
		args[c] = strings.Join(comp, ", ")
	}
	return args[:]
}

type ewInput struct {
	Binding int
	Name    string
	Arr     string
}

func setScalar(p *Params, name string, v float64, t string) {
	if t == I32 {
		p.SetI32(name, int32(scalarBits(v, I32)))
		return
	}
	p.SetF32(name, float32(v))
}
