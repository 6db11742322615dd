package tensor_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// TestSliceScatterDevicesAgree checks SliceScatter (one dispatch on the
// GPU) on odd shapes, strided and stepped sources and every dtype, with
// fusion on and off, against the CPU's zeros-then-copy.
func TestSliceScatterDevicesAgree(t *testing.T) {
	type ssCase struct {
		shape                 []int
		dim, start, end, step int
	}
	cases := []ssCase{
		{[]int{7, 33}, 0, 3, 4, 1},      // a Select's gradient
		{[]int{7, 33}, 1, 2, 33, 3},     // stepped
		{[]int{65, 5, 3}, 0, 60, 65, 2}, // a Narrow-like tail
		{[]int{5, 7}, 1, 7, 7, 1},       // an empty slice
	}
	for _, dev := range fusionDevices(t) {
		for _, fuse := range []bool{true, false} {
			withFusion(fuse, func() {
				for _, c := range cases {
					want := make([]int, len(c.shape))
					copy(want, c.shape)
					n := 0
					if c.end > c.start {
						n = (c.end-c.start-1)/c.step + 1
					}
					want[c.dim] = n
					// A transposed source, offset into a bigger buffer.
					rev := append([]int{}, want...)
					for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
						rev[i], rev[j] = rev[j], rev[i]
					}
					perm := make([]int, len(rev))
					for i := range perm {
						perm[i] = len(perm) - 1 - i
					}
					for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Bool} {
						src := func(d tensor.Device) *tensor.Tensor {
							base := tensor.Arange(-1, float64(layout.Numel(rev)), 1, tensor.On(d)).Cast(dt)
							return base.Narrow(0, 1, layout.Numel(rev)).Reshape(rev...).Permute(perm...)
						}
						ref := tensor.SliceScatter(src(tensor.CPU), c.shape, c.dim, c.start, c.end, c.step)
						got := tensor.SliceScatter(src(dev), c.shape, c.dim, c.start, c.end, c.step)
						if g, w := fmt.Sprint(got.To(tensor.CPU).Float64s()), fmt.Sprint(ref.Float64s()); g != w {
							t.Errorf("%v fusion %v %v %+v: %s, want %s", dev, fuse, dt, c, g, w)
						}
					}
				}
			})
		}
	}
}
