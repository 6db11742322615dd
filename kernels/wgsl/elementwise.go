package wgsl

import (
	"fmt"
	"strings"
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
	pre, err := prelude(expr, pl.scalar)
	if err != nil {
		return Kernel{}, err
	}
	lim := a.Limits.orDefault()
	d := ewData{Mode: pl.mode, OutArr: pl.outSt, Prelude: pre, Expr: expr, WG: lim.wgSize(256), Store: "%s", OutVal: pl.outVal}
	if pl.outVal == Bool {
		d.Store = "u32(%s)"
	}
	if pl.mode == "vec4" {
		d.OutArr = "vec4<" + pl.outSt + ">"
	}
	var fn []string
	for k := range pl.inSt {
		fn = append(fn, ewNames[k]+": "+pl.inVal[k])
		if aliased(a.Alias, k) {
			continue
		}
		arr := pl.inSt[k]
		if pl.mode == "vec4" && !pl.scalarIn[k] {
			arr = "vec4<" + arr + ">"
		}
		d.Inputs = append(d.Inputs, ewInput{Binding: len(d.Inputs) + 1, Name: ewNames[k], Arr: arr})
	}
	d.FnParams = strings.Join(fn, ", ")
	p := pl.params(a)
	d.Struct = p.Struct()
	pl.arguments(&d, a.Alias)

	invocations := pl.n
	if pl.mode == "vec4" {
		invocations = pl.n / 4
	}
	p.SetU32("n", uint32(invocations))
	groups, err := Grid(invocations, d.WG, lim)
	if err != nil {
		return Kernel{}, err
	}
	key := fmt.Sprintf("%s|%v|%s|%s|%v|%v|%d|%d|%s|%v", expr, inTypes, outType, pl.mode, a.Alias, pl.scalarIn, len(pl.shape), d.WG, pl.scalar, pl.outVal)
	source, err := render("elementwise", key, d)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{Source: source, Entry: "main", Params: p.Bytes(), Groups: groups, Bindings: []Binding{{Name: "out"}}}
	for _, in := range d.Inputs {
		k.Bindings = append(k.Bindings, Binding{Name: in.Name, ReadOnly: true})
	}
	return k, nil
}

var ewNames = []string{"x", "y", "z"}

// ewPlan is an elementwise kernel's shape: types, coalesced operands and
// mode ("strided", "contig" or "vec4").
type ewPlan struct {
	n             int
	outSt, outVal string   // output storage and value types
	inSt, inVal   []string // input storage and value types
	scalar        string   // type of p0 and p1
	shape         []int    // coalesced
	strides       [][]int  // out, then inputs, over shape
	offs          []int    // out, then inputs
	scalarIn      []bool   // contiguous modes: input k is one broadcast element
	mode          string
}

func planElementwise(expr string, inTypes []string, outType string, a ElementwiseArgs) (*ewPlan, error) {
	nIn := len(a.In)
	if nIn != len(inTypes) || nIn > 3 {
		return nil, fmt.Errorf("wgsl: Elementwise: %d inputs with %d types (at most 3)", nIn, len(inTypes))
	}
	if len(a.Alias) != 0 && len(a.Alias) != nIn {
		return nil, fmt.Errorf("wgsl: Elementwise: %d alias flags for %d inputs", len(a.Alias), nIn)
	}
	if err := checkLayout(a.Out, "Elementwise output"); err != nil {
		return nil, err
	}
	pl := &ewPlan{n: numel(a.Out.Shape), outVal: outType, inVal: append([]string(nil), inTypes...), inSt: make([]string, nIn)}
	var err error
	if pl.outSt, err = storageType(outType); err != nil {
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
		if pl.inSt[k], err = storageType(inTypes[k]); err != nil {
			return nil, err
		}
		if aliased(a.Alias, k) && inTypes[k] != outType {
			return nil, fmt.Errorf("wgsl: Elementwise: input %d (%s) aliases the %s output", k, inTypes[k], outType)
		}
		strides = append(strides, l.Strides)
		pl.offs = append(pl.offs, l.Offset)
	}
	pl.scalar = a.ScalarType
	if pl.scalar == "" {
		pl.scalar = F32
		for _, t := range append(append([]string(nil), inTypes...), outType) {
			if t == F32 || t == I32 {
				pl.scalar = t
				break
			}
		}
	}
	if pl.scalar != F32 && pl.scalar != I32 {
		return nil, fmt.Errorf("wgsl: Elementwise: scalar type %q", pl.scalar)
	}
	// An identity copy moves bits.
	if strings.TrimSpace(expr) == "x" && nIn == 1 && inTypes[0] == outType {
		pl.outSt, pl.inSt[0], pl.inVal[0], pl.outVal = "u32", "u32", "u32", "u32"
	}
	pl.shape, pl.strides = coalesce(a.Out.Shape, strides)
	if len(pl.shape) > MaxRank {
		return nil, fmt.Errorf("wgsl: Elementwise: %d dimensions after coalescing (at most %d)", len(pl.shape), MaxRank)
	}
	// Contiguous: rank 1, output stride 1 (or a single element), inputs
	// stride 1 or 0; vec4 when n and the contiguous offsets allow.
	pl.mode = "strided"
	pl.scalarIn = make([]bool, nIn)
	contig := len(pl.shape) == 1 && (pl.strides[0][0] == 1 || pl.shape[0] == 1)
	for k := 0; k < nIn && contig; k++ {
		s := pl.strides[k+1][0]
		pl.scalarIn[k] = s == 0
		contig = s == 1 || s == 0
	}
	if contig {
		pl.mode = "vec4"
		if pl.n%4 != 0 || pl.n < 4 || a.Out.Offset%4 != 0 {
			pl.mode = "contig"
		}
		for k := 0; k < nIn; k++ {
			if !pl.scalarIn[k] && pl.offs[k+1]%4 != 0 {
				pl.mode = "contig"
			}
		}
	}
	return pl, nil
}

