package nn_test

import (
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// withBuffer is a module with a buffer of its own and a child, as the
// WithBuffer module of tools/torchref/train.py.
type withBuffer struct {
	Lin     *nn.LinearLayer
	Running *tensor.Tensor
}

func newWithBuffer(opts ...tensor.Option) *withBuffer {
	return &withBuffer{Lin: nn.NewLinear(3, 2, opts...), Running: tensor.Zeros([]int{2}, opts...).Keep()}
}

func (w *withBuffer) Forward(x *tensor.Tensor) *tensor.Tensor { return w.Lin.Forward(x).Add(w.Running) }
func (w *withBuffer) Slots() []nn.Slot                        { return []nn.Slot{nn.Buffer("running", &w.Running)} }
func (w *withBuffer) Children() []nn.Child                    { return []nn.Child{{Name: "lin", Module: w.Lin}} }

// tied returns an embedding and a bias-free output layer sharing one
// weight, named as in modules.json's tied_weights.
func tied(opts ...tensor.Option) (*nn.Sequential, *nn.EmbeddingLayer, *nn.LinearLayer) {
	emb, head := nn.NewEmbedding(10, 4, opts...), nn.NewLinear(4, 10, opts...)
	head.Weight, head.Bias = emb.Weight, nil
	return (&nn.Sequential{}).Add("emb", emb).Add("head", head), emb, head
}

// architectures builds the modules of testdata/torch/modules.json.
var architectures = map[string]func() nn.Module{
	"mlp": func() nn.Module { return nn.NewMLP([]int{5, 7, 3}, (*tensor.Tensor).ReLU) },
	"named_sequential": func() nn.Module {
		return (&nn.Sequential{}).Add("fc1", nn.NewLinear(4, 6)).Add("act", nn.Func((*tensor.Tensor).Tanh)).
			Add("drop", nn.NewDropout(0.1)).Add("fc2", nn.NewLinear(6, 2))
	},
	"nested": func() nn.Module {
		head := nn.NewLinear(4, 2)
		head.Bias = nil
		return (&nn.Sequential{}).Add("embed", nn.NewEmbedding(10, 4)).
			Add("body", nn.NewSequential(nn.NewLayerNorm([]int{4}), nn.NewLinear(4, 4))).Add("head", head)
	},
	"lstm_2_layers": func() nn.Module { return nn.NewLSTM(3, 5, 2) },
	"lstm_cell":     func() nn.Module { return nn.NewLSTMCell(3, 5) },
	"rnn_cell":      func() nn.Module { return nn.NewRNNCell(3, 5) },
	"shared_module": func() nn.Module {
		lin := nn.NewLinear(3, 3)
		return nn.NewSequential(lin, nn.Func((*tensor.Tensor).ReLU), lin)
	},
	"tied_weights": func() nn.Module { m, _, _ := tied(); return m },
	"buffer": func() nn.Module {
		return nn.NewSequential(newWithBuffer(), nn.NewSequential(newWithBuffer()))
	},
}

func names(seq func(func(string, *tensor.Tensor) bool)) []string {
	var out []string
	for n := range seq {
		out = append(out, n)
	}
	return out
}

// TestStateDictNamesMatchTorch: the state dict, parameters and buffers
// of each architecture have the names (and shapes) PyTorch gives the
// same architecture, shared modules and tied weights included.
func TestStateDictNamesMatchTorch(t *testing.T) {
	cases := torchref.MustLoad(t, "modules")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			mk := architectures[c.Name]
			if mk == nil {
				t.Fatalf("no architecture for %q", c.Name)
			}
			m := mk()
			sd := nn.StateDict(m)
			keys, shapes := strs(c.Attrs["keys"]), c.Attrs["shapes"].([]any)
			if got := slices.Sorted(maps.Keys(sd)); !slices.Equal(got, slices.Sorted(slices.Values(keys))) {
				t.Fatalf("state dict %q, PyTorch %q", got, keys)
			}
			for i, k := range keys {
				var want []int
				for _, v := range shapes[i].([]any) {
					want = append(want, int(v.(float64)))
				}
				if !slices.Equal(sd[k].Shape(), want) {
					t.Errorf("%s: shape %v, PyTorch %v", k, sd[k].Shape(), want)
				}
			}
			if got := names(nn.NamedParameters(m)); !slices.Equal(got, strs(c.Attrs["params"])) {
				t.Errorf("NamedParameters %q, PyTorch %q", got, c.Attrs["params"])
			}
			if got := names(nn.NamedBuffers(m)); !slices.Equal(got, strs(c.Attrs["buffers"])) {
				t.Errorf("NamedBuffers %q, PyTorch %q", got, c.Attrs["buffers"])
			}
			if len(nn.Parameters(m)) != len(strs(c.Attrs["params"])) || len(nn.Buffers(m)) != len(strs(c.Attrs["buffers"])) {
				t.Errorf("Parameters/Buffers disagree with their named forms")
			}
		})
	}
	for name := range architectures {
		if !slices.ContainsFunc(cases, func(c torchref.Case) bool { return c.Name == name }) {
			t.Errorf("architecture %q has no case in modules.json", name)
		}
	}
}

