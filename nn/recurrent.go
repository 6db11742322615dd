package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// GRUCell is torch.nn.GRUCell. The gates are stacked in PyTorch's order
// r, z, n: WeightIH is (3·hidden, input), WeightHH (3·hidden, hidden),
// BiasIH and BiasHH (3·hidden); nil biases are left out:
//
//	r = σ(x·W_irᵀ + b_ir + h·W_hrᵀ + b_hr)
//	z = σ(x·W_izᵀ + b_iz + h·W_hzᵀ + b_hz)
//	n = tanh(x·W_inᵀ + b_in + r⊙(h·W_hnᵀ + b_hn))
//	h' = (1 - z)⊙n + z⊙h
type GRUCell struct {
	WeightIH, WeightHH, BiasIH, BiasHH *tensor.Tensor
}

// NewGRUCell returns a GRUCell with every weight and bias drawn from
// U(-1/√hidden, 1/√hidden), as PyTorch initialises it. opts are those of
// NewLinear. It panics with ErrArgument for a negative size.
func NewGRUCell(input, hidden int, opts ...tensor.Option) *GRUCell {
	c := &GRUCell{}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams("NewGRUCell", 3, input, hidden, opts)
	return c
}

// Forward returns the next hidden state for input x, (batch, input) or
// (input), and hidden state h of shape (batch, hidden) or (hidden); nil
// h means zeros. It panics with ErrShape for mismatched shapes.
func (c *GRUCell) Forward(x, h *tensor.Tensor) *tensor.Tensor {
	need("GRUCell", "x", x)
	h = zeroState("GRUCell", x, h, c.WeightHH.Size(1))
	gi := Linear(x, c.WeightIH, c.BiasIH).Chunk(3, -1)
	gh := Linear(h, c.WeightHH, c.BiasHH).Chunk(3, -1)
	r := gi[0].Add(gh[0]).Sigmoid()
	z := gi[1].Add(gh[1]).Sigmoid()
	n := gi[2].Add(r.Mul(gh[2])).Tanh()
	return n.Add(z.Mul(h.Sub(n))) // (1-z)·n + z·h
}

// Slots returns "weight_ih", "weight_hh", "bias_ih" and "bias_hh", as
// torch.nn.GRUCell names them.
func (c *GRUCell) Slots() []Slot {
	return cellSlots("", &c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH)
}

// Children returns nil.
func (c *GRUCell) Children() []Child { return nil }

// RNN is torch.nn.RNN without dropout or bidirectionality: a stack of
// RNNCells (tanh, or relu for NewRNN's relu), layer l+1 reading the
// hidden states of layer l, over inputs laid out (seq, batch, input).
// Its state dict holds the cells' tensors under PyTorch's names
// ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
// "weight_ih_l1", …).
type RNN struct {
	Cells []*RNNCell
}

// NewRNN returns an RNN of layers stacked cells (input → hidden, then
// hidden → hidden), tanh or, when relu is true, relu
// (nonlinearity='relu'), initialised as NewRNNCell: every tensor from
// U(-1/√hidden, 1/√hidden). It panics with ErrArgument when layers < 1
// or a size is negative.
func NewRNN(input, hidden, layers int, relu bool, opts ...tensor.Option) *RNN {
	m := &RNN{}
	for _, in := range layerInputs("NewRNN", input, hidden, layers) {
		c := NewRNNCell(in, hidden, opts...)
		c.ReLU = relu
		m.Cells = append(m.Cells, c)
	}
	return m
}

// Forward runs the RNN over x (seq, batch, input) from the initial
// state h0 (layers, batch, hidden), nil meaning zeros, and returns the
// last layer's hidden state at every step, out (seq, batch, hidden), and
// the final states hn (layers, batch, hidden), as torch.nn.RNN returns
// output, h_n. It panics with ErrShape when x is not 3-D or h0 has the
// wrong shape.
func (m *RNN) Forward(x, h0 *tensor.Tensor) (out, hn *tensor.Tensor) {
	return runStack("RNN", m.Cells, (*RNNCell).Forward, x, h0)
}

// Slots returns the cells' weights and biases layer by layer under
// torch.nn.RNN's names. It panics with ErrArgument for a nil cell.
func (m *RNN) Slots() []Slot {
	return stackSlots("RNN", m.Cells, func(c *RNNCell) []**tensor.Tensor {
		return []**tensor.Tensor{&c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH}
	})
}

// Children returns nil: the cells' tensors are the RNN's own slots, as
// in PyTorch.
func (m *RNN) Children() []Child { return nil }

// GRU is torch.nn.GRU without dropout or bidirectionality: a stack of
// GRUCells over inputs laid out (seq, batch, input), named as RNN's.
type GRU struct {
	Cells []*GRUCell
}

