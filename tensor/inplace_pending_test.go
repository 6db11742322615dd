package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// TestInPlaceOnPendingExtendsIt checks that in-place ops on a pending
// result (a gradient being clipped, say) join its expression: no kernel
// runs until the value is used, every view of the storage sees the new
// value, and the values match the eager ones, on every device, including
// a chain too long to extend (which runs the op as before).
func TestInPlaceOnPendingExtendsIt(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func(countKernels bool) [][]float32 {
			a := tensor.Linspace(-3, 3, 33, tensor.On(dev)).Reshape(3, 11)
			b := tensor.Linspace(2, -1, 11, tensor.On(dev))
			g := a.Mul(b).Add(b) // pending with fusion on
			held := g            // a user's reference, read after the clip
			before := tensor.ReadCounters()
			g.ClampInPlace(-0.5, 0.75)
			g.MulScalarInPlace(2)
			g.AddcmulInPlace(a, b, 0.25)
			if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; countKernels && k != 0 {
				t.Errorf("%v: in-place ops on a pending result ran %d kernels, want none", dev, k)
			}
			s := tensor.Zeros([]int{3, 11}, tensor.On(dev))
			s.AddcmulInPlace(g, g, 1) // one fused kernel computing g inline
			long := a.AddScalar(1)
			for range 20 { // past the node limit: extending declines
				long = long.Tanh().MulScalar(1.5)
				long.ClampInPlace(-1, 1)
			}
			return [][]float32{held.Float32s(), g.Float32s(), s.Float32s(), long.Float32s()}
		}
		var ref, got [][]float32
		withFusion(false, func() { ref = run(false) })
		withFusion(true, func() { got = run(true) })
		checkFusedClose(t, dev, approx.Float32(16), got, ref)
	}
}