func strs(v any) []string {
	out := []string{}
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestNamedModules: the root first under "", then depth first, each
// module once.
func TestNamedModules(t *testing.T) {
	m := architectures["nested"]()
	var got []string
	for n := range nn.NamedModules(m) {
		got = append(got, n)
	}
	want := []string{"", "embed", "body", "body.0", "body.1", "head"}
	if !slices.Equal(got, want) {
		t.Errorf("NamedModules %q, want %q", got, want)
	}
	got = got[:0]
	for n := range nn.NamedModules(architectures["shared_module"]()) {
		got = append(got, n)
		if n == "0" {
			break // early exit stops the walk
		}
	}
	if !slices.Equal(got, []string{"", "0"}) {
		t.Errorf("NamedModules with break: %q", got)
	}
}

// TestToKeepsTiesAndModes moves a model with tied weights, a buffer and
// a gradient to every device and back: ties hold, parameters still
// require grad, the gradient moved, the buffer survives Scopes.
func TestToKeepsTiesAndModes(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		m, emb, head := tied()
		wb := newWithBuffer()
		s := nn.NewSequential(m, wb)
		autograd.Backward(emb.Forward(tensor.New([]int32{1, 2})).Sum())
		want := emb.Weight.Float32s()
		tensor.Scope(func() { nn.To(s, dev) })
		if head.Weight != emb.Weight {
			t.Fatalf("%v: the tied weight was moved twice", dev)
		}
		for name, p := range nn.StateDict(s) {
			if p.Device() != dev {
				t.Errorf("%v: %s is on %v", dev, name, p.Device())
			}
		}
		if !emb.Weight.RequiresGrad() || !emb.Weight.IsLeaf() || wb.Running.RequiresGrad() {
			t.Errorf("%v: requires-grad flags changed", dev)
		}
		if g := emb.Weight.Grad(); g == nil || g.Device() != dev || g.Float32s()[4] != 1 {
			t.Errorf("%v: the gradient did not move with its parameter", dev)
		}
		tensor.Scope(func() { _ = wb.Running.Float32s() })
		nn.To(s, tensor.CPU)
		approx.Require(t, "round trip", toF64(emb.Weight.Float32s()), toF64(want), approx.Rel1(0))
		_ = wb.Running.Float32s() // panics if a Scope released the buffer
	}
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestToAllOrNothing: a float64 layer cannot move to a GPU; the float32
// layer before it stays where it was too.
func TestToAllOrNothing(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	a, b := nn.NewLinear(2, 2), nn.NewLinear(2, 2, tensor.Of(tensor.Float64))
	s := nn.NewSequential(a, b)
	before := nn.StateDict(s)
	wantPanic(t, "To(gpu) with a float64 layer", tensor.ErrDType, func() { nn.To(s, dev) })
	for name, p := range nn.StateDict(s) {
		if p != before[name] || p.Device() != tensor.CPU {
			t.Errorf("%s changed although To failed", name)
		}
	}
}

// TestTrainEvalFreeze: Eval and Train reach nested modules; Freeze stops
// gradients of one sub-module, Unfreeze restores them.
func TestTrainEvalFreeze(t *testing.T) {
	d1, d2 := nn.NewDropout(0.5), nn.NewDropout(0.5)
	body := nn.NewSequential(nn.NewLinear(3, 3, f64()...), d2)
	m := nn.NewSequential(nn.NewLinear(3, 3, f64()...), d1, body)
	nn.Eval(m)
	if d1.Training || d2.Training {
		t.Error("Eval did not reach every dropout")
	}
	nn.Train(body)
	if d1.Training || !d2.Training {
		t.Error("Train(body) must switch body's dropout only")
	}
	nn.Eval(m)
	nn.Freeze(body)
	x := tensor.Ones([]int{2, 3}, f64()...)
	tensor.Scope(func() { autograd.Backward(m.Forward(x).Sum()) })
	for name, p := range nn.NamedParameters(m) {
		frozen := strings.HasPrefix(name, "2.")
		if frozen == (p.Grad() != nil) || frozen == p.RequiresGrad() {
			t.Errorf("%s: requires grad %v, grad %v after freezing body", name, p.RequiresGrad(), p.Grad() != nil)
		}
		_ = p.Float64s() // frozen parameters survive the Scope
	}
	nn.Unfreeze(m)
	for name, p := range nn.NamedParameters(m) {
		if !p.RequiresGrad() {
			t.Errorf("%s frozen after Unfreeze", name)
		}
	}
}

// cycle is a module that contains itself.
type cycle struct{ self nn.Module }

func (c *cycle) Slots() []nn.Slot     { return nil }
func (c *cycle) Children() []nn.Child { return []nn.Child{{Name: "me", Module: c.self}} }

// badSlots returns the slots it is given.
type badSlots []nn.Slot

func (b badSlots) Slots() []nn.Slot     { return b }
func (b badSlots) Children() []nn.Child { return nil }

// TestWalkMisuse: malformed trees are ErrArgument naming the module,
// never a nil dereference or an endless walk.
func TestWalkMisuse(t *testing.T) {
	c := &cycle{}
	c.self = c
	var w *tensor.Tensor
	for _, tc := range []struct {
		name, want string
		m          nn.Module
	}{
		{"nil module", `module "" is nil`, nil},
		{"nil layer", `module "1" is nil`, nn.NewSequential(nn.NewLinear(1, 1), nil)},
		{"typed nil layer", `module "0" is a nil`, nn.NewSequential((*nn.LinearLayer)(nil))},
		{"cycle", "contains itself", c},
		{"names and layers", "2 names for 1 layers", &nn.Sequential{Layers: []nn.Layer{nn.NewLinear(1, 1)}, Names: []string{"a", "b"}}},
		{"dotted name", `name "a.b"`, &nn.Sequential{Layers: []nn.Layer{nn.NewLinear(1, 1)}, Names: []string{"a.b"}}},
		{"duplicate name", `name "a"`, &nn.Sequential{Layers: []nn.Layer{nn.NewLinear(1, 1), nn.NewLinear(1, 1)}, Names: []string{"a", "a"}}},
		{"empty slot name", `name ""`, badSlots{nn.Param("", &w)}},
		{"nil slot pointer", "nil pointer", badSlots{nn.Param("w", nil)}},
		{"nil LSTM cell", "cell 1 is nil", &nn.LSTM{Cells: []*nn.LSTMCell{nn.NewLSTMCell(1, 1), nil}}},
	} {
		for fn, f := range map[string]func(nn.Module){
			"StateDict":  func(m nn.Module) { nn.StateDict(m) },
			"Parameters": func(m nn.Module) { nn.Parameters(m) },
			"To":         func(m nn.Module) { nn.To(m, tensor.CPU) },
			"Eval":       nn.Eval,
			"Freeze":     nn.Freeze,
		} {
			err := tensor.Catch(func() { f(tc.m) })
			if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %s: %v, want ErrArgument naming %q", tc.name, fn, err, tc.want)
			}
		}
	}
	s := nn.NewSequential(nn.NewLinear(1, 1))
	wantPanic(t, "Add a taken name", tensor.ErrArgument, func() { s.Add("0", nn.NewLinear(1, 1)) })
	wantPanic(t, "Add a dotted name", tensor.ErrArgument, func() { s.Add("a.b", nn.NewLinear(1, 1)) })
	s.Add("", nn.NewLinear(1, 1)).Add("out", nn.NewLinear(1, 1))
	if got := slices.Sorted(maps.Keys(nn.StateDict(s))); !slices.Equal(got, []string{"0.bias", "0.weight", "1.bias", "1.weight", "out.bias", "out.weight"}) {
		t.Errorf("Add names: %q", got)
	}
}

