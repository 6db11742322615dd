package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestHostReadCollectsDroppedTensors checks that reading a tensor out
// under a CPU budget first collects tensors the program dropped (as
// allocation does) instead of refusing while garbage holds the budget.
// FuzzConv found the refusal: a tiny call failed after many dropped
// results.
func TestHostReadCollectsDroppedTensors(t *testing.T) {
	defer tensor.SetCPUBudget(8 << 20)()
	for range 3 {
		tensor.Zeros([]int{1 << 20}) // 4 MiB each, dropped without Release
	}
	x := tensor.Zeros([]int{1 << 19}) // 2 MiB; its Float64s needs 4 MiB more
	if err := tensor.Catch(func() { x.Float64s() }); err != nil {
		t.Fatalf("reading 2 MiB under an 8 MiB budget held by dropped tensors: %v", err)
	}
}
