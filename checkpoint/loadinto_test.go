package checkpoint

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// saved saves tensors to a fresh file and loads it back.
func saved(t *testing.T, tensors map[string]*tensor.Tensor) *File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.safetensors")
	if err := Save(p, tensors, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// untouched fails unless every tensor of dst is still all zeros.
func untouched(t *testing.T, dst map[string]*tensor.Tensor) {
	t.Helper()
	for name, d := range dst {
		if d == nil || d.DType() != tensor.Float32 {
			continue
		}
		for _, v := range d.Float32s() {
			if v != 0 {
				t.Fatalf("%s was written: %v", name, d)
			}
		}
	}
}

func TestLoadIntoMismatch(t *testing.T) {
	f := saved(t, map[string]*tensor.Tensor{
		"a": tensor.Ones([]int{2, 3}), "b": tensor.Ones([]int{3}), "c": tensor.New([]int32{1, 2}), "u": tensor.Ones([]int{1}),
	})
	dst := map[string]*tensor.Tensor{
		"a": tensor.Zeros([]int{2, 3}), "b": tensor.Zeros([]int{4}), "c": tensor.Zeros([]int{2}), "m": tensor.Zeros([]int{1}),
	}
	for _, strict := range []bool{true, false} {
		keys, err := LoadInto(f, dst, strict)
		var me *MismatchError
		if !errors.As(err, &me) || !errors.Is(err, ErrMismatch) || !errors.Is(err, tensor.ErrShape) || !errors.Is(err, tensor.ErrDType) {
			t.Fatalf("strict %v: LoadInto returned %v, %v", strict, keys, err)
		}
		want := []Mismatched{
			{"b", []int{3}, []int{4}, tensor.Float32, tensor.Float32},
			{"c", []int{2}, []int{2}, tensor.Int32, tensor.Float32},
		}
		if !reflect.DeepEqual(me.Mismatched, want) {
			t.Errorf("strict %v: mismatched %+v, want %+v", strict, me.Mismatched, want)
		}
		msg := err.Error()
		for _, s := range []string{"checkpoint.LoadInto " + f.Path, "nothing loaded", `"b" is [3] float32 in the file but [4] float32 in the destination`, `"c" is [2] int32`} {
			if !strings.Contains(msg, s) {
				t.Errorf("strict %v: %q does not say %q", strict, msg, s)
			}
		}
		if strict != (slices.Equal(me.Missing, []string{"m"}) && slices.Equal(me.Unexpected, []string{"u"})) {
			t.Errorf("strict %v: missing %v, unexpected %v", strict, me.Missing, me.Unexpected)
		}
		if strict && !strings.Contains(msg, `missing from the file: "m"; not in the destination: "u"`) {
			t.Errorf("strict: %q does not list the missing and unexpected names", msg)
		}
		untouched(t, dst)
	}
	// Matching shapes and dtypes, but names differ: strict loads nothing.
	delete(dst, "b")
	delete(dst, "c")
	_, err := LoadInto(f, dst, true)
	var me *MismatchError
	if !errors.As(err, &me) || errors.Is(err, tensor.ErrShape) || errors.Is(err, tensor.ErrDType) || me.Mismatched != nil ||
		!slices.Equal(me.Missing, []string{"m"}) || !slices.Equal(me.Unexpected, []string{"b", "c", "u"}) {
		t.Fatalf("strict with names that differ: %v", err)
	}
	untouched(t, dst)
	// Not strict: the matching tensor loads and the rest are reported.
	keys, err := LoadInto(f, dst, false)
	if err != nil || !reflect.DeepEqual(keys, Keys{Missing: []string{"m"}, Unexpected: []string{"b", "c", "u"}}) {
		t.Fatalf("not strict: %v, %v", keys, err)
	}
	sameTensor(t, "a", dst["a"], f.Tensors["a"])
}

// TestLoadIntoParameters loads into parameters that require grad, with
// grad mode on, from a file on one device into tensors on another.
func TestLoadIntoParameters(t *testing.T) {
	for _, from := range devtest.Devices(t) {
		for _, to := range devtest.Devices(t) {
			src := map[string]*tensor.Tensor{
				"w": tensor.Randn([]int{7, 33}, tensor.On(from)), "b": tensor.Randn([]int{7}, tensor.On(from)),
				"mask": tensor.From([]bool{true, false, true}, []int{3}, tensor.On(from)),
			}
			p := filepath.Join(t.TempDir(), "c")
			if err := Save(p, src, nil); err != nil {
				t.Fatal(err)
			}
			f, err := Load(p, On(from))
			if err != nil {
				t.Fatal(err)
			}
			dst := map[string]*tensor.Tensor{
				"w": tensor.Zeros([]int{7, 33}, tensor.On(to)).SetRequiresGrad(true), "b": tensor.Zeros([]int{7}, tensor.On(to)).SetRequiresGrad(true),
				"mask": tensor.Zeros([]int{3}, tensor.Of(tensor.Bool), tensor.On(to)),
			}
			if keys, err := LoadInto(f, dst, true); err != nil || keys.Missing != nil || keys.Unexpected != nil {
				t.Fatalf("%v→%v: %v %v", from, to, keys, err)
			}
			for name, d := range dst {
				sameTensor(t, name, d, src[name])
				if d.Device() != to || d.RequiresGrad() != (name != "mask") {
					t.Errorf("%v→%v: %s became %v", from, to, name, d)
				}
			}
			if f.Tensors["w"].Device() != from {
				t.Errorf("LoadInto moved the file's tensor")
			}
		}
	}
}

func TestLoadIntoRefusesBadDestinations(t *testing.T) {
	f := saved(t, map[string]*tensor.Tensor{"a": tensor.Ones([]int{2, 3}), "z": tensor.Ones([]int{2, 3})})
	released := tensor.Zeros([]int{2, 3})
	released.Release()
	for _, c := range []struct {
		name string
		z    *tensor.Tensor
		kind error
		says string
	}{
		{"nil", nil, tensor.ErrArgument, `destination "z" is nil`},
		{"released", released, tensor.ErrReleased, `destination "z": tensor.Detach: use of a released tensor`},
		{"expanded", tensor.Zeros([]int{1, 3}).Expand(2, 3), tensor.ErrInPlace, `destination "z" is an expanded view`},
	} {
		dst := map[string]*tensor.Tensor{"a": tensor.Zeros([]int{2, 3}), "z": c.z}
		_, err := LoadInto(f, dst, true)
		var fe *FileError
		if !errors.As(err, &fe) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) ||
			!strings.HasPrefix(err.Error(), "checkpoint.LoadInto "+f.Path) {
			t.Errorf("%s destination: %v, want a *FileError wrapping %v that says %q", c.name, err, c.kind, c.says)
		}
		untouched(t, map[string]*tensor.Tensor{"a": dst["a"]})
	}
}
