package tensor_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestRandomSameOnEveryDevice checks that the GPU draws the CPU's numbers
// for the same seed and shape: uniform floats bitwise (they are the
// Philox words scaled exactly), normals within float32 tolerance (the
// transcendental Box–Muller transform is computed in f32 on the GPU).
func TestRandomSameOnEveryDevice(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	shape := []int{7, 33, 65}
	draw := func(dev tensor.Device, f func(shape []int, opts ...tensor.Option) *tensor.Tensor) []float32 {
		g := tensor.NewGenerator(20261129)
		f(shape, tensor.On(dev), tensor.WithGenerator(g)) // a first draw moves the offset
		return f(shape, tensor.On(dev), tensor.WithGenerator(g)).Float32s()
	}
	cu, gu := draw(tensor.CPU, tensor.Rand), draw(gpu, tensor.Rand)
	for i := range cu {
		if math.Float32bits(cu[i]) != math.Float32bits(gu[i]) {
			t.Fatalf("Rand element %d: cpu %v, gpu %v (want bitwise equal)", i, cu[i], gu[i])
		}
	}
	cn, gn := draw(tensor.CPU, tensor.Randn), draw(gpu, tensor.Randn)
	for i := range cn {
		if d := math.Abs(float64(cn[i] - gn[i])); d > 1e-5*max(1, math.Abs(float64(cn[i]))) {
			t.Fatalf("Randn element %d: cpu %v, gpu %v", i, cn[i], gn[i])
		}
	}
}
