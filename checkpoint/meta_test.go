package checkpoint

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/tensor"
)

// adamHyper stands for an optimizer's own hyper-parameter type.
type adamHyper struct {
	LR, Eps, WeightDecay float64
	Betas                [2]float64
	AMSGrad              bool
}

// cosineSchedule stands for a schedule's own state type.
type cosineSchedule struct {
	BaseLR, MinLR float64
	TMax, Last    int
}

// TestMetaRoundTrip stores a training run's state in a checkpoint's
// metadata and reads it back exactly, floats to the last bit.
func TestMetaRoundTrip(t *testing.T) {
	loader := LoaderState(data.State{Seed: math.MaxUint64, Shuffle: true, Epoch: 3, Position: 96, Examples: 12345})
	gens := map[string]GeneratorState{"default": {Seed: 0x5eed, Offset: 1 << 40}, "dropout": {Seed: math.MaxUint64, Offset: 7}}
	hyper := adamHyper{LR: 0.1 + 0.2, Eps: 1e-8, WeightDecay: math.SmallestNonzeroFloat64, Betas: [2]float64{0.9, 0.999}, AMSGrad: true}
	sched := cosineSchedule{BaseLR: 3e-4, MinLR: 1.0 / 3, TMax: 1000, Last: 417}
	step := int64(1)<<53 + 1
	meta := map[string]string{"format": "pt"}
	for k, v := range map[string]any{MetaStep: step, MetaLoader: loader, MetaGenerators: gens, MetaOptimizer: hyper, MetaSchedule: sched} {
		if err := SetMeta(meta, k, v); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "c")
	if err := Save(p, map[string]*tensor.Tensor{"w": tensor.Ones([]int{1})}, meta); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var (
		gotStep   int64
		gotLoader LoaderState
		gotGens   map[string]GeneratorState
		gotHyper  adamHyper
		gotSched  cosineSchedule
	)
	for k, v := range map[string]any{MetaStep: &gotStep, MetaLoader: &gotLoader, MetaGenerators: &gotGens, MetaOptimizer: &gotHyper, MetaSchedule: &gotSched} {
		if err := f.GetMeta(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if gotStep != step || gotLoader != loader || !reflect.DeepEqual(gotGens, gens) || gotHyper != hyper || gotSched != sched {
		t.Fatalf("read back %v %+v %v %+v %+v", gotStep, gotLoader, gotGens, gotHyper, gotSched)
	}
	if data.State(gotLoader) != data.State(loader) || f.Meta["format"] != "pt" {
		t.Fatal("the loader state does not convert back")
	}
	if want := `{"seed":18446744073709551615,"shuffle":true,"epoch":3,"position":96,"examples":12345}`; f.Meta[MetaLoader] != want {
		t.Errorf("loader metadata %s, want %s", f.Meta[MetaLoader], want)
	}
}

func TestMetaErrors(t *testing.T) {
	meta := map[string]string{
		MetaLoader: `{"seed":1,"epoch":2,"batch":3}`, "trailing": `{"seed":1} {}`, "brace": `1 }`,
		"string": `"x"`, "negative": `{"seed":-1}`, "cut": `{"seed":`,
	}
	for _, c := range []struct {
		key  string
		v    any
		kind error
		says string
	}{
		{"absent", new(int), ErrNoMeta, `no such metadata key "absent"`},
		{MetaLoader, new(LoaderState), ErrFormat, `json: unknown field "batch"`},
		{"trailing", new(GeneratorState), ErrFormat, "more follows the value"},
		{"brace", new(int), ErrFormat, "more follows the value"},
		{"string", new(int), ErrFormat, "cannot unmarshal string"},
		{"negative", new(GeneratorState), ErrFormat, "cannot unmarshal number -1"},
		{"cut", new(GeneratorState), ErrFormat, "unexpected EOF"},
	} {
		err := GetMeta(meta, c.key, c.v)
		if !errors.Is(err, c.kind) || !strings.HasPrefix(err.Error(), "checkpoint.GetMeta: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("GetMeta %q: %v, want an error wrapping %v that says %q", c.key, err, c.kind, c.says)
		}
		if c.kind == ErrFormat && !strings.Contains(err.Error(), `metadata "`+c.key+`"`) {
			t.Errorf("GetMeta %q: %v does not name the key", c.key, err)
		}
	}
	f := &File{Path: "run/ckpt.safetensors", Meta: meta}
	err := f.GetMeta("absent", new(int))
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, ErrNoMeta) || !strings.HasPrefix(err.Error(), "checkpoint.GetMeta run/ckpt.safetensors: ") {
		t.Errorf("File.GetMeta: %v", err)
	}
	for _, v := range []any{math.NaN(), make(chan int)} {
		if err := SetMeta(meta, "bad", v); err == nil || !strings.Contains(err.Error(), `checkpoint.SetMeta "bad"`) {
			t.Errorf("SetMeta of %T: %v", v, err)
		}
	}
	if err := SetMeta(nil, "step", 1); !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "the metadata map is nil") {
		t.Errorf("SetMeta into a nil map: %v", err)
	}
	if _, ok := meta["bad"]; ok {
		t.Error("a failed SetMeta stored a value")
	}
}