// TestStrictLoad saves a model and loads it, through checkpoint.LoadInto
// and nn.StateDict, into a fresh model on each device (in place: the
// parameters an optimizer holds are the ones loaded), and into models
// of another architecture, which strict loading refuses naming every
// missing, unexpected and mis-shaped key, loading nothing.
func TestStrictLoad(t *testing.T) {
	src := nn.NewSequential(newWithBuffer(), nn.NewLinear(2, 4))
	src.Layers[0].(*withBuffer).Running.Fill(0.5)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpoint.Save(path, nn.StateDict(src), nil); err != nil {
		t.Fatal(err)
	}
	for _, dev := range devtest.Devices(t) {
		f, err := checkpoint.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		dst := nn.NewSequential(newWithBuffer(tensor.On(dev)), nn.NewLinear(2, 4, tensor.On(dev)))
		held := nn.Parameters(dst)
		if _, err := checkpoint.LoadInto(f, nn.StateDict(dst), true); err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		want, got := nn.StateDict(src), nn.StateDict(dst)
		for name := range want {
			approx.Require(t, name, toF64(got[name].Float32s()), toF64(want[name].Float32s()), approx.Rel1(0))
		}
		if !slices.Equal(held, nn.Parameters(dst)) {
			t.Errorf("%v: loading replaced parameters instead of writing them", dev)
		}
		// Model to model in memory, as load_state_dict(other.state_dict()).
		copied := nn.NewSequential(newWithBuffer(tensor.On(dev)), nn.NewLinear(2, 4, tensor.On(dev)))
		if _, err := checkpoint.LoadInto(&checkpoint.File{Tensors: nn.StateDict(dst)}, nn.StateDict(copied), true); err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		approx.Require(t, "copied", toF64(nn.StateDict(copied)["1.weight"].Float32s()), toF64(want["1.weight"].Float32s()), approx.Rel1(0))

		other := (&nn.Sequential{}).Add("0", newWithBuffer()).Add("head", nn.NewLinear(2, 5))
		before := other.Layers[0].(*withBuffer).Lin.Weight.Float32s()
		_, err = checkpoint.LoadInto(f, nn.StateDict(other), true)
		var me *checkpoint.MismatchError
		if !errors.As(err, &me) || !errors.Is(err, checkpoint.ErrMismatch) {
			t.Fatalf("%v: loading into another architecture: %v", dev, err)
		}
		if !slices.Equal(me.Missing, []string{"head.bias", "head.weight"}) || !slices.Equal(me.Unexpected, []string{"1.bias", "1.weight"}) {
			t.Errorf("missing %q, unexpected %q", me.Missing, me.Unexpected)
		}
		if after := other.Layers[0].(*withBuffer).Lin.Weight.Float32s(); !slices.Equal(after, before) {
			t.Error("a failed strict load changed the model")
		}
		shaped := nn.NewSequential(newWithBuffer(), nn.NewLinear(2, 5))
		_, err = checkpoint.LoadInto(f, nn.StateDict(shaped), false)
		if !errors.As(err, &me) || len(me.Mismatched) != 2 || me.Mismatched[0].Name != "1.bias" || !errors.Is(err, tensor.ErrShape) {
			t.Errorf("mis-shaped keys: %v", err)
		}
	}
}
