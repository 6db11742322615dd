package wgsl

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestGrid(t *testing.T) {
	lim := DefaultLimits()
	for _, c := range []struct {
		n, wg int
		want  [3]uint32
	}{
		{0, 256, [3]uint32{0, 1, 1}},
		{1, 256, [3]uint32{1, 1, 1}},
		{256, 256, [3]uint32{1, 1, 1}},
		{257, 256, [3]uint32{2, 1, 1}},
		{65535 * 256, 256, [3]uint32{65535, 1, 1}},
		{65535*256 + 1, 256, [3]uint32{32768, 2, 1}},
		{100, 1, [3]uint32{100, 1, 1}},
	} {
		got, err := Grid(c.n, c.wg, lim)
		if err != nil || got != c.want {
			t.Errorf("Grid(%d, %d) = %v, %v; want %v", c.n, c.wg, got, err, c.want)
		}
	}
	// Folded grids cover n with at most one row of surplus, within limits.
	small := Limits{MaxWorkgroupsPerDimension: 7}
	for n := 1; n < 49*8; n++ {
		g, err := Grid(n, 8, small)
		if err != nil {
			t.Fatalf("Grid(%d): %v", n, err)
		}
		groups := (n + 7) / 8
		total := int(g[0]) * int(g[1])
		if g[0] > 7 || g[1] > 7 || total < groups || total-groups >= int(g[0]) || g[2] != 1 {
			t.Fatalf("Grid(%d, 8, max 7) = %v for %d groups", n, g, groups)
		}
	}
	if _, err := Grid(50*8, 8, small); err == nil {
		t.Error("Grid beyond max² did not fail")
	}
	if _, err := Grid(1<<31, 256, lim); err == nil {
		t.Error("Grid of 2^31 invocations did not fail")
	}
}

func TestParamsLayout(t *testing.T) {
	p := NewParams(ParamField{"n", "u32", 0}, ParamField{"p0", "f32", 0}, ParamField{"a", "array", 2},
		ParamField{"k", "i32", 0}, ParamField{"b", "array", 1})
	for name, off := range map[string]int{"n": 0, "p0": 4, "a": 16, "k": 48, "b": 64} {
		if got := p.Offset(name); got != off {
			t.Errorf("offset of %s = %d, want %d", name, got, off)
		}
	}
	if p.Size() != 80 {
		t.Errorf("size %d, want 80", p.Size())
	}
	want := "struct Params {\n\tn: u32,\n\tp0: f32,\n\ta: array<vec4<u32>, 2>,\n\tk: i32,\n\tb: array<vec4<u32>, 1>,\n}\n"
	if p.Struct() != want {
		t.Errorf("Struct() = %q, want %q", p.Struct(), want)
	}
	p.SetU32("n", 0xdeadbeef).SetF32("p0", -1.5).SetI32("k", -7).SetArray("a", []uint32{1, 2, 3, 4, 5}).SetArray("b", []uint32{9})
	b := p.Bytes()
	if len(b) != 80 || b[0] != 0xef || b[3] != 0xde {
		t.Fatalf("bytes %x", b)
	}
	if p.U32("n") != 0xdeadbeef || p.F32("p0") != -1.5 || p.I32("k") != -7 {
		t.Errorf("round trip: %#x %v %v", p.U32("n"), p.F32("p0"), p.I32("k"))
	}
	if a := p.Array("a"); fmt.Sprint(a) != "[1 2 3 4 5 0 0 0]" {
		t.Errorf("array a = %v", a)
	}
	if a := p.Array("b"); fmt.Sprint(a) != "[9 0 0 0]" {
		t.Errorf("array b = %v", a)
	}
	for _, bad := range []func(){
		func() { p.SetU32("nope", 1) },
		func() { p.SetF32("n", 1) },
		func() { p.SetArray("b", make([]uint32, 5)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("misuse did not panic")
				}
			}()
			bad()
		}()
	}
}

func TestScalarBits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int32
	}{{2.9, 2}, {-2.9, -2}, {math.Inf(1), math.MaxInt32}, {math.Inf(-1), math.MinInt32}, {math.NaN(), 0}, {1e20, math.MaxInt32}} {
		if got := int32(scalarBits(c.v, I32)); got != c.want {
			t.Errorf("scalarBits(%v, i32) = %d, want %d", c.v, got, c.want)
		}
	}
	if scalarBits(0.5, F32) != math.Float32bits(0.5) {
		t.Error("scalarBits f32")
	}
}

