package tensor_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// chunkedOps are the ops that unfold a batch by slices when its columns
// pass the bound.
var chunkedOps = []struct {
	name string
	f    func(x, w *tensor.Tensor) []*tensor.Tensor
}{
	{"Conv2d", func(x, w *tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{tensor.Conv2d(x, w, nil, tensor.ConvOptions{Padding: [2]int{1, 0}, Groups: 2})}
	}},
	{"ConvTranspose2d", func(x, w *tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{tensor.ConvTranspose2d(x, w, nil, tensor.ConvOptions{Stride: [2]int{2, 1}, Groups: 2})}
	}},
	{"MaxPool2dWithIndices", func(x, _ *tensor.Tensor) []*tensor.Tensor {
		v, i := tensor.MaxPool2dWithIndices(x, tensor.Window2d{Kernel: [2]int{3, 2}, Stride: [2]int{1, 2}, Padding: [2]int{1, 1}})
		return []*tensor.Tensor{v, i}
	}},
	{"AvgPool2d", func(x, _ *tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{tensor.AvgPool2d(x, tensor.Window2d{Kernel: [2]int{3, 3}, Padding: [2]int{1, 1}, CeilMode: true}, false)}
	}},
}

// TestConvChunks: a batch run by slices (the columns bound lowered to a
// few samples' worth) gives the very values and input gradients of one
// run, and the weight's gradient within rounding.
func TestConvChunks(t *testing.T) {
	devs := []tensor.Device{tensor.CPU}
	if gpu, ok := devtest.GPU(t); ok {
		devs = append(devs, gpu)
	}
	for _, dev := range devs {
		for _, op := range chunkedOps {
			run := func(bound int) ([][]float64, [][]float64) {
				defer tensor.SetUnfoldChunkBytes(bound)()
				x := tensor.Uniform([]int{7, 4, 5, 6}, -1, 1, tensor.WithGenerator(tensor.NewGenerator(1))).To(dev).SetRequiresGrad(true)
				w := tensor.Uniform([]int{4, 2, 3, 3}, -1, 1, tensor.WithGenerator(tensor.NewGenerator(2))).To(dev).SetRequiresGrad(true)
				outs := op.f(x, w)
				autograd.Backward(outs[0].Square().Sum())
				var vals, grads [][]float64
				for _, o := range outs {
					vals = append(vals, o.Cast(tensor.Float32).To(tensor.CPU).Float64s())
				}
				for _, p := range []*tensor.Tensor{x, w} {
					if p.Grad() != nil {
						grads = append(grads, p.Grad().To(tensor.CPU).Float64s())
					}
				}
				return vals, grads
			}
			v1, g1 := run(1 << 30)
			v2, g2 := run(300 * 4) // about two samples' columns of the smallest op
			for i := range v1 {
				if !slices.Equal(v1[i], v2[i]) {
					t.Errorf("%v %s: output %d differs when the batch runs by slices", dev, op.name, i)
				}
			}
			// The input's gradient is per sample too; the weight's sums the
			// slices' sums, grouped otherwise: equal within rounding.
			if !slices.Equal(g1[0], g2[0]) {
				t.Errorf("%v %s: the input's gradient differs when the batch runs by slices", dev, op.name)
			}
			for i := 1; i < len(g1); i++ {
				for k := range g1[i] {
					if d := math.Abs(g1[i][k] - g2[i][k]); d > 1e-5*max(1, math.Abs(g1[i][k])) {
						t.Fatalf("%v %s: weight gradient [%d] %g by slices, %g whole", dev, op.name, k, g2[i][k], g1[i][k])
					}
				}
			}
		}
	}
}
