package torchref

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

var families = []string{"elementwise", "reduce", "linalg", "index", "nn", "shape"}

var dtypes = map[string]bool{"float32": true, "float64": true, "int32": true, "int64": true, "bool": true}

func checkTensor(t *testing.T, where string, x Tensor) {
	t.Helper()
	if !dtypes[x.DType] {
		t.Errorf("%s: bad dtype %q", where, x.DType)
	}
	for _, s := range x.Shape {
		if s < 0 {
			t.Errorf("%s: negative dim in shape %v", where, x.Shape)
		}
	}
	if len(x.Data) != x.Numel() {
		t.Errorf("%s: shape %v wants %d values, have %d", where, x.Shape, x.Numel(), len(x.Data))
	}
	switch x.DType {
	case "int32", "int64":
		for i, v := range x.Data {
			if v != math.Trunc(v) {
				t.Errorf("%s: data[%d] = %v is not an integer", where, i, v)
				break
			}
		}
	case "bool":
		for i, v := range x.Data {
			if v != 0 && v != 1 {
				t.Errorf("%s: data[%d] = %v is not a bool", where, i, v)
				break
			}
		}
	case "float32":
		for i, v := range x.Data {
			if !math.IsNaN(v) && float64(float32(v)) != v {
				t.Errorf("%s: data[%d] = %v is not float32-representable", where, i, v)
				break
			}
		}
	}
}

func TestFilesWellFormed(t *testing.T) {
	total := 0
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			f := MustLoadFile(t, fam)
			if f.Torch == "" || f.Family != fam {
				t.Errorf("header: torch=%q family=%q", f.Torch, f.Family)
			}
			names := map[string]bool{}
			for _, c := range f.Cases {
				if names[c.Name] {
					t.Errorf("duplicate case name %s", c.Name)
				}
				names[c.Name] = true
				if c.Op == "" || !strings.HasPrefix(c.Name, c.Op+"/") {
					t.Errorf("%s: name does not start with op %q", c.Name, c.Op)
				}
				if c.Attrs == nil {
					t.Errorf("%s: attrs missing", c.Name)
				}
				if len(c.Outputs) == 0 {
					t.Errorf("%s: no outputs", c.Name)
				}
				if len(c.Grads) != len(c.Inputs) {
					t.Errorf("%s: %d grads for %d inputs", c.Name, len(c.Grads), len(c.Inputs))
					continue
				}
				anyGrad := false
				for i, in := range c.Inputs {
					checkTensor(t, c.Name+" input", in)
					if _, err := in.Materialize(); err != nil {
						t.Errorf("%s: input %d: %v", c.Name, i, err)
					}
					g := c.Grads[i]
					if in.RequiresGrad != (g != nil) {
						t.Errorf("%s: input %d requires_grad=%v but grad present=%v", c.Name, i, in.RequiresGrad, g != nil)
					}
					if in.RequiresGrad && !in.IsFloat() {
						t.Errorf("%s: input %d: %s requires grad", c.Name, i, in.DType)
					}
					if g != nil {
						anyGrad = true
						checkTensor(t, c.Name+" grad", *g)
						if !slices.Equal(g.Shape, in.Shape) || g.DType != in.DType {
							t.Errorf("%s: grad %d is %s%v, base input is %s%v", c.Name, i, g.DType, g.Shape, in.DType, in.Shape)
						}
					}
				}
				for _, o := range c.Outputs {
					checkTensor(t, c.Name+" output", o)
					if o.View != nil || o.RequiresGrad {
						t.Errorf("%s: output carries view/requires_grad", c.Name)
					}
				}
				if anyGrad != (len(c.GradOutputs) > 0) {
					t.Errorf("%s: %d grad_outputs but inputs needing grad=%v", c.Name, len(c.GradOutputs), anyGrad)
				}
				if len(c.GradOutputs) > len(c.Outputs) {
					t.Errorf("%s: more grad_outputs than outputs", c.Name)
				}
				for i, g := range c.GradOutputs {
					checkTensor(t, c.Name+" grad_output", g)
					if i < len(c.Outputs) && (!slices.Equal(g.Shape, c.Outputs[i].Shape) || g.DType != c.Outputs[i].DType || !g.IsFloat()) {
						t.Errorf("%s: grad_output %d is %s%v, output is %s%v", c.Name, i, g.DType, g.Shape, c.Outputs[i].DType, c.Outputs[i].Shape)
					}
				}
			}
			total += len(f.Cases)
			t.Logf("%s: %d cases (torch %s, package %s)", fam, len(f.Cases), f.Torch, f.TorchPackage)
		})
	}
	t.Logf("total %d cases", total)
}