// NewGRU returns a GRU of layers stacked cells (input → hidden, then
// hidden → hidden), initialised as NewGRUCell. It panics with
// ErrArgument when layers < 1 or a size is negative.
func NewGRU(input, hidden, layers int, opts ...tensor.Option) *GRU {
	m := &GRU{}
	for _, in := range layerInputs("NewGRU", input, hidden, layers) {
		m.Cells = append(m.Cells, NewGRUCell(in, hidden, opts...))
	}
	return m
}

// Forward runs the GRU over x (seq, batch, input) from the initial
// state h0 (layers, batch, hidden), nil meaning zeros, and returns out
// (seq, batch, hidden) and hn (layers, batch, hidden), as torch.nn.GRU.
// It panics as RNN.Forward.
func (m *GRU) Forward(x, h0 *tensor.Tensor) (out, hn *tensor.Tensor) {
	return runStack("GRU", m.Cells, (*GRUCell).Forward, x, h0)
}

// Slots returns the cells' weights and biases layer by layer under
// torch.nn.GRU's names. It panics with ErrArgument for a nil cell.
func (m *GRU) Slots() []Slot {
	return stackSlots("GRU", m.Cells, func(c *GRUCell) []**tensor.Tensor {
		return []**tensor.Tensor{&c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH}
	})
}

// Children returns nil.
func (m *GRU) Children() []Child { return nil }

// layerInputs returns the input size of each layer of a stack: input,
// then hidden. It panics with ErrArgument when layers < 1 or a size is
// negative.
func layerInputs(op string, input, hidden, layers int) []int {
	if layers < 1 {
		fail(op, tensor.ErrArgument, fmt.Sprintf("need at least one layer, got %d", layers))
	}
	checkSizes(op, input, hidden)
	ins := make([]int, layers)
	for l := range ins {
		ins[l] = hidden
	}
	ins[0] = input
	return ins
}

// timeSteps returns the steps x[t] of a sequence x (seq, batch, input).
// It panics with ErrShape when x is not 3-D.
func timeSteps(op string, x *tensor.Tensor) []*tensor.Tensor {
	need(op, "x", x)
	if x.Dim() != 3 {
		fail(op, tensor.ErrShape, "the input must be (seq, batch, input)", x)
	}
	steps := make([]*tensor.Tensor, x.Size(0))
	for t := range steps {
		steps[t] = x.Select(0, t)
	}
	return steps
}

// layerState returns layer l's initial state from s (layers, batch,
// hidden), or nil (zeros) when s is nil.
func layerState(s *tensor.Tensor, l int) *tensor.Tensor {
	if s == nil {
		return nil
	}
	return s.Select(0, l)
}

// runStack runs a stack of single-state cells over x (seq, batch,
// input) from h0 (layers, batch, hidden) or zeros, and returns every
// step's output of the last layer (seq, batch, hidden) and the final
// state of each layer (layers, batch, hidden). It panics with
// ErrArgument for an empty stack or a nil cell and with ErrShape for a
// mis-shaped x or h0.
func runStack[C any](op string, cells []*C, step func(c *C, x, h *tensor.Tensor) *tensor.Tensor, x, h0 *tensor.Tensor) (out, hn *tensor.Tensor) {
	steps := timeSteps(op, x)
	if len(cells) == 0 {
		fail(op, tensor.ErrArgument, "the stack has no layer", x)
	}
	for k, c := range cells {
		if c == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("cell %d is nil", k))
		}
	}
	if h0 != nil && (h0.Dim() != 3 || h0.Size(0) != len(cells) || h0.Size(1) != x.Size(1)) {
		fail(op, tensor.ErrShape, fmt.Sprintf("h0 must be (%d layers, %d batch, hidden)", len(cells), x.Size(1)), x, h0)
	}
	hs := make([]*tensor.Tensor, len(cells))
	for l, c := range cells {
		h := layerState(h0, l)
		for t, xt := range steps {
			h = step(c, xt, h)
			steps[t] = h
		}
		hs[l] = h
	}
	return tensor.Stack(steps, 0), tensor.Stack(hs, 0)
}

// stackSlots returns the slots of a stack's cells layer by layer, each
// cell's four tensors (weight_ih, weight_hh, bias_ih, bias_hh) suffixed
// "_l<k>". It panics with ErrArgument for a nil cell.
func stackSlots[C any](op string, cells []*C, tensors func(*C) []**tensor.Tensor) []Slot {
	var out []Slot
	for k, c := range cells {
		if c == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("cell %d is nil", k))
		}
		t := tensors(c)
		out = append(out, cellSlots(fmt.Sprintf("_l%d", k), t[0], t[1], t[2], t[3])...)
	}
	return out
}
