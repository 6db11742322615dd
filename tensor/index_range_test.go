package tensor_test

import (
	"errors"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestIndexOutOfRangeOnEveryDevice checks that a bad index is a typed
// ErrIndex on the GPU as on the CPU, whether the indices were uploaded
// from the host (range known at upload) or computed on the device (range
// found by a reduction).
func TestIndexOutOfRangeOnEveryDevice(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		x := tensor.Arange(0, 12, 1, tensor.Of(tensor.Float32), tensor.On(dev)).Reshape(3, 4)
		uploaded := tensor.New([]int32{0, 5}).To(dev)
		computed := tensor.New([]int32{0, 1}).To(dev).MulScalar(3) // 0, 3: on the device
		for name, f := range map[string]func(){
			"IndexSelect/uploaded": func() { x.IndexSelect(0, uploaded) },
			"IndexSelect/computed": func() { x.IndexSelect(0, computed) },
			"Gather":               func() { x.Gather(1, uploaded.Reshape(1, 2)) },
			"ScatterAdd":           func() { x.ScatterAdd(0, computed.Reshape(2, 1), tensor.Ones([]int{2, 1}, tensor.On(dev))) },
			"IndexAdd":             func() { x.IndexAdd(1, uploaded, tensor.Ones([]int{3, 2}, tensor.On(dev))) },
		} {
			if err := tensor.Catch(f); !errors.Is(err, tensor.ErrIndex) {
				t.Errorf("%v %s: error %v, want ErrIndex", dev, name, err)
			}
		}
		// In range, including indices the device computed itself.
		ok := x.IndexSelect(1, x.ArgMaxDim(1, false)).Float32s()
		if len(ok) != 9 || ok[0] != 3 || ok[8] != 11 {
			t.Errorf("%v: IndexSelect by ArgMax = %v", dev, ok)
		}
	}
}
