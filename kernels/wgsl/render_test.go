package wgsl

import (
	"reflect"
	"slices"
	"testing"
	"text/template/parse"
)

// renderSweep generates kernels from every template, in the variants
// their data distinguish (modes, aliasing, segments, pairs, bounds,
// accumulation).
func renderSweep(t *testing.T) {
	t.Helper()
	lim := DefaultLimits()
	short := Limits{MaxLoopTrips: 150}
	c, tr := Contiguous(4, 65), Layout{Shape: []int{4, 65}, Strides: []int{1, 4}}
	bc := Layout{Shape: []int{4, 65}, Strides: []int{0, 0}, Offset: 3}
	var errs []error
	kernel := func(_ Kernel, err error) { errs = append(errs, err) }
	plan := func(_ Plan, err error) { errs = append(errs, err) }
	for _, in := range [][]Layout{{c, c}, {c, bc}, {tr, c}, {Contiguous(4, 65), Layout{Shape: []int{4, 65}, Strides: []int{65, 1}, Offset: 1}}} {
		kernel(Elementwise("x + y", []string{F32, F32}, F32, ElementwiseArgs{Out: c, In: in}))
		kernel(Elementwise("x < y", []string{I32, I32}, Bool, ElementwiseArgs{Out: c, In: in, Limits: Limits{MaxWorkgroupSize: 64}}))
		kernel(Elementwise("x * y", []string{F32, F32}, F32, ElementwiseArgs{Out: c, In: []Layout{c, in[1]}, Alias: []bool{true, false}}))
	}
	kernel(Elementwise("select(z, y, x) + pow_(y, p0)", []string{Bool, F32, F32}, F32, ElementwiseArgs{Out: tr, In: []Layout{tr, c, bc}}))
	kernel(Elementwise("x", []string{Bool}, Bool, ElementwiseArgs{Out: tr, In: []Layout{c}}))
	kernel(Elementwise("p0", nil, I32, ElementwiseArgs{Out: c}))
	for _, x := range []Layout{Contiguous(7, 33, 65), Contiguous(40, 3000), Contiguous(3, 20001)} {
		keep, all := Contiguous(x.Shape[0], 1), Contiguous(1, 1)
		if len(x.Shape) == 3 {
			keep, all = Contiguous(7, 1, 65), Contiguous(1, 1, 1)
		}
		for _, l := range []Limits{lim, short} {
			for _, typ := range []string{F32, I32} {
				plan(Reduce("max", typ, keep, x, l))
				plan(Reduce("sum", typ, all, x, l))
				vals := keep
				plan(ArgReduce("min", typ, keep, &vals, x, 1, l))
				plan(ArgReduce("max", typ, keep, nil, x, 1, l))
				plan(CumSum(typ, LineArgs{Out: x, X: x, Dim: 1, InPlace: true, Limits: l}))
			}
			for _, log := range []bool{false, true} {
				plan(Softmax(log, LineArgs{Out: x, X: x, Dim: 1, Limits: l}))
				plan(Softmax(log, LineArgs{Out: x, X: x, Dim: 0, InPlace: true, Limits: l}))
			}
		}
	}
	x := Contiguous(7, 33)
	kernel(IndexSelect(Contiguous(7, 4), x, 1, Contiguous(4), lim))
	kernel(Gather(Contiguous(3, 33), Layout{Shape: []int{7, 33}, Strides: []int{1, 7}}, 0, Contiguous(3, 33), lim))
	for _, typ := range []string{F32, I32} {
		plan(IndexAdd(typ, x, 0, Contiguous(4), Contiguous(4, 33), lim))
		plan(IndexAmax(typ, x, 0, Contiguous(4), Contiguous(4, 33), lim))
		plan(ScatterAdd(typ, x, 1, Contiguous(5, 9), Contiguous(5, 9), lim))
	}
	for _, d := range []string{"words", "uniform", "normal"} {
		kernel(Philox(d, Contiguous(5, 7), 1, 2, 0, 1, lim))
	}
	at := Layout{Shape: []int{2, 68, 36}, Strides: []int{0, 1, 68}, Offset: 4}
	for _, l := range []Limits{lim, {MaxLoopTrips: 12}} {
		plan(MatMul(Contiguous(2, 68, 132), at, Contiguous(2, 36, 132), l))
		plan(MatMulTiled(128, Contiguous(1, 128, 128), Contiguous(1, 128, 24), Contiguous(1, 24, 128), l))
		plan(MatMulNaive(Contiguous(2, 7, 65), Contiguous(2, 7, 33), Contiguous(2, 33, 65), l))
		plan(matmulTiled(mmTile{TM: 128, TN: 64, KS: 4, RM: 8, RN: 4}, Contiguous(2, 68, 132), at, Contiguous(2, 36, 132), nil, l, false))
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestRenderCache checks the render cache after the sweep: each entry
// renders again, uncached, to the very text it holds, so no two data
// values share an entry and the text depends on nothing but the key; and
// each data type is a plain value, so equal keys mean equal inputs (no
// pointer or interface whose target could change, no float that would
// never equal itself, no slice or map, which Go does not compare).
func TestRenderCache(t *testing.T) {
	renderSweep(t)
	templatesSeen := map[string]bool{}
	n := 0
	sources.Range(func(key, val any) bool {
		n++
		k, ok := key.(interface{ execute() (string, error) })
		if !ok {
			t.Fatalf("cache key %T is not a srcKey", key)
		}
		kv := reflect.ValueOf(key)
		name, data := kv.Field(0).String(), kv.Field(1)
		templatesSeen[name] = true
		if why := notPlain(data.Type()); why != "" {
			t.Errorf("template %s renders %v, which holds %s", name, data.Type(), why)
		}
		src, err := k.execute()
		if err != nil {
			t.Fatalf("%s %+v: %v", name, data, err)
		}
		if src != val.(string) {
			t.Errorf("%s %+v: the cached source differs from a fresh rendering", name, data)
		}
		return true
	})
	var missing []string
	for _, name := range []string{"elementwise", "reduce", "argreduce", "softmax", "softmax_seg", "cumsum", "cumsum_offsets",
		"gather", "scatter", "philox", "matmul_tiled", "matmul_naive"} {
		if !templatesSeen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the sweep rendered no %v", missing)
	}
	var seen []string
	for name := range templatesSeen {
		seen = append(seen, name)
	}
	slices.Sort(seen)
	t.Logf("%d cached sources of %v", n, seen)
}

// notPlain says what in t is not a plain value (strings, bools, integers,
// and arrays and structs of them), or "".
func notPlain(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return ""
	case reflect.Array:
		return notPlain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if why := notPlain(t.Field(i).Type); why != "" {
				return t.Field(i).Name + ": " + why
			}
		}
		return ""
	}
	return "a " + t.Kind().String()
}

