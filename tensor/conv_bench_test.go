package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// BenchmarkConv2d times a 3×3 convolution of 8×64×28² float32 images
// with 64 filters on the CPU, forward and forward+backward, and reports
// GFLOP/s of the forward's 2·n·cout·hw²·cin·9 flops (backward does twice
// that again).
func BenchmarkConv2d(b *testing.B) {
	const n, c, hw = 8, 64, 28
	flops := 2.0 * n * c * hw * hw * c * 9
	x := tensor.Randn([]int{n, c, hw, hw})
	w := tensor.Randn([]int{c, c, 3, 3})
	o := tensor.ConvOptions{Padding: [2]int{1, 1}}
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			tensor.Scope(func() { tensor.Conv2d(x, w, nil, o) })
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("backward", func(b *testing.B) {
		xg, wg := x.Clone().SetRequiresGrad(true), w.Clone().SetRequiresGrad(true)
		for b.Loop() {
			tensor.Scope(func() {
				autograd.Backward(tensor.Conv2d(xg, wg, nil, o).Sum())
				xg.SetGrad(nil)
				wg.SetGrad(nil)
			})
		}
		b.ReportMetric(3*flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkMaxPool2d times the 2×2 max pool of cnn_step's first layer,
// 64×16×28² float32 images on the CPU, forward and forward+backward.
func BenchmarkMaxPool2d(b *testing.B) {
	x := tensor.Randn([]int{64, 16, 28, 28})
	w := tensor.Window2d{Kernel: [2]int{2, 2}}
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			tensor.Scope(func() { tensor.MaxPool2d(x, w) })
		}
	})
	b.Run("backward", func(b *testing.B) {
		xg := x.Clone().SetRequiresGrad(true)
		for b.Loop() {
			tensor.Scope(func() {
				autograd.Backward(tensor.MaxPool2d(xg, w).Sum())
				xg.SetGrad(nil)
			})
		}
	})
}
