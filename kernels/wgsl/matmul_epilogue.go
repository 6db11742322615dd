package wgsl

import (
	"fmt"
	"strings"
)

// A MatMulEpilogue is an elementwise expression that a matmul applies to
// each product before storing it, so that a bias, an activation or an
// accumulation (acc + a·b) costs no dispatch and no intermediate: Nodes
// as Fused's, over the inputs In (typed by InTypes) and the product, which
// is input len(In) (f32). The last node gives f32. Each input is a view
// with out's (B, M, N) shape (broadcast with stride 0), read at the
// element being stored. Alias[k] says input k lives in out's buffer (an
// in-place update, out = f(out, a·b)); it is read through out with its
// own layout, which must be out's, and the plan must then have one range
// of K. ScalarType is that of the nodes' scalars ("" means f32). At most
// MaxFusedInputs-2 inputs: with out, a and b, every stage's 8 storage
// buffers.
type MatMulEpilogue struct {
	Nodes      []FusedNode
	InTypes    []string
	In         []Layout
	Alias      []bool
	ScalarType string
}

// MaxEpilogueInputs is the most inputs a MatMulEpilogue reads.
const MaxEpilogueInputs = MaxFusedInputs - 2

// mmEpi is the epilogue's part of the matmul templates' data (see
// mmData): its functions (op_ and one per node, fusedFns) and its
// inputs' storage and value types and aliasing; empty without one.
type mmEpi struct {
	Fns        string
	Scalar     string
	NEpi, NSc  int
	EpiSt      [MaxEpilogueInputs]string
	EpiVal     [MaxEpilogueInputs]string
	EpiAlias   [MaxEpilogueInputs]bool
	EpiPrelude bool
}

// data checks e against out and returns its template data (zero for a
// nil e).
func (e *MatMulEpilogue) data(out Layout) (mmEpi, error) {
	if e == nil {
		return mmEpi{}, nil
	}
	n := len(e.In)
	if n > MaxEpilogueInputs || len(e.InTypes) != n || (len(e.Alias) != 0 && len(e.Alias) != n) {
		return mmEpi{}, fmt.Errorf("wgsl: MatMul epilogue: %d inputs, %d types, %d alias flags (at most %d inputs)", n, len(e.InTypes), len(e.Alias), MaxEpilogueInputs)
	}
	ep := mmEpi{Scalar: e.ScalarType, NEpi: n, NSc: 2 * len(e.Nodes)}
	if ep.Scalar == "" {
		ep.Scalar = F32
	}
	for k, l := range e.In {
		if err := checkLayout(l, "MatMul epilogue input"); err != nil {
			return mmEpi{}, err
		}
		if len(l.Shape) != 3 || !sameShape(l.Shape, out.Shape) {
			return mmEpi{}, fmt.Errorf("wgsl: MatMul epilogue: input %d has shape %v, out %v", k, l.Shape, out.Shape)
		}
		st, err := storageType(e.InTypes[k])
		if err != nil {
			return mmEpi{}, err
		}
		ep.EpiSt[k], ep.EpiVal[k] = st, e.InTypes[k]
		if ep.EpiAlias[k] = len(e.Alias) > 0 && e.Alias[k]; ep.EpiAlias[k] && (e.InTypes[k] != F32 || l.Offset != out.Offset || !sameShape(l.Strides, out.Strides)) {
			return mmEpi{}, fmt.Errorf("wgsl: MatMul epilogue: aliased input %d must be f32 with out's layout", k)
		}
	}
	fns, err := fusedFns(e.Nodes, append(append([]string(nil), e.InTypes...), F32), F32, ep.Scalar)
	if err != nil {
		return mmEpi{}, err
	}
	ep.Fns = fns
	return ep, nil
}

// setParams writes the epilogue's params: each input's offset and
// (batch, row, col) strides, and the nodes' scalars.
func (e *MatMulEpilogue) setParams(p *Params) {
	if e == nil {
		return
	}
	offs := make([]int, len(e.In))
	for k, l := range e.In {
		offs[k] = l.Offset
		p.SetArray(fmt.Sprintf("es%d", k), u32s(l.Strides, 4, 0))
	}
	p.SetArray("eoffs", u32s(offs, 4*vec4s(len(e.In)), 0))
	p.SetArray("sc", fusedScalars(e.Nodes, e.scalarType()))
}

func (e *MatMulEpilogue) scalarType() string {
	if e.ScalarType == "" {
		return F32
	}
	return e.ScalarType
}

// fields are the epilogue's params: eoffs, es0... and sc.
func (ep mmEpi) fields() []ParamField {
	if ep.Fns == "" {
		return nil
	}
	fs := []ParamField{{"eoffs", "array", vec4s(ep.NEpi)}}
	for k := range ep.NEpi {
		fs = append(fs, ParamField{fmt.Sprintf("es%d", k), "array", 1})
	}
	return append(fs, ParamField{"sc", "array", vec4s(ep.NSc)})
}

// aliased reports whether an input is read through out.
func (ep mmEpi) aliased() bool {
	for k := range ep.NEpi {
		if ep.EpiAlias[k] {
			return true
		}
	}
	return false
}

// EpiInputs are the bindings of the inputs not read through out,
// numbered after out, a and b.
func (ep mmEpi) EpiInputs() []ewInput {
	var in []ewInput
	for k := range ep.NEpi {
		if !ep.EpiAlias[k] {
			in = append(in, ewInput{Binding: 3 + len(in), Name: ewNames[k], Arr: ep.EpiSt[k]})
		}
	}
	return in
}

// EpiFn is the epilogue's text: the prelude helpers it calls, its node
// functions and op_, and epi_(v, bt, row, col), which reads the inputs
// at the stored element and returns op_ of them and the product v.
func (ep mmEpi) EpiFn() (string, error) {
	if ep.Fns == "" {
		return "", nil
	}
	pre, err := prelude(ep.Fns, ep.Scalar)
	if err != nil {
		return "", err
	}
	args := make([]string, 0, ep.NEpi+1)
	for k := range ep.NEpi {
		src := "b_" + ewNames[k]
		if ep.EpiAlias[k] {
			src = "b_out"
		}
		s := fmt.Sprintf("params.es%d[0]", k)
		v := fmt.Sprintf("%s[%s + bt * %s.x + row * %s.y + col * %s.z]", src, ax("eoffs", k), s, s, s)
		if ep.EpiVal[k] == Bool {
			v = "(" + v + " != 0u)"
		}
		args = append(args, v)
	}
	args = append(args, "v")
	return fmt.Sprintf("%s\n%s\n\nfn epi_(v: f32, bt: u32, row: u32, col: u32) -> f32 {\n\treturn op_(%s);\n}\n", pre, ep.Fns, strings.Join(args, ", ")), nil
}

// Store is the value the kernel stores for the product acc at (bt, row,
// col): the epilogue of it in the last range of K, else acc.
func (d mmData) Store(acc string) string {
	if d.Fns == "" || !d.Last {
		return acc
	}
	return "epi_(" + acc + ", bt, row, col)"
}
