package tensor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestGPUBindingLimit checks tensors just under and just over the
// per-binding limit (128 MiB on lavapipe): elementwise ops and copies
// bind ranges and work over it; other ops give a typed error naming the
// limit instead of aborting.
func TestGPUBindingLimit(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	if testing.Short() {
		t.Skip("allocates several 128 MiB buffers")
	}
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	limit := int(g.Caps().MaxStorageBindingSize / 4) // in float32 elements
	for _, n := range []int{limit - 8, limit + 1031} {
		tensor.Scope(func() {
			x := tensor.Full([]int{n}, 1.5, tensor.On(dev))
			y := x.AddScalar(1) // one binding range per chunk
			for _, i := range []int{0, n / 2, n - 1} {
				if v := y.Narrow(0, i, 1).Item(); v != 2.5 {
					t.Errorf("n=%d: (x+1)[%d] = %v, want 2.5", n, i, v)
				}
			}
			// A strided copy over the limit: the transpose of a 2-row view.
			m := (n / 2) * 2
			rows := x.Narrow(0, 0, m).Reshape(2, m/2)
			tr := rows.Add(tensor.New([]float32{0, 1}, 2, 1).To(dev)).T().Contiguous() // (m/2, 2)
			for _, i := range []int{0, m/4 + 1, m/2 - 1} {
				if got := tr.Narrow(0, i, 1).Float32s(); got[0] != 1.5 || got[1] != 2.5 {
					t.Errorf("n=%d: transposed copy row %d = %v, want [1.5 2.5]", n, i, got)
				}
			}
			err := tensor.Catch(func() { x.Sum() })
			switch {
			case n < limit && err != nil:
				t.Errorf("n=%d under the limit: Sum failed: %v", n, err)
			case n > limit && !errors.Is(err, device.ErrBindingTooLarge):
				t.Errorf("n=%d over the limit: Sum error = %v, want ErrBindingTooLarge", n, err)
			case n > limit && !strings.Contains(err.Error(), "limit"):
				t.Errorf("the error does not name the limit: %v", err)
			}
		})
	}
}