func TestCoalesce(t *testing.T) {
	for _, c := range []struct {
		shape   []int
		strides [][]int
		want    string
	}{
		{[]int{7, 33, 65}, [][]int{{33 * 65, 65, 1}}, "[15015] [[1]]"},
		{[]int{33, 65}, [][]int{{65, 1}, {1, 33}}, "[33 65] [[65 1] [1 33]]"},
		{[]int{33, 65}, [][]int{{65, 1}, {0, 1}}, "[33 65] [[65 1] [0 1]]"},
		{[]int{33, 1, 65}, [][]int{{65, 99, 1}, {0, 5, 0}}, "[2145] [[1] [0]]"},
		{[]int{1, 1}, [][]int{{5, 5}}, "[1] [[0]]"},
		{nil, [][]int{nil}, "[1] [[0]]"},
		{[]int{4, 6, 5}, [][]int{{30, 5, 1}}, "[120] [[1]]"},
		{[]int{4, 6, 5}, [][]int{{70, 5, 1}}, "[4 30] [[70 1]]"},
	} {
		s, st := coalesce(c.shape, c.strides)
		if got := fmt.Sprint(s, st); got != c.want {
			t.Errorf("coalesce(%v, %v) = %s, want %s", c.shape, c.strides, got, c.want)
		}
	}
}

// comment matches a WGSL line comment.
var comment = regexp.MustCompile(`//[^\n]*`)

// bindingDecl matches a storage binding declaration.
var bindingDecl = regexp.MustCompile(`@group\(0\) @binding\((\d+)\) var<storage, (read|read_write)>`)

// checkKernel checks the binding convention and the source's shape
// without a WGSL compiler: one declaration per Binding, in order, with
// the declared access; the params struct when there are params; params a
// multiple of 16 bytes within device's 1 KiB window; balanced braces; no
// unrendered template action.
// checkPlan checks every kernel of p (see checkKernel), and that there
// are n, and returns the first.
func checkPlan(t *testing.T, what string, p Plan, err error, n int) Kernel {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(p.Kernels) != n {
		t.Fatalf("%s: %d kernels, want %d", what, len(p.Kernels), n)
	}
	for i, k := range p.Kernels {
		checkKernel(t, fmt.Sprintf("%s, kernel %d", what, i), k, nil)
	}
	return p.Kernels[0]
}

func checkKernel(t *testing.T, what string, k Kernel, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	decls := bindingDecl.FindAllStringSubmatch(k.Source, -1)
	if len(decls) != len(k.Bindings) {
		t.Fatalf("%s: %d binding declarations for %d bindings\n%s", what, len(decls), len(k.Bindings), k.Source)
	}
	for i, d := range decls {
		if n, _ := strconv.Atoi(d[1]); n != i {
			t.Fatalf("%s: declaration %d has binding %d", what, i, n)
		}
		if (d[2] == "read") != k.Bindings[i].ReadOnly {
			t.Fatalf("%s: binding %d (%s) declared %s, ReadOnly %v", what, i, k.Bindings[i].Name, d[2], k.Bindings[i].ReadOnly)
		}
	}
	if len(k.Params) > 0 && !strings.Contains(k.Source, "var<uniform> params: Params;") {
		t.Fatalf("%s: params without a uniform declaration", what)
	}
	if len(k.Params)%16 != 0 || len(k.Params) > 1024 {
		t.Fatalf("%s: %d bytes of params", what, len(k.Params))
	}
	code := comment.ReplaceAllString(k.Source, "")
	if strings.Count(code, "{") != strings.Count(code, "}") || strings.Count(code, "(") != strings.Count(code, ")") {
		t.Fatalf("%s: unbalanced source\n%s", what, k.Source)
	}
	if strings.Contains(k.Source, "{{") || strings.Contains(k.Source, "<no value>") || !strings.Contains(k.Source, "fn main(") {
		t.Fatalf("%s: bad source\n%s", what, k.Source)
	}
	if k.Entry != "main" {
		t.Fatalf("%s: entry %q", what, k.Entry)
	}
}