// TestNotPlain checks the check on types a template must not render.
func TestNotPlain(t *testing.T) {
	type inner struct{ p *int }
	for _, c := range []struct {
		v     any
		plain bool
	}{
		{ewData{}, true}, {mmData{}, true}, {struct{ F float64 }{}, false}, {struct{ A [2]inner }{}, false},
		{struct{ I any }{}, false}, {struct{ B [3]bool }{}, true},
	} {
		if why := notPlain(reflect.TypeOf(c.v)); (why == "") != c.plain {
			t.Errorf("%T: %q", c.v, why)
		}
	}
}

// TestTemplatesOnlySubstitute checks that the templates compute nothing:
// they call no function but dict (bundling a sub-template's values) and
// the comparisons and logic their conditions need, so every expression,
// address and size they print comes from Go, where the data decide it.
func TestTemplatesOnlySubstitute(t *testing.T) {
	allowed := map[string]bool{"dict": true, "eq": true, "ne": true, "not": true, "and": true, "or": true}
	var walk func(name string, n parse.Node)
	walk = func(name string, n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(name, c)
				}
			}
		case *parse.ActionNode:
			walk(name, n.Pipe)
		case *parse.IfNode:
			walk(name, &n.BranchNode)
		case *parse.RangeNode:
			walk(name, &n.BranchNode)
		case *parse.WithNode:
			walk(name, &n.BranchNode)
		case *parse.BranchNode:
			walk(name, n.Pipe)
			walk(name, n.List)
			walk(name, n.ElseList)
		case *parse.TemplateNode:
			walk(name, n.Pipe)
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					walk(name, c)
				}
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(name, a)
			}
		case *parse.IdentifierNode:
			if !allowed[n.Ident] {
				t.Errorf("template %s calls %s", name, n.Ident)
			}
		}
	}
	for _, tm := range templates.Templates() {
		if tm.Tree != nil {
			walk(tm.Name(), tm.Tree.Root)
		}
	}
}
