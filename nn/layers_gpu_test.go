package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestTorchLayersGPU runs every case of layers.json on the GPU in
// float32, forward, running statistics and backward, and compares it
// with the same case on the CPU in float32 (closely) and with PyTorch's
// float64 results (to float32 precision).
func TestTorchLayersGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	var worstCPU, worstTorch float64
	for _, c := range torchref.MustLoad(t, "layers") {
		t.Run(c.Name, func(t *testing.T) {
			g := runLayerCase(t, c, gpu, tensor.Float32)
			cpu := runLayerCase(t, c, tensor.CPU, tensor.Float32)
			for i, o := range g.outs {
				what := fmt.Sprintf("output[%d]", i)
				worstCPU = max(worstCPU, checkAgainst(t, what+" vs cpu", o, cpu.outs[i].Float64s(), 1e-5, 1e-4))
				worstTorch = max(worstTorch, checkAgainst(t, what+" vs torch", o, c.Outputs[i].Data, 1e-4, 1e-3))
			}
			for i, want := range c.Grads {
				if want == nil {
					continue
				}
				what := fmt.Sprintf("grad[%d]", i)
				if g.grads[i] == nil || cpu.grads[i] == nil {
					t.Fatalf("%s: missing gradient", what)
				}
				worstCPU = max(worstCPU, checkAgainst(t, what+" vs cpu", g.grads[i], cpu.grads[i].Float64s(), 1e-5, 1e-4))
				worstTorch = max(worstTorch, checkAgainst(t, what+" vs torch", g.grads[i], want.Data, 1e-4, 1e-3))
			}
		})
	}
	t.Logf("worst |gpu−cpu| %.3f and |gpu−torch| %.3f of the tolerance", worstCPU, worstTorch)
}

// checkAgainst checks got against want within abs + rel·(|want| + the
// largest |want|/10), NaNs matching (internal/approx), and returns the
// largest difference as a fraction of the tolerance.
func checkAgainst(t *testing.T, what string, got *tensor.Tensor, want []float64, abs, rel float64) float64 {
	t.Helper()
	g := got.Float64s()
	tol := approx.Tol{Abs: abs + rel*approx.Magnitude(want)/10, Rel: rel}
	if len(g) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(want))
	}
	approx.Check(t, what, g, want, tol)
	return approx.Ratio(g, want, tol)
}

// TestLayerDropoutGPU: a transformer block in training, with dropout in
// attention, feed-forward and between recurrent layers, runs forward and
// backward on the GPU; evaluation there matches the CPU.
func TestLayerDropoutGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout, cfg.NormFirst = 9, 0.3, true
	l := nn.NewTransformerEncoderLayer(6, 3, cfg, tensor.WithGenerator(tensor.NewGenerator(3)))
	x := tensor.Randn([]int{5, 2, 6}, tensor.WithGenerator(tensor.NewGenerator(4)))
	nn.Eval(l)
	want := l.ForwardMasked(x, nn.AttentionMasks{Causal: true}).Float64s()
	nn.To(l, gpu)
	xg := x.To(gpu)
	got := l.ForwardMasked(xg, nn.AttentionMasks{Causal: true})
	checkAgainst(t, "eval output", got, want, 1e-5, 1e-4)
	nn.Train(l)
	autograd.Backward(l.ForwardMasked(xg, nn.AttentionMasks{Causal: true}).Square().Sum())
	for name, p := range nn.NamedParameters(l) {
		g := p.Grad()
		if g == nil || g.Device() != gpu {
			t.Fatalf("%s: no gradient on the GPU", name)
		}
		for _, v := range g.Float64s() {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: gradient %v", name, v)
			}
		}
	}
	enc := nn.NewTransformerEncoder(l, 2, nil) // copies of a layer on the GPU live there
	for name, p := range nn.StateDict(enc) {
		if p.Device() != gpu {
			t.Errorf("%s on %v", name, p.Device())
		}
	}
	checkAgainst(t, "copied layers", enc.Layers[1].Linear1.Weight, l.Linear1.Weight.Float64s(), 0, 0)
	m := nn.NewLSTM(3, 4, 2)
	m.Dropout = 0.5
	nn.To(m, gpu)
	out, _, _ := m.Forward(tensor.Ones([]int{3, 2, 3}, tensor.On(gpu)), nil, nil)
	if out.Device() != gpu || len(out.Float32s()) != 3*2*4 {
		t.Errorf("LSTM with dropout on the GPU: %v on %v", out.Shape(), out.Device())
	}
}

// TestLayerGradientsGPU checks the gradients of the new layers on the GPU
// by finite differences in float32 (steps of 1e-2, looser tolerances),
// on tiny odd shapes.
func TestLayerGradientsGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	opt := autograd.CheckOptions{Eps: 1e-2, Atol: 2e-3, Rtol: 2e-2}
	gen := func(s uint64) tensor.Option { return tensor.WithGenerator(tensor.NewGenerator(s)) }
	in := func(seed uint64, shape ...int) *tensor.Tensor {
		return tensor.Randn(shape, gen(seed)).To(gpu).SetRequiresGrad(true)
	}
	on := func(m nn.Module) nn.Module { jitter(m, 99); nn.To(m, gpu); return m }

	bn := nn.NewBatchNorm2d(3)
	on(bn)
	checkLayerWith(t, "BatchNorm2d/train", opt, bn, []*tensor.Tensor{in(1, 3, 3, 1, 3)}, func(x []*tensor.Tensor) *tensor.Tensor { return bn.Forward(x[0]) })
	gn := nn.NewGroupNorm(3, 3)
	on(gn)
	checkLayerWith(t, "GroupNorm", opt, gn, []*tensor.Tensor{in(2, 2, 3, 5)}, func(x []*tensor.Tensor) *tensor.Tensor { return gn.Forward(x[0]) })
	gru := nn.NewGRU(3, 2, 1, gen(3))
	on(gru)
	checkLayerWith(t, "GRU", opt, gru, []*tensor.Tensor{in(4, 3, 1, 3), in(5, 1, 1, 2)}, func(x []*tensor.Tensor) *tensor.Tensor {
		out, _ := gru.Forward(x[0], x[1])
		return out
	})
	mha := nn.NewMultiheadAttention(2, 1, true, gen(6))
	on(mha)
	pad := tensor.New([]bool{false, false, true}, 1, 3).To(gpu)
	checkLayerWith(t, "MultiheadAttention", opt, mha, []*tensor.Tensor{in(7, 3, 1, 2)}, func(x []*tensor.Tensor) *tensor.Tensor {
		out, w := mha.Forward(x[0], x[0], x[0], nn.AttentionMasks{KeyPadding: pad, Causal: true})
		return out.Sum().Add(w.Square().Sum())
	})
}
