package tensor_test

import (
	"errors"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestIndexOutOfRangeOnEveryDevice checks that a bad index is a typed
// ErrIndex on the GPU as on the CPU, whether the indices were uploaded
// from the host (range known at upload: reported by the op) or computed
// on the device (checked there: reported at the next read, which the
// computed cases therefore do).
func TestIndexOutOfRangeOnEveryDevice(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		x := tensor.Arange(0, 12, 1, tensor.Of(tensor.Float32), tensor.On(dev)).Reshape(3, 4)
		uploaded := tensor.New([]int32{0, 5}).To(dev)
		computed := tensor.New([]int32{0, 1}).To(dev).MulScalar(3) // 0, 3: on the device
		for name, f := range map[string]func(){
			"IndexSelect/uploaded": func() { x.IndexSelect(0, uploaded) },
			"IndexSelect/computed": func() { x.IndexSelect(0, computed).Float32s() },
			"Gather":               func() { x.Gather(1, uploaded.Reshape(1, 2)) },
			"ScatterAdd/computed":  func() { x.ScatterAdd(0, computed.Reshape(2, 1), tensor.Ones([]int{2, 1}, tensor.On(dev))).Float32s() },
			"IndexAdd":             func() { x.IndexAdd(1, uploaded, tensor.Ones([]int{3, 2}, tensor.On(dev))) },
		} {
			if err := tensor.Catch(f); !errors.Is(err, tensor.ErrIndex) {
				t.Errorf("%v %s: error %v, want ErrIndex", dev, name, err)
			}
		}
		// A later read finds no stale error, and Sync reports one as an error.
		if err := tensor.Catch(func() { x.Sum().Item() }); err != nil {
			t.Errorf("%v: a read after the reported error failed: %v", dev, err)
		}
		if dev.Kind == tensor.KindGPU {
			x.IndexSelect(0, computed) // checked on the device
			if err := tensor.Sync(dev); !errors.Is(err, tensor.ErrIndex) {
				t.Errorf("%v: Sync after a bad computed index = %v, want ErrIndex", dev, err)
			}
		}
		// In range, including indices the device computed itself.
		ok := x.IndexSelect(1, x.ArgMaxDim(1, false)).Float32s()
		if len(ok) != 9 || ok[0] != 3 || ok[8] != 11 {
			t.Errorf("%v: IndexSelect by ArgMax = %v", dev, ok)
		}
	}
}
