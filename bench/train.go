package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// oneStep is the work of a training-step workload: one step.
func oneStep(Size) float64 { return 1 }

// mlpSize is a batch and the layer widths of an MLP training step.
func mlpSize(batch int, widths ...int) Size {
	label := fmt.Sprint(widths[0])
	for _, w := range widths[1:] {
		label += fmt.Sprintf("-%d", w)
	}
	return Size{Label: fmt.Sprintf("%s, batch %d", label, batch), X: float64(batch), Dims: append([]int{batch}, widths...)}
}

var mlpStep = Workload{
	Name: "mlp_step", Family: "MLP training step", Unit: StepsPS,
	Sizes: []Size{mlpSize(256, 784, 512, 512, 10)},
	Quick: []Size{mlpSize(32, 784, 512, 512, 10)},
	Peers: []string{"torch"},
	Doc: "mlp_step: one training step of a ReLU MLP in nn.Linear layout (weight out×in) on a fixed random batch: " +
		"cross-entropy, backward, SGD (lr 0.01), zero grad, loss read back every step",
	Work: oneStep,
	Setup: func(dev tensor.Device, s Size) Case {
		batch, widths := s.Dims[0], s.Dims[1:]
		model := nn.NewMLP(widths, (*tensor.Tensor).ReLU, tensor.On(dev))
		x := tensor.Randn([]int{batch, widths[0]}, tensor.On(dev))
		y := tensor.RandInt(0, widths[len(widths)-1], []int{batch}, tensor.On(dev))
		return classifierStep(model, x, y)
	},
}

// classifierStep is the case of one SGD (lr 0.01) training step of a
// classifier on the fixed batch x with labels y: cross-entropy,
// backward, step, zero grad, and the loss read back.
func classifierStep(model nn.Layer, x, y *tensor.Tensor) Case {
	opt := optim.NewSGD(nn.Parameters(model), optim.LR(0.01))
	step := scoped(func() {
		loss := nn.CrossEntropy(model.Forward(x), y)
		autograd.Backward(loss)
		opt.Step()
		opt.ZeroGrad()
		loss.Item()
	})
	return Case{Step: step, Release: released(append(nn.Parameters(model), x, y)...)}
}

// charRNNSize is Karpathy's min-char-rnn configuration.
func charRNNSize(hidden, seq, vocab int) Size {
	return Size{Label: fmt.Sprintf("hidden %d, seq %d, vocab %d", hidden, seq, vocab), X: float64(hidden), Dims: []int{hidden, seq, vocab}}
}

var mincharStep = Workload{
	Name: "minchar_step", Family: "min-char-rnn training step", Unit: StepsPS,
	Sizes: []Size{charRNNSize(100, 25, 65)},
	Quick: []Size{charRNNSize(100, 25, 65)},
	Peers: []string{"torch", "numpy"},
	Doc: "minchar_step: one truncated-BPTT step of Karpathy's min-char-rnn (vanilla RNN, tanh) on a random index stream: " +
		"forward over seq characters, summed cross-entropy, backward, gradients clipped to ±5, Adagrad (lr 0.1), loss read back",
	Work: oneStep,
	Setup: func(dev tensor.Device, s Size) Case {
		r := newCharRNN(dev, s.Dims[0], s.Dims[1], s.Dims[2])
		return Case{Step: r.step, Release: r.release}
	},
}

// charRNN is the state of the min-char-rnn workload: parameters, Adagrad,
// the carried hidden state and the position in the data.
type charRNN struct {
	dev                   tensor.Device
	Wxh, Whh, Why, bh, by *tensor.Tensor
	params                []*tensor.Tensor
	opt                   *optim.Adagrad
	h                     *tensor.Tensor
	data                  []int
	seq, pos              int
}

func newCharRNN(dev tensor.Device, hidden, seq, vocab int) *charRNN {
	g := tensor.NewGenerator(1)
	opts := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	r := &charRNN{dev: dev, seq: seq}
	r.Wxh = tensor.Normal([]int{hidden, vocab}, 0, 0.01, opts...).SetRequiresGrad(true)
	r.Whh = tensor.Normal([]int{hidden, hidden}, 0, 0.01, opts...).SetRequiresGrad(true)
	r.Why = tensor.Normal([]int{vocab, hidden}, 0, 0.01, opts...).SetRequiresGrad(true)
	r.bh = tensor.Zeros([]int{hidden}, opts...).SetRequiresGrad(true)
	r.by = tensor.Zeros([]int{vocab}, opts...).SetRequiresGrad(true)
	r.params = []*tensor.Tensor{r.Wxh, r.Whh, r.Why, r.bh, r.by}
	r.opt = optim.NewAdagrad(r.params, optim.LR(0.1), optim.Eps(1e-8))
	r.h = tensor.Zeros([]int{hidden}, opts...)
	rng := rand.New(rand.NewPCG(1, 2))
	r.data = make([]int, 64*seq+1)
	for i := range r.data {
		r.data[i] = rng.IntN(vocab)
	}
	return r
}

// step trains on the next seq characters, as examples/minchar does.
func (r *charRNN) step() {
	if r.pos+r.seq+1 > len(r.data) {
		r.pos = 0
	}
	inputs, targets := r.data[r.pos:r.pos+r.seq], r.data[r.pos+1:r.pos+r.seq+1]
	r.pos += r.seq
	prev := r.h
	r.h = tensor.ScopeResult(func() *tensor.Tensor {
		x := nn.Embedding(r.Wxh.T(), tensor.FromInts(inputs).To(r.dev)) // row t = Wxh @ one-hot(inputs[t])
		h := prev
		logits := make([]*tensor.Tensor, len(inputs))
		for t := range inputs {
			h = x.Select(0, t).Add(r.Whh.MatMul(h)).Add(r.bh).Tanh()
			logits[t] = r.Why.MatMul(h).Add(r.by)
		}
		loss := nn.CrossEntropy(tensor.Stack(logits, 0), tensor.FromInts(targets).To(r.dev), nn.Reduce(nn.ReduceSum))
		autograd.Backward(loss)
		nn.ClipGradValue(r.params, 5)
		r.opt.Step()
		r.opt.ZeroGrad()
		loss.Item()
		return h.Detach()
	})
	prev.Release()
}

func (r *charRNN) release() { released(append(r.params, r.h)...)() }
