package nn_test

import (
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestCrossEntropyStaysOnGPU checks that a cross-entropy training step
// with uploaded targets never waits for the GPU: the index checks of its
// Gather must come from ranges known without a readback, or every step
// would cost a round trip to the device.
func TestCrossEntropyStaysOnGPU(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	g.SetBatchCap(1 << 20)
	defer g.SetBatchCap(0)
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	w := tensor.Randn([]int{8, 5}, tensor.On(dev)).SetRequiresGrad(true)
	x := tensor.Randn([]int{7, 8}, tensor.On(dev))
	y := tensor.New([]int32{0, 4, 2, -100, 1, 3, 3}).To(dev) // one ignored target
	before := g.SubmitCount()
	tensor.Scope(func() {
		autograd.Backward(nn.CrossEntropy(x.MatMul(w), y))
	})
	if n := g.SubmitCount() - before; n != 0 {
		t.Errorf("a cross-entropy step submitted %d times before anything was read; want 0", n)
	}
}