// params encodes n (set by the caller), p0, p1, the offsets (in vec4s for
// vec4 operands) and, in strided mode, the shape and strides.
func (pl *ewPlan) params(a ElementwiseArgs) *Params {
	rank := len(pl.shape)
	fields := []ParamField{{"n", "u32", 0}, {"p0", pl.scalar, 0}, {"p1", pl.scalar, 0}, {"offs", "array", 1}}
	if pl.mode == "strided" {
		fields = append(fields, ParamField{"shape", "array", vec4s(rank)})
		for k := range pl.strides {
			fields = append(fields, ParamField{fmt.Sprintf("st%d", k), "array", vec4s(rank)})
		}
	}
	p := NewParams(fields...)
	setScalar(p, "p0", a.P0, pl.scalar)
	setScalar(p, "p1", a.P1, pl.scalar)
	po := append([]int(nil), pl.offs...)
	if pl.mode == "vec4" {
		po[0] /= 4
		for k, s := range pl.scalarIn {
			if !s {
				po[k+1] /= 4
			}
		}
	}
	p.SetArray("offs", u32s(po, 4, 0))
	if pl.mode == "strided" {
		p.SetArray("shape", u32s(pl.shape, 4*vec4s(rank), 1))
		for k, st := range pl.strides {
			p.SetArray(fmt.Sprintf("st%d", k), u32s(st, 4*vec4s(rank), 0))
		}
	}
	return p
}

// arguments fills the walk and the expressions that load op_'s arguments.
func (pl *ewPlan) arguments(d *ewData, alias []bool) {
	src := func(k int) string {
		if aliased(alias, k) {
			return "b_out"
		}
		return "b_" + ewNames[k]
	}
	load := func(k int, v string) string {
		if pl.inVal[k] == Bool {
			return "(" + v + " != 0u)"
		}
		return v
	}
	off := func(k int) string { return fmt.Sprintf("params.offs[0].%c", "xyzw"[k]) }
	var args []string
	switch pl.mode {
	case "strided":
		w := walk{Flat: "i", Shape: "shape", Rank: len(pl.shape)}
		for k := range pl.strides {
			w.Vars = append(w.Vars, fmt.Sprintf("o%d", k))
			w.Inits = append(w.Inits, off(k))
			w.Strides = append(w.Strides, fmt.Sprintf("st%d", k))
		}
		d.Walk = w.Code()
		for k := range pl.inVal {
			args = append(args, load(k, fmt.Sprintf("%s[o%d]", src(k), k+1)))
		}
	case "contig":
		for k, s := range pl.scalarIn {
			at := off(k + 1)
			if !s {
				at += " + i"
			}
			args = append(args, load(k, fmt.Sprintf("%s[%s]", src(k), at)))
		}
	case "vec4":
		var comp [4][]string
		for k, s := range pl.scalarIn {
			if s {
				d.VecLoads = append(d.VecLoads, fmt.Sprintf("let v%d = %s;", k, load(k, fmt.Sprintf("%s[%s]", src(k), off(k+1)))))
			} else {
				d.VecLoads = append(d.VecLoads, fmt.Sprintf("let v%d = %s[%s + i];", k, src(k), off(k+1)))
			}
			for c := range comp {
				if s {
					comp[c] = append(comp[c], fmt.Sprintf("v%d", k))
				} else {
					comp[c] = append(comp[c], load(k, fmt.Sprintf("v%d[%d]", k, c)))
				}
			}
		}
		for c := range comp {
			d.VecArgs = append(d.VecArgs, strings.Join(comp[c], ", "))
		}
	}
	d.Args = strings.Join(args, ", ")
}

type ewData struct {
	Struct   string
	OutArr   string
	Inputs   []ewInput
	Prelude  string
	FnParams string
	OutVal   string
	Expr     string
	WG       int
	Mode     string
	Walk     string
	Args     string
	Store    string
	VecLoads []string
	VecArgs  []string
}

type ewInput struct {
	Binding int
	Name    string
	Arr     string
}

func aliased(alias []bool, k int) bool { return k < len(alias) && alias[k] }

func setScalar(p *Params, name string, v float64, t string) {
	if t == I32 {
		p.SetI32(name, int32(scalarBits(v, I32)))
		return
	}
	p.SetF32(name, float32(v))
}