func TestElementwiseModes(t *testing.T) {
	lim := DefaultLimits()
	c := Contiguous(4, 65)
	tr := Layout{Shape: []int{4, 65}, Strides: []int{1, 4}}
	bc := Layout{Shape: []int{4, 65}, Strides: []int{0, 0}, Offset: 3}
	for _, m := range []struct {
		out  Layout
		in   []Layout
		mode string
	}{
		{c, []Layout{c, c}, "vec4"},
		{c, []Layout{c, bc}, "vec4"},
		{c, []Layout{{Shape: []int{4, 65}, Strides: []int{65, 1}, Offset: 1}, c}, "contig"},
		{Contiguous(3, 5), []Layout{Contiguous(3, 5), Contiguous(3, 5)}, "contig"},
		{c, []Layout{tr, c}, "strided"},
		{Layout{Shape: []int{4, 65}, Strides: []int{1, 4}}, []Layout{tr, tr}, "strided"},
		{Layout{Offset: 5}, []Layout{{Offset: 2}, {Offset: 1}}, "contig"},
	} {
		k, err := Elementwise("x + y", []string{F32, F32}, F32, ElementwiseArgs{Out: m.out, In: m.in, Limits: lim})
		checkKernel(t, "x + y", k, err)
		if !strings.Contains(k.Source, "("+m.mode+")") {
			t.Errorf("out %v in %v: want mode %s\n%s", m.out, m.in, m.mode, k.Source[:80])
		}
	}
	// Identical requests share one source string.
	k1, _ := Elementwise("x * p0", []string{F32}, F32, ElementwiseArgs{Out: c, In: []Layout{tr}, P0: 1})
	k2, _ := Elementwise("x * p0", []string{F32}, F32, ElementwiseArgs{Out: c, In: []Layout{tr}, P0: 2})
	if unsafe.StringData(k1.Source) != unsafe.StringData(k2.Source) {
		t.Error("equal kernels do not share their source string")
	}
	if string(k1.Params) == string(k2.Params) {
		t.Error("p0 does not reach the params")
	}
	// Copies move bits; aliasing drops a binding; bools are u32.
	k, err := Elementwise("x", []string{I32}, I32, ElementwiseArgs{Out: c, In: []Layout{tr}})
	checkKernel(t, "copy", k, err)
	if !strings.Contains(k.Source, "array<u32>") || strings.Contains(k.Source, "array<i32>") {
		t.Error("copy does not move u32 bits")
	}
	k, err = Elementwise("x * y", []string{F32, F32}, F32, ElementwiseArgs{Out: tr, In: []Layout{tr, c}, Alias: []bool{true, false}})
	checkKernel(t, "in place", k, err)
	if len(k.Bindings) != 2 || k.Bindings[1].Name != "y" {
		t.Errorf("in-place bindings %v", k.Bindings)
	}
	k, err = Elementwise("select(z, y, x)", []string{Bool, I32, I32}, I32, ElementwiseArgs{Out: tr, In: []Layout{tr, c, bc}})
	checkKernel(t, "where", k, err)
	if !strings.Contains(k.Source, "p0: i32") || !strings.Contains(k.Source, "!= 0u)") {
		t.Errorf("where: scalar type or bool load\n%s", k.Source)
	}
	k, err = Elementwise("p0", nil, F32, ElementwiseArgs{Out: c, P0: 2.5})
	checkKernel(t, "fill", k, err)
	k, err = Elementwise("pow_(x, p0) + erf_(x) + log1p(x) + log_(x) + tanh_(x)", []string{F32}, F32, ElementwiseArgs{Out: c, In: []Layout{c}})
	checkKernel(t, "helpers", k, err)
	for _, h := range Helpers {
		if !strings.Contains(k.Source, "fn "+h+"(") {
			t.Errorf("helper %s missing", h)
		}
	}
	k, err = Elementwise("x + y", []string{F32, F32}, F32, ElementwiseArgs{Out: c, In: []Layout{c, c}})
	checkKernel(t, "no helpers", k, err)
	if strings.Contains(k.Source, "fn pow_") || strings.Contains(k.Source, "fn erf_") {
		t.Error("unused helpers included")
	}
}