func sameData(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

func norm(d, rank int) int {
	if d < 0 {
		d += rank
	}
	return d
}

// clampSlice mirrors Python slice bounds for a positive step.
func clampSlice(i, size int) int {
	if i < 0 {
		i += size
	}
	return max(0, min(i, size))
}

// TestViewsAgreeWithTorch checks Materialize (the Go view-chain semantics)
// against torch: contiguous/clone return the materialised input, and pure
// view ops equal the input's chain extended by the op itself.
func TestViewsAgreeWithTorch(t *testing.T) {
	checked := 0
	for _, fam := range []string{"shape", "index"} {
		for _, c := range MustLoad(t, fam) {
			if len(c.Inputs) != 1 {
				continue
			}
			in := c.Inputs[0]
			shape, err := in.ViewShape()
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			rank := len(shape)
			var step []any
			switch c.Op {
			case "contiguous", "clone":
			case "transpose":
				step = []any{"transpose", float64(norm(c.Int("dim0"), rank)), float64(norm(c.Int("dim1"), rank))}
			case "permute":
				var ps []any
				for _, p := range c.Ints("dims") {
					ps = append(ps, float64(norm(p, rank)))
				}
				step = []any{"permute", ps}
			case "select":
				d := norm(c.Int("dim"), rank)
				step = []any{"select", float64(d), float64(norm(c.Int("index"), shape[d]))}
			case "narrow":
				d := norm(c.Int("dim"), rank)
				step = []any{"narrow", float64(d), float64(norm(c.Int("start"), shape[d])), float64(c.Int("length"))}
			case "slice":
				d := norm(c.Int("dim"), rank)
				s, e := clampSlice(c.Int("start"), shape[d]), clampSlice(c.Int("end"), shape[d])
				step = []any{"slice", float64(d), float64(s), float64(max(s, e)), float64(c.Int("step"))}
			case "unsqueeze":
				step = []any{"unsqueeze", float64(norm(c.Int("dim"), rank+1))}
			case "expand":
				var ss []any
				for _, s := range c.Ints("sizes") {
					ss = append(ss, float64(s))
				}
				step = []any{"expand", ss}
			default:
				continue
			}
			x := in
			if step != nil {
				x.View = append(slices.Clone(in.View), step)
			}
			got, err := x.Materialize()
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
				continue
			}
			want := c.Outputs[0]
			if !slices.Equal(got.Shape, want.Shape) || !sameData(got.Data, want.Data) {
				t.Errorf("%s: materialised %v%v, torch %v%v", c.Name, got.Shape, got.Data, want.Shape, want.Data)
			}
			checked++
		}
	}
	// neg is exact, so it checks the elementwise inputs' view chains too.
	for _, c := range ByOp(MustLoad(t, "elementwise"), "neg") {
		x, err := c.Inputs[0].Materialize()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for i := range x.Data {
			x.Data[i] = -x.Data[i]
		}
		if want := c.Outputs[0]; !slices.Equal(x.Shape, want.Shape) || !sameData(x.Data, want.Data) {
			t.Errorf("%s: -materialised %v%v, torch %v%v", c.Name, x.Shape, x.Data, want.Shape, want.Data)
		}
		checked++
	}
	t.Logf("%d cases checked", checked)
	if checked < 50 {
		t.Errorf("only %d view cases checked", checked)
	}
}

