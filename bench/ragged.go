package bench

import (
	"fmt"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// raggedSize is an LSTM training step over batch sequences whose lengths
// spread evenly from longest/4 to longest, of features inputs and
// hidden units.
func raggedSize(batch, longest, features, hidden int) Size {
	return Size{Label: fmt.Sprintf("batch %d, lengths %d…%d, %d→%d", batch, longest/4, longest, features, hidden),
		X: float64(longest), Dims: []int{batch, longest, features, hidden}}
}

// The two workloads train one LSTM on one batch of sequences of lengths
// varying 4×: padded to the longest with the loss masked, as a PyTorch
// user without packing does, and packed (nn.PackSequence,
// LSTM.ForwardPacked), where no step computes a finished sequence.
var (
	lstmPaddedStep = Workload{
		Name: "lstm_padded_step", Family: "LSTM step, lengths varying 4×", Unit: StepsPS,
		Sizes: []Size{raggedSize(32, 64, 32, 128)},
		Quick: []Size{raggedSize(8, 16, 8, 16)},
		Peers: []string{"torch"},
		Doc: "lstm_padded_step: one SGD step of nn.LSTM on sequences padded to the longest (lengths spread evenly over longest/4…longest), " +
			"a linear read-out and the squared error masked to the real steps; compare with lstm_ragged_step",
		Work:  oneStep,
		Setup: func(dev tensor.Device, s Size) Case { return newRaggedLSTM(dev, s, false) },
	}
	lstmRaggedStep = Workload{
		Name: "lstm_ragged_step", Family: "LSTM step, lengths varying 4×", Unit: StepsPS,
		Sizes: []Size{raggedSize(32, 64, 32, 128)},
		Quick: []Size{raggedSize(8, 16, 8, 16)},
		Peers: []string{"torch"},
		Doc: "lstm_ragged_step: lstm_padded_step's model, batch and loss with the sequences packed (nn.PackSequence, once, as the padded batch is built once; " +
			"LSTM.ForwardPacked): no padded copy, no computation past a sequence's end",
		Work:  oneStep,
		Setup: func(dev tensor.Device, s Size) Case { return newRaggedLSTM(dev, s, true) },
	}
)

// newRaggedLSTM sets up the step of lstm_padded_step or, when packed,
// lstm_ragged_step.
func newRaggedLSTM(dev tensor.Device, s Size, packed bool) Case {
	batch, longest, features, hidden := s.Dims[0], s.Dims[1], s.Dims[2], s.Dims[3]
	g := tensor.NewGenerator(1)
	opts := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	lstm := nn.NewLSTM(features, hidden, 1, opts...)
	w := tensor.Randn([]int{hidden}, opts...).SetRequiresGrad(true)
	params := append(nn.Parameters(lstm), w)
	opt := optim.NewSGD(params, optim.LR(0.01))
	xs, ys := make([]*tensor.Tensor, batch), make([]*tensor.Tensor, batch)
	lengths := make([]int, batch)
	mask := make([]float32, longest*batch) // (longest, batch): 1 on real steps
	total := 0
	for b := range batch {
		n := longest / 4
		if batch > 1 {
			n += b * (longest - longest/4) / (batch - 1)
		}
		lengths[b], total = n, total+n
		xs[b] = tensor.Randn([]int{n, features}, opts...)
		ys[b] = tensor.Randn([]int{n}, opts...)
		for t := range n {
			mask[t*batch+b] = 1
		}
	}
	// The padded batch, built once outside the timed step.
	pad := func(ts []*tensor.Tensor, rest ...int) *tensor.Tensor {
		out := tensor.Zeros(append([]int{longest, batch}, rest...), opts...)
		tensor.NoGrad(func() {
			for b, t := range ts {
				out.Narrow(0, 0, lengths[b]).Select(1, b).CopyFrom(t)
			}
		})
		return out
	}
	xPad, yPad := pad(xs, features), pad(ys)
	maskT := tensor.New(mask, longest, batch).To(dev)
	// The packed batch, built once outside the timed step as the padded one.
	xPacked, yPacked := nn.PackSequence(xs), nn.PackSequence(ys).Data
	step := scoped(func() {
		var loss *tensor.Tensor
		if packed {
			out, _, _ := lstm.ForwardPacked(xPacked, nil, nil)
			loss = out.Data.MatMul(w).Sub(yPacked).Square().Sum().DivScalar(float64(total))
		} else {
			out, _, _ := lstm.Forward(xPad, nil, nil)
			loss = out.MatMul(w).Sub(yPad).Mul(maskT).Square().Sum().DivScalar(float64(total))
		}
		autograd.Backward(loss)
		opt.Step()
		opt.ZeroGrad()
		loss.Item()
	})
	return Case{Step: step, Release: released(append(append(append(params, xs...), ys...), xPad, yPad, maskT, xPacked.Data, yPacked)...)}
}
