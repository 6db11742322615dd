package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestDeviceHolds pins the one float64-on-GPU rule: the CPU holds every
// dtype, a GPU all but Float64.
func TestDeviceHolds(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool} {
		if !tensor.CPU.Holds(dt) {
			t.Errorf("the CPU does not hold %v", dt)
		}
		if got, want := tensor.GPU(0).Holds(dt), dt != tensor.Float64; got != want {
			t.Errorf("GPU(0).Holds(%v) = %v, want %v", dt, got, want)
		}
	}
}
