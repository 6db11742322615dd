package checkpoint_test

import (
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/tensor"
)

// Sub selects one prefix's tensors, renamed, and shares the rest.
func TestSub(t *testing.T) {
	w := tensor.Ones([]int{2})
	f := &checkpoint.File{Path: "x", Meta: map[string]string{"step": "3"}, Tensors: map[string]*tensor.Tensor{
		"model.0.weight": w, "model.0.bias": tensor.Zeros([]int{2}), "optimizer.state.0.exp_avg": tensor.Zeros([]int{2}), "modelx": tensor.Zeros(nil),
	}}
	sub := f.Sub("model.")
	if got := sub.Names(); !slices.Equal(got, []string{"0.bias", "0.weight"}) {
		t.Fatalf("Sub(model.) names %v", got)
	}
	if sub.Tensors["0.weight"] != w || sub.Meta["step"] != "3" || sub.Path != "x" {
		t.Error("Sub does not share the file's tensors, metadata and path")
	}
	if n := len(f.Sub("none.").Tensors); n != 0 {
		t.Errorf("Sub of an absent prefix has %d tensors", n)
	}
}