func TestElementwiseErrors(t *testing.T) {
	c := Contiguous(3, 4)
	big := Layout{Shape: []int{2, 2, 2, 2, 2, 2, 2, 2, 2}, Strides: []int{1000000, 200000, 30000, 4000, 500, 60, 7, 3, 1}}
	for name, f := range map[string]func() error{
		"type": func() error {
			_, err := Elementwise("x", []string{"f64"}, F32, ElementwiseArgs{Out: c, In: []Layout{c}})
			return err
		},
		"shape": func() error {
			_, err := Elementwise("x", []string{F32}, F32, ElementwiseArgs{Out: c, In: []Layout{Contiguous(4, 3)}})
			return err
		},
		"count": func() error {
			_, err := Elementwise("x", []string{F32, F32}, F32, ElementwiseArgs{Out: c, In: []Layout{c}})
			return err
		},
		"rank": func() error {
			_, err := Elementwise("x", []string{F32}, F32, ElementwiseArgs{Out: big, In: []Layout{big}})
			return err
		},
		"negative": func() error {
			_, err := Elementwise("x", []string{F32}, F32, ElementwiseArgs{Out: c, In: []Layout{{Shape: []int{3, 4}, Strides: []int{-4, 1}}}})
			return err
		},
		"aliastype": func() error {
			_, err := Elementwise("f32(x)", []string{I32}, F32, ElementwiseArgs{Out: c, In: []Layout{c}, Alias: []bool{true}})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReducePlans(t *testing.T) {
	lim := DefaultLimits()
	for _, c := range []struct {
		x       Layout
		dims    []int
		kernels int
		mode    string
		scratch int64
	}{
		{Contiguous(7, 33, 65), []int{2}, 1, "group", 0},
		{Contiguous(7, 33, 65), []int{0}, 1, "serial", 0},
		{Contiguous(40, 3000), []int{0}, 1, "serial", 0},
		{Contiguous(100000), []int{0}, 2, "group", 4 * 13},
		{Contiguous(3, 20001), []int{1}, 2, "group", 4 * 3 * 3},
		{Contiguous(3, 0), []int{1}, 1, "elementwise", 0},
		{Contiguous(0, 3), []int{1}, 0, "", 0},
	} {
		out := Contiguous(c.x.Shape...)
		out.Shape = append([]int(nil), out.Shape...)
		for _, d := range c.dims {
			out.Shape[d] = 1
		}
		out = Contiguous(out.Shape...)
		for _, op := range []string{"sum", "max", "min"} {
			for _, typ := range []string{F32, I32} {
				p, err := Reduce(op, typ, out, c.x, lim)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Kernels) != c.kernels || p.Scratch != c.scratch {
					t.Fatalf("%v over %v: %d kernels, scratch %d; want %d, %d", c.x.Shape, c.dims, len(p.Kernels), p.Scratch, c.kernels, c.scratch)
				}
				for i, k := range p.Kernels {
					checkKernel(t, fmt.Sprint(op, typ, c.x.Shape), k, nil)
					if i == 0 && !strings.Contains(k.Source, c.mode) {
						t.Errorf("%v over %v: want %s\n%s", c.x.Shape, c.dims, c.mode, k.Source[:120])
					}
				}
				if c.kernels == 2 && (p.Kernels[0].Bindings[0].Name != "scratch" || p.Kernels[1].Bindings[1].Name != "scratch") {
					t.Errorf("two-stage bindings %v %v", p.Kernels[0].Bindings, p.Kernels[1].Bindings)
				}
			}
		}
	}
	if _, err := Reduce("mean", F32, Contiguous(1), Contiguous(3), lim); err == nil {
		t.Error("unknown op accepted")
	}
	if _, err := Reduce("sum", F32, Contiguous(2), Contiguous(3), lim); err == nil {
		t.Error("bad keepdim shape accepted")
	}
}

func TestOtherGenerators(t *testing.T) {
	lim := DefaultLimits()
	x := Contiguous(7, 33)
	tr := Layout{Shape: []int{7, 33}, Strides: []int{1, 7}}
	for _, typ := range []string{F32, I32} {
		for _, l := range []Layout{x, tr, Contiguous(3, 5000)} {
			vals := Contiguous(l.Shape[0], 1)
			p, err := ArgReduce("max", typ, Contiguous(l.Shape[0], 1), &vals, l, 1, lim)
			checkPlan(t, "argmax", p, err, 1)
			p, err = ArgReduce("min", typ, Contiguous(l.Shape[0], 1), nil, l, 1, lim)
			checkPlan(t, "argmin", p, err, 1)
			p, err = CumSum(typ, LineArgs{Out: l, X: l, Dim: 1, InPlace: true, Limits: lim})
			checkPlan(t, "cumsum", p, err, 1)
		}
		p, err := IndexAdd(typ, x, 0, Contiguous(4), Contiguous(4, 33), lim)
		checkPlan(t, "index_add", p, err, 1)
		p, err = IndexAmax(typ, x, 0, Contiguous(4), Contiguous(4, 33), lim)
		checkPlan(t, "index_amax", p, err, 1)
		p, err = ScatterAdd(typ, x, 1, Contiguous(5, 9), Contiguous(5, 9), lim)
		checkPlan(t, "scatter_add", p, err, 1)
	}
	for _, log := range []bool{false, true} {
		for _, l := range []Layout{x, tr, Contiguous(3, 5000), Contiguous(5000, 3)} {
			p, err := Softmax(log, LineArgs{Out: Contiguous(l.Shape...), X: l, Dim: 1, Limits: lim})
			checkPlan(t, "softmax", p, err, 1)
		}
	}
	k, err := IndexSelect(Contiguous(7, 4), x, 1, Contiguous(4), lim)
	checkKernel(t, "index_select", k, err)
	k, err = Gather(Contiguous(7, 4), x, 1, Contiguous(7, 4), lim)
	checkKernel(t, "gather", k, err)
	for _, d := range []string{"words", "uniform", "normal"} {
		k, err = Philox(d, Contiguous(5, 7), 1, 2, 0, 1, lim)
		checkKernel(t, "philox "+d, k, err)
	}
	if _, err := Philox("normal", tr, 1, 2, 0, 1, lim); err == nil {
		t.Error("Philox into a strided view accepted")
	}
	tiled128 := func(out, a, b Layout, lim Limits) (Plan, error) { return MatMulTiled(128, out, a, b, lim) }
	for _, f := range []func(out, a, b Layout, lim Limits) (Plan, error){MatMul, tiled128, MatMulNaive} {
		p, err := f(Contiguous(2, 7, 65), Layout{Shape: []int{2, 7, 33}, Strides: []int{0, 1, 7}}, Contiguous(2, 33, 65), lim)
		k = checkPlan(t, "matmul", p, err, 1)
		if k.Groups[2] != 2 {
			t.Errorf("matmul groups %v", k.Groups)
		}
		if _, err := f(Contiguous(2, 7, 65), Contiguous(2, 7, 32), Contiguous(2, 33, 65), lim); err == nil {
			t.Error("mismatched matmul accepted")
		}
	}
	p, err := MatMul(Contiguous(1, 64, 64), Contiguous(1, 64, 16), Contiguous(1, 16, 64), lim)
	k = checkPlan(t, "matmul fits", p, err, 1)
	if !strings.Contains(k.Source, "unguarded") || !strings.Contains(k.Source, "64×64 output tiles") || k.Groups != [3]uint32{1, 1, 1} {
		t.Errorf("matmul 64×16·16×64: groups %v, fits %v", k.Groups, strings.Contains(k.Source, "unguarded"))
	}
	p, err = MatMul(Contiguous(3, 256, 130), Contiguous(3, 256, 16), Contiguous(3, 16, 130), lim)
	k = checkPlan(t, "matmul 128", p, err, 1)
	if strings.Contains(k.Source, "unguarded") || !strings.Contains(k.Source, "128×128 output tiles") || k.Groups != [3]uint32{2, 2, 3} {
		t.Errorf("matmul 256×16·16×130: groups %v\n%s", k.Groups, k.Source[:200])
	}
	if _, err := MatMulTiled(32, Contiguous(1, 1, 1), Contiguous(1, 1, 1), Contiguous(1, 1, 1), lim); err == nil {
		t.Error("tile 32 accepted")
	}
	p, err = MatMul(Contiguous(1, 7, 7), Contiguous(1, 7, 7), Contiguous(1, 7, 7), Limits{MaxWorkgroupSize: 64})
	k = checkPlan(t, "matmul small limits", p, err, 1)
	if !strings.Contains(k.Source, "naive") {
		t.Error("tiled matmul chosen under a 64-invocation limit")
	}
}

// TestMatMulTiles checks the tiled configurations and that the template
// follows them: accumulators, workgroup tiles, loads, stores.
func TestMatMulTiles(t *testing.T) {
	lim := DefaultLimits()
	for tile, c := range mmTiles {
		if err := c.check(); err != nil || c.TM != tile || c.TN != tile || c.storage() > 8<<10 {
			t.Errorf("tile %d: %+v (%v), %d bytes", tile, c, err, c.storage())
		}
	}
	for _, c := range []mmTile{mmTiles[64], mmTiles[128], {TM: 64, TN: 128, KS: 8, RM: 4, RN: 8}, {TM: 128, TN: 64, KS: 4, RM: 8, RN: 4}} {
		p, err := matmulTiled(c, Contiguous(1, 130, 129), Contiguous(1, 130, 9), Contiguous(1, 9, 129), nil, lim, true)
		k := checkPlan(t, fmt.Sprintf("matmul %+v", c), p, err, 1)
		for s, n := range map[string]int{
			"vec4<f32>(0.0);": c.RM * c.RN / 4,
			fmt.Sprintf("var<workgroup> ta: array<vec4<f32>, %d>;", c.KS*c.TM/4): 1,
			fmt.Sprintf("var<workgroup> tb: array<vec4<f32>, %d>;", c.KS*c.TN/4): 1,
			"= v;":   (c.TM + c.TN) * c.KS / mmThreads,
			" += a":  c.RM * c.RN / 4 * c.KS,
			"b_out[": c.RM * c.RN,
		} {
			if got := strings.Count(k.Source, s); got != n {
				t.Errorf("%+v: %d of %q, want %d", c, got, s, n)
			}
		}
	}
	// vec4 loads: a along k and b along n (row-major), a along m and b
	// along k (transposed); none at an odd offset or with vec4 off.
	for _, c := range []mmTile{mmTiles[64], mmTiles[128], {TM: 64, TN: 128, KS: 8, RM: 4, RN: 8}, {TM: 128, TN: 64, KS: 4, RM: 8, RN: 4}} {
		tr := func(r, c, off int) Layout {
			return Layout{Shape: []int{1, r, c}, Strides: []int{r * c, 1, r}, Offset: off}
		}
		for _, v := range []struct {
			a, b   Layout
			vec4   bool
			va, vb string
		}{{Contiguous(1, 132, 36), Contiguous(1, 36, 68), true, "a along k", "b along n"}, {tr(132, 36, 4), tr(36, 68, 8), true, "a along m", "b along k"},
			{tr(132, 36, 1), Contiguous(1, 36, 68), true, "", "b along n"}, {Contiguous(1, 132, 36), Contiguous(1, 36, 68), false, "", ""}} {
			p, err := matmulTiled(c, Contiguous(1, 132, 68), v.a, v.b, nil, lim, v.vec4)
			k := checkPlan(t, fmt.Sprintf("matmul vec4 %+v", c), p, err, 1)
			for op, want := range map[string]string{"a": v.va, "b": v.vb} {
				nv := (c.TM*c.KS/4 + mmThreads - 1) / mmThreads
				if op == "b" {
					nv = (c.TN*c.KS/4 + mmThreads - 1) / mmThreads
				}
				if got := strings.Count(k.Source, "v = b_"+op+"4["); (want != "") != (got == nv && strings.Contains(k.Source, want)) {
					t.Errorf("%+v, %v·%v: %d vec4 loads of %s, want %q\n%s", c, v.a, v.b, got, op, want, k.Source)
				}
			}
		}
	}
	for _, c := range []mmTile{{TM: 64, TN: 64, KS: 16, RM: 4, RN: 8}, {TM: 48, TN: 48, KS: 16, RM: 3, RN: 3}, {TM: 64, TN: 64, KS: 2, RM: 4, RN: 4}} {
		if _, err := matmulTiled(c, Contiguous(1, 1, 1), Contiguous(1, 1, 1), Contiguous(1, 1, 1), nil, lim, true); err == nil {
			t.Errorf("tile %+v accepted", c)
		}
	}
	if _, err := matmulTiled(mmTiles[64], Contiguous(1, 1, 1), Contiguous(1, 1, 1), Contiguous(1, 1, 1), nil, Limits{MaxWorkgroupStorage: 4 << 10}, true); err == nil {
		t.Error("tile 64 accepted with 4 KiB of workgroup memory")
	}
}

func TestWalkCode(t *testing.T) {
	w := walk{Flat: "i", Shape: "sh", Rank: 5, Vars: []string{"a"}, Inits: []string{"7u"}, Strides: []string{"st"}, Valid: "ok", Bounds: "bd"}
	code := w.Code()
	for _, s := range []string{"var a: u32 = 7u;", "params.sh[1].x", "a += c4 * params.st[1].x;", "a += rem * params.st[0].x;", "ok = ok && rem < params.bd[0].x;"} {
		if !strings.Contains(code, s) {
			t.Errorf("walk code lacks %q:\n%s", s, code)
		}
	}
}
