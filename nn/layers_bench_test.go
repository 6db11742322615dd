package nn_test

import (
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// benchStep times one forward and backward pass of f on the CPU, each
// under its own Scope.
func benchStep(b *testing.B, m nn.Module, f func() *tensor.Tensor) {
	b.Helper()
	params := nn.Parameters(m)
	for b.Loop() {
		tensor.Scope(func() {
			autograd.Backward(f().Square().Mean())
			for _, p := range params {
				p.SetGrad(nil)
			}
		})
	}
}

// BenchmarkTransformerEncoderLayer: a GPT-sized block (width 128, 4
// heads, feed-forward 512, causal) on 16 sequences of 64.
func BenchmarkTransformerEncoderLayer(b *testing.B) {
	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout, cfg.NormFirst, cfg.BatchFirst, cfg.Activation = 512, 0, true, true, "gelu"
	l := nn.NewTransformerEncoderLayer(128, 4, cfg)
	x := tensor.Randn([]int{16, 64, 128}).Keep()
	benchStep(b, l, func() *tensor.Tensor { return l.ForwardMasked(x, nn.AttentionMasks{Causal: true}) })
}

// BenchmarkBatchNorm2d: a batch of 64 maps of 32 channels, 14×14, in
// training.
func BenchmarkBatchNorm2d(b *testing.B) {
	bn := nn.NewBatchNorm2d(32)
	x := tensor.Randn([]int{64, 32, 14, 14}).Keep()
	benchStep(b, bn, func() *tensor.Tensor { return bn.Forward(x) })
}

// BenchmarkGRU: two layers of 128 over 25 steps of a batch of 32.
func BenchmarkGRU(b *testing.B) {
	g := nn.NewGRU(64, 128, 2)
	x := tensor.Randn([]int{25, 32, 64}).Keep()
	benchStep(b, g, func() *tensor.Tensor { out, _ := g.Forward(x, nil); return out })
}
