package wgsl_test

import (
	"testing"

	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestReduceFusedRejects checks that ReduceFused returns an error, and
// no plan, for each malformed prologue, and accepts the well-formed one
// they are made from.
func TestReduceFusedRejects(t *testing.T) {
	shape := []int{7, 33}
	good := func() *wgsl.Prologue {
		return &wgsl.Prologue{
			Nodes:   []wgsl.FusedNode{{Expr: "x * y", Args: []int{-1, -2}, Out: wgsl.F32}},
			InTypes: []string{wgsl.F32, wgsl.F32},
			In:      []wgsl.Layout{wgsl.Contiguous(shape...), {Shape: shape, Strides: []int{0, 1}}},
		}
	}
	out := wgsl.Contiguous(7, 1)
	if _, err := wgsl.ReduceFused("sum", wgsl.F32, out, shape, good(), wgsl.Limits{}); err != nil {
		t.Fatalf("a well-formed prologue: %v", err)
	}
	many := good()
	for len(many.In) <= wgsl.MaxFusedInputs {
		many.In, many.InTypes = append(many.In, wgsl.Contiguous(shape...)), append(many.InTypes, wgsl.F32)
	}
	for _, c := range []struct {
		name string
		edit func(p *wgsl.Prologue)
	}{
		{"too many inputs", func(p *wgsl.Prologue) { *p = *many }},
		{"a type missing", func(p *wgsl.Prologue) { p.InTypes = p.InTypes[:1] }},
		{"an input of another shape", func(p *wgsl.Prologue) { p.In[1] = wgsl.Contiguous(7, 32) }},
		{"an input of another rank", func(p *wgsl.Prologue) { p.In[1] = wgsl.Contiguous(33) }},
		{"an unknown input type", func(p *wgsl.Prologue) { p.InTypes[1] = "f64" }},
		{"an unknown scalar type", func(p *wgsl.Prologue) { p.Nodes[0].Scalar = "u8" }},
		{"a negative stride", func(p *wgsl.Prologue) { p.In[0].Strides = []int{-33, 1} }},
	} {
		p := good()
		c.edit(p)
		if _, err := wgsl.ReduceFused("sum", wgsl.F32, out, shape, p, wgsl.Limits{}); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if _, err := wgsl.ReduceFused("prod", wgsl.F32, out, shape, good(), wgsl.Limits{}); err == nil {
		t.Error("an unknown reduction: accepted")
	}
}