func TestParseSpecialValues(t *testing.T) {
	src := `{"torch":"x","family":"f","cases":[{"name":"op/a","op":"op","attrs":{"value":"-inf","dim":[0,-1],"k":true,"m":null},
	"inputs":[{"dtype":"float64","shape":[6],"data":["nan","inf","-inf",-0.0,1e-300,0.1],"view":[["slice",0,1,6,2]],"requires_grad":true},
	          {"dtype":"bool","shape":[2],"data":[true,false]},{"dtype":"float64","shape":[],"data":[2.5]}],
	"outputs":[{"dtype":"int64","shape":[2],"data":[3,-4]}],"grad_outputs":[],"grads":[null,null,null]}]}`
	var f File
	if err := json.Unmarshal([]byte(src), &f); err != nil {
		t.Fatal(err)
	}
	c := f.Cases[0]
	d := c.Inputs[0].Data
	if !math.IsNaN(d[0]) || !math.IsInf(d[1], 1) || !math.IsInf(d[2], -1) || d[3] != 0 || !math.Signbit(d[3]) || d[4] != 1e-300 || d[5] != 0.1 {
		t.Errorf("data = %v", d)
	}
	if !c.Inputs[0].RequiresGrad || c.Inputs[1].RequiresGrad {
		t.Error("requires_grad")
	}
	if got := c.Inputs[1].Bools(); !slices.Equal(got, []bool{true, false}) {
		t.Errorf("bools = %v", got)
	}
	if s := c.Inputs[2].Shape; s == nil || len(s) != 0 || c.Inputs[2].Numel() != 1 {
		t.Errorf("0-d shape = %#v", s)
	}
	if !math.IsInf(c.Float("value"), -1) || !slices.Equal(c.Ints("dim"), []int{0, -1}) || !c.Bool("k") || c.Has("m") || c.Has("nope") {
		t.Error("attrs")
	}
	if c.Grads[0] != nil {
		t.Error("null grad")
	}
	m, err := c.Inputs[0].Materialize()
	if err != nil || !slices.Equal(m.Shape, []int{3}) || !math.IsInf(m.Data[0], 1) || m.Data[1] != 0 || m.Data[2] != 0.1 {
		t.Errorf("materialise = %v, %v", m, err)
	}
	bad := `{"dtype":"float64","shape":[1],"data":["bogus"]}`
	var x Tensor
	if err := json.Unmarshal([]byte(bad), &x); err == nil {
		t.Error("bogus value accepted")
	}
}

func TestMaterializeChain(t *testing.T) {
	// base 2x3 = [[0 1 2] [3 4 5]]
	base := Tensor{DType: "float64", Shape: []int{2, 3}, Data: []float64{0, 1, 2, 3, 4, 5}}
	cases := []struct {
		view  [][]any
		shape []int
		data  []float64
	}{
		{nil, []int{2, 3}, []float64{0, 1, 2, 3, 4, 5}},
		{[][]any{{"transpose", 0.0, 1.0}}, []int{3, 2}, []float64{0, 3, 1, 4, 2, 5}},
		{[][]any{{"slice", 1.0, 0.0, 3.0, 2.0}}, []int{2, 2}, []float64{0, 2, 3, 5}},
		{[][]any{{"select", 0.0, 1.0}}, []int{3}, []float64{3, 4, 5}},
		{[][]any{{"select", 0.0, 1.0}, {"select", 0.0, 2.0}}, []int{}, []float64{5}},
		{[][]any{{"narrow", 1.0, 1.0, 2.0}}, []int{2, 2}, []float64{1, 2, 4, 5}},
		{[][]any{{"unsqueeze", 1.0}, {"expand", []any{2.0, 2.0, 3.0}}}, []int{2, 2, 3}, []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
		{[][]any{{"unsqueeze", 0.0}, {"permute", []any{2.0, 0.0, 1.0}}}, []int{3, 1, 2}, []float64{0, 3, 1, 4, 2, 5}},
		{[][]any{{"slice", 1.0, 3.0, 3.0, 1.0}}, []int{2, 0}, []float64{}},
	}
	for _, tc := range cases {
		x := base
		x.View = tc.view
		got, err := x.Materialize()
		if err != nil {
			t.Errorf("%v: %v", tc.view, err)
			continue
		}
		if !slices.Equal(got.Shape, tc.shape) || !slices.Equal(got.Data, tc.data) {
			t.Errorf("%v: got %v%v, want %v%v", tc.view, got.Shape, got.Data, tc.shape, tc.data)
		}
	}
	for _, v := range [][]any{{"transpose", 0.0, 2.0}, {"slice", 0.0, 1.0, 3.0, 1.0}, {"expand", []any{3.0, 3.0}}, {"bogus"}, {"select", 0.5, 0.0}} {
		x := base
		x.View = [][]any{v}
		if _, err := x.Materialize(); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}
