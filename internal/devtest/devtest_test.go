package devtest

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestMustGPU checks that MustGPU hands out the device GPU reports (it
// skips, or fails under TESSERA_REQUIRE_GPU=1, when none opens).
func TestMustGPU(t *testing.T) {
	d := MustGPU(t)
	if d.Kind != tensor.KindGPU {
		t.Fatalf("MustGPU returned %v", d)
	}
	if g, ok := GPU(t); !ok || g != d {
		t.Errorf("GPU returned %v, %v; MustGPU %v", g, ok, d)
	}
	got := tensor.Full([]int{3}, 2, tensor.On(d)).Add(tensor.Full([]int{3}, 1, tensor.On(d))).To(tensor.CPU).Float32s()
	for _, v := range got {
		if v != 3 {
			t.Fatalf("2 + 1 on %v gave %v", d, got)
		}
	}
}
