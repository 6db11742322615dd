package bench

import (
	"fmt"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// gptSize is a training step of a pre-norm transformer of layers layers
// of width and heads over batch sequences whose lengths spread evenly
// from longest/4 to longest.
func gptSize(batch, longest, width, heads, layers int) Size {
	return Size{Label: fmt.Sprintf("batch %d, lengths %d…%d, width %d, %d heads, %d layers", batch, longest/4, longest, width, heads, layers),
		X: float64(longest), Dims: []int{batch, longest, width, heads, layers}}
}

// The two workloads train one small causal pre-norm transformer on one
// batch of sequences of lengths varying 4×: padded to the longest with
// key-padding and causal masks and the loss masked, as a PyTorch user
// does, and packed (TransformerEncoderLayer.ForwardPacked, the fused
// segmented attention), where no row is padding and no score matrix is
// formed.
var (
	gptPaddedStep = Workload{
		Name: "gpt_padded_step", Family: "transformer step, lengths varying 4×", Unit: StepsPS,
		Sizes: []Size{gptSize(16, 128, 64, 4, 2)},
		Quick: []Size{gptSize(4, 16, 16, 2, 1)},
		Peers: []string{"torch"},
		Doc: "gpt_padded_step: one SGD step of causal pre-norm nn.TransformerEncoderLayers (feed-forward 4×width, GELU) on sequences padded to the longest " +
			"(lengths spread evenly over longest/4…longest) with key-padding and causal masks, a linear read-out and the squared error masked to the real rows; " +
			"compare with gpt_ragged_step",
		Work:  oneStep,
		Setup: func(dev tensor.Device, s Size) Case { return newRaggedGPT(dev, s, false) },
	}
	gptRaggedStep = Workload{
		Name: "gpt_ragged_step", Family: "transformer step, lengths varying 4×", Unit: StepsPS,
		Sizes: []Size{gptSize(16, 128, 64, 4, 2)},
		Quick: []Size{gptSize(4, 16, 16, 2, 1)},
		Doc: "gpt_ragged_step: gpt_padded_step's model, batch and loss with the sequences packed as rows + offsets (TransformerEncoderLayer.ForwardPacked, " +
			"tensor.ScaledDotProductAttention): no padded rows, no score matrix; no peer (PyTorch 1.13 trains no transformer on nested tensors)",
		Work:  oneStep,
		Setup: func(dev tensor.Device, s Size) Case { return newRaggedGPT(dev, s, true) },
	}
)

// newRaggedGPT sets up the step of gpt_padded_step or, when packed,
// gpt_ragged_step.
func newRaggedGPT(dev tensor.Device, s Size, packed bool) Case {
	batch, longest, width, heads, layers := s.Dims[0], s.Dims[1], s.Dims[2], s.Dims[3], s.Dims[4]
	g := tensor.NewGenerator(1)
	opts := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	cfg := nn.TransformerConfig{DimFeedforward: 4 * width, Activation: "gelu", LayerNormEps: 1e-5, BatchFirst: true, NormFirst: true}
	model := make([]*nn.TransformerEncoderLayer, layers)
	var params []*tensor.Tensor
	for i := range model {
		model[i] = nn.NewTransformerEncoderLayer(width, heads, cfg, opts...)
		params = append(params, nn.Parameters(model[i])...)
	}
	w := tensor.Randn([]int{width}, opts...).SetRequiresGrad(true)
	params = append(params, w)
	opt := optim.NewSGD(params, optim.LR(0.01))
	lengths := make([]int, batch)
	for b := range batch {
		lengths[b] = longest / 4
		if batch > 1 {
			lengths[b] += b * (longest - longest/4) / (batch - 1)
		}
	}
	offsets := tensor.Offsets(lengths...)
	total := offsets[batch]
	// The batch, packed and padded, built once outside the timed step.
	x := tensor.Randn([]int{total, width}, opts...)
	y := tensor.Randn([]int{total}, opts...)
	xPad := tensor.Zeros([]int{batch, longest, width}, opts...)
	yPad := tensor.Zeros([]int{batch, longest}, opts...)
	keep := make([]float32, batch*longest) // 1 on real rows
	pads := make([]bool, batch*longest)    // the key-padding mask: true on padding
	tensor.NoGrad(func() {
		for b, n := range lengths {
			xPad.Select(0, b).Narrow(0, 0, n).CopyFrom(x.Narrow(0, offsets[b], n))
			yPad.Select(0, b).Narrow(0, 0, n).CopyFrom(y.Narrow(0, offsets[b], n))
			for t := range longest {
				keep[b*longest+t] = float32(min(1, max(0, n-t)))
				pads[b*longest+t] = t >= n
			}
		}
	})
	keepT, padT := tensor.New(keep, batch, longest).To(dev), tensor.New(pads, batch, longest).To(dev)
	step := scoped(func() {
		var loss *tensor.Tensor
		if packed {
			h := x
			for _, l := range model {
				h = l.ForwardPacked(h, offsets, true)
			}
			loss = h.MatMul(w).Sub(y).Square().Sum().DivScalar(float64(total))
		} else {
			h := xPad
			for _, l := range model {
				h = l.ForwardMasked(h, nn.AttentionMasks{Causal: true, KeyPadding: padT})
			}
			loss = h.MatMul(w).Sub(yPad).Mul(keepT).Square().Sum().DivScalar(float64(total))
		}
		autograd.Backward(loss)
		opt.Step()
		opt.ZeroGrad()
		loss.Item()
	})
	return Case{Step: step, Release: released(append(params, x, y, xPad, yPad, keepT, padT)...)}
}
