package wgsl

import (
	"bytes"
	"strings"
	"testing"
)

// TestFused checks the fused kernel's source and params: one source for
// every value of the scalars (they travel in the params, so the pipeline
// cache hits), the nodes in order over the inputs, and errors for
// malformed expressions.
func TestFused(t *testing.T) {
	c, bc := Contiguous(7, 33), Layout{Shape: []int{7, 33}, Strides: []int{0, 1}}
	nodes := func(s float64) []FusedNode {
		return []FusedNode{
			{Expr: "x * y", Args: []int{-1, -2}, Out: F32},
			{Expr: "x + p0", Args: []int{0}, Out: F32, P0: s},
			{Expr: "select(z, y, x)", Args: []int{-3, 1, -1}, Out: F32},
		}
	}
	types := []string{F32, F32, Bool}
	args := ElementwiseArgs{Out: c, In: []Layout{c, bc, c}}
	a, err := Fused(nodes(0.5), types, F32, args)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fused(nodes(-3), types, F32, args)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != b.Source || bytes.Equal(a.Params, b.Params) {
		t.Error("the scalars changed the source, or not the params")
	}
	for _, want := range []string{"let t0 = f0_(x, y,", "let t1 = f1_(t0,", "let t2 = f2_(z, t1, x,", "return t2;"} {
		if !strings.Contains(a.Source, want) {
			t.Errorf("source lacks %q:\n%s", want, a.Source)
		}
	}
	if len(a.Bindings) != 4 || a.Bindings[3].Name != InputName(2) {
		t.Errorf("bindings %v, want out and three inputs", a.Bindings)
	}
	for name, bad := range map[string][]FusedNode{
		"no nodes":         nil,
		"a later node":     {{Expr: "x", Args: []int{1}, Out: F32}, {Expr: "x", Args: []int{-1}, Out: F32}},
		"a missing input":  {{Expr: "x", Args: []int{-4}, Out: F32}},
		"the wrong result": {{Expr: "x > 0.0", Args: []int{-1}, Out: Bool}},
		"four arguments":   {{Expr: "x", Args: []int{-1, -1, -1, -1}, Out: F32}},
		"an unknown type":  {{Expr: "x", Args: []int{-1}, Out: "f16"}},
	} {
		if _, err := Fused(bad, types, F32, args); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	many := make([]Layout, MaxFusedInputs+1)
	for i := range many {
		many[i] = c
	}
	if _, err := Fused(nodes(0), make([]string, len(many)), F32, ElementwiseArgs{Out: c, In: many}); err == nil {
		t.Error("too many inputs: no error")
	}
}
