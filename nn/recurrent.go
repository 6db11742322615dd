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
	receiver("GRUCell", c)
	need("GRUCell", "x, weight_ih, weight_hh", x, c.WeightIH, c.WeightHH)
	h = zeroState("GRUCell", x, h, c.WeightHH.Size(1))
	return c.recur(c.project(x), []*tensor.Tensor{h})[0]
}

// project returns x·W_ihᵀ + b_ih, (…, input) → (…, 3·hidden), as
// RNNCell's.
func (c *GRUCell) project(x *tensor.Tensor) *tensor.Tensor { return Linear(x, c.WeightIH, c.BiasIH) }

// recur returns the next state [h'] from the projected input gx and the
// state [h].
func (c *GRUCell) recur(gx *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor {
	h := s[0]
	gi := gx.Chunk(3, -1)
	gh := Linear(h, c.WeightHH, c.BiasHH).Chunk(3, -1)
	r := gi[0].Add(gh[0]).Sigmoid()
	z := gi[1].Add(gh[1]).Sigmoid()
	n := gi[2].Add(r.Mul(gh[2])).Tanh()
	return []*tensor.Tensor{n.Add(z.Mul(h.Sub(n)))} // (1-z)·n + z·h
}

// Slots returns "weight_ih", "weight_hh", "bias_ih" and "bias_hh", as
// torch.nn.GRUCell names them.
func (c *GRUCell) Slots() []Slot {
	receiver("GRUCell.Slots", c)
	return cellSlots("", c.weights())
}

func (c *GRUCell) weights() []**tensor.Tensor {
	return []**tensor.Tensor{&c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH}
}

// Children returns nil.
func (c *GRUCell) Children() []Child { return nil }

// StackOptions are the options torch.nn.RNN, LSTM and GRU share beyond
// their sizes. The zero value is PyTorch's default but for Training,
// which the constructors set.
type StackOptions struct {
	// BatchFirst lays inputs and outputs out (batch, seq, feature); the
	// states stay (layers, batch, hidden), as in PyTorch.
	BatchFirst bool
	// Dropout is the probability of dropout on the outputs of every
	// layer but the last, in training.
	Dropout  float64
	Training bool              // set by Train and Eval
	Gen      *tensor.Generator // the dropout's generator; nil: the default one
}

// SetTraining switches the dropout between layers on (training) or off.
func (o *StackOptions) SetTraining(on bool) {
	receiver("StackOptions.SetTraining", o)
	o.Training = on
}

// RNN is torch.nn.RNN without bidirectionality: a stack of RNNCells
// (tanh, or relu for NewRNN's relu), layer l+1 reading the hidden states
// of layer l, over inputs (seq, batch, input), (batch, seq, input) with
// BatchFirst, or unbatched (seq, input). Its state dict holds the cells'
// tensors under PyTorch's names ("weight_ih_l0", "weight_hh_l0",
// "bias_ih_l0", "bias_hh_l0", "weight_ih_l1", …).
type RNN struct {
	Cells []*RNNCell
	StackOptions
}

// NewRNN returns an RNN of layers stacked cells (input → hidden, then
// hidden → hidden), tanh or, when relu is true, relu
// (nonlinearity='relu'), initialised as NewRNNCell: every tensor from
// U(-1/√hidden, 1/√hidden); in training mode, without dropout. It
// panics with ErrArgument when layers < 1 or a size is negative.
func NewRNN(input, hidden, layers int, relu bool, opts ...tensor.Option) *RNN {
	return &RNN{StackOptions: StackOptions{Training: true}, Cells: stackCells("NewRNN", 1, input, hidden, layers, func(in int) *RNNCell {
		c := NewRNNCell(in, hidden, opts...)
		c.ReLU = relu
		return c
	})}
}

// Forward runs the RNN over x from the initial state h0 (layers, batch,
// hidden), or (layers, hidden) for an unbatched x, nil meaning zeros,
// and returns the last layer's hidden state at every step, out
// (seq, batch, hidden) (batch first with BatchFirst; (seq, hidden)
// unbatched), and the final states hn of h0's shape, as torch.nn.RNN
// returns output, h_n. It panics with ErrShape when x is neither 2-D
// nor 3-D or h0 has the wrong shape.
func (m *RNN) Forward(x, h0 *tensor.Tensor) (out, hn *tensor.Tensor) {
	receiver("RNN", m)
	out, s := runStack("RNN", m.Cells, m.StackOptions, x, h0)
	return out, s[0]
}

// Slots returns the cells' weights and biases layer by layer under
// torch.nn.RNN's names. It panics with ErrArgument for a nil cell.
func (m *RNN) Slots() []Slot {
	receiver("RNN.Slots", m)
	return stackSlots("RNN", m.Cells)
}

// Children returns nil: the cells' tensors are the RNN's own slots, as
// in PyTorch.
func (m *RNN) Children() []Child { return nil }

// GRU is torch.nn.GRU without bidirectionality: a stack of GRUCells
// over inputs laid out as RNN's, with StackOptions and names as RNN's.
type GRU struct {
	Cells []*GRUCell
	StackOptions
}

// NewGRU returns a GRU of layers stacked cells (input → hidden, then
// hidden → hidden), initialised as NewGRUCell. It panics with
// ErrArgument when layers < 1 or a size is negative.
func NewGRU(input, hidden, layers int, opts ...tensor.Option) *GRU {
	return &GRU{StackOptions: StackOptions{Training: true}, Cells: stackCells("NewGRU", 3, input, hidden, layers, func(in int) *GRUCell {
		return NewGRUCell(in, hidden, opts...)
	})}
}

// Forward runs the GRU over x from the initial state h0 and returns out
// and hn, with the shapes of RNN.Forward, as torch.nn.GRU. It panics as
// RNN.Forward.
func (m *GRU) Forward(x, h0 *tensor.Tensor) (out, hn *tensor.Tensor) {
	receiver("GRU", m)
	out, s := runStack("GRU", m.Cells, m.StackOptions, x, h0)
	return out, s[0]
}

// Slots returns the cells' weights and biases layer by layer under
// torch.nn.GRU's names. It panics with ErrArgument for a nil cell.
func (m *GRU) Slots() []Slot {
	receiver("GRU.Slots", m)
	return stackSlots("GRU", m.Cells)
}

// Children returns nil.
func (m *GRU) Children() []Child { return nil }

// stackCells returns the cells of a stack of layers of gates·hidden
// units: cell(input), then cell(hidden) for the layers above. It panics
// with ErrArgument when layers < 1 or a size is negative and as
// checkRecurrentSize for a stack beyond the CPU budget.
func stackCells[C any](op string, gates, input, hidden, layers int, cell func(in int) C) []C {
	if layers < 1 {
		fail(op, tensor.ErrArgument, fmt.Sprintf("need at least one layer, got %d", layers))
	}
	checkRecurrentSize(op, layers, gates, input, hidden)
	cells := make([]C, layers)
	for l := range cells {
		in := hidden
		if l == 0 {
			in = input
		}
		cells[l] = cell(in)
	}
	return cells
}

// runStack runs a stack of cells over x, (seq, batch, input),
// (batch, seq, input) with o.BatchFirst, or unbatched (seq, input), from
// initial states s0 (each (layers, batch, hidden), (layers, hidden)
// unbatched, or nil for zeros). step maps a cell, an input (batch, ·)
// and its states to the next states, the hidden state first. Each
// layer projects its whole input sequence at once (one product with
// weight_ih, as cuDNN and PyTorch do), then recurs step by step. It
// returns the last layer's hidden states, laid out as x, and each final
// state (of s0's layout), with dropout between layers in training. It
// panics with ErrArgument for an empty stack or a nil cell and with
// ErrShape for a mis-shaped x or state.
func runStack[C recurrentCell](op string, cells []C, o StackOptions, x *tensor.Tensor, s0 ...*tensor.Tensor) (out *tensor.Tensor, sn []*tensor.Tensor) {
	need(op, "x", x)
	if len(cells) == 0 {
		fail(op, tensor.ErrArgument, "the stack has no layer", x)
	}
	unbatched := x.Dim() == 2
	switch {
	case unbatched:
		x = x.Unsqueeze(1)
	case x.Dim() != 3:
		fail(op, tensor.ErrShape, "the input must be (seq, batch, input), (batch, seq, input) with batch first, or (seq, input)", x)
	case o.BatchFirst:
		x = x.Transpose(0, 1)
	}
	states := make([]*tensor.Tensor, len(s0))
	for i, s := range s0 {
		if s != nil && unbatched {
			if s.Dim() != 2 {
				fail(op, tensor.ErrShape, "an unbatched input needs states (layers, hidden)", x, s)
			}
			s = s.Unsqueeze(1)
		}
		if s != nil && (s.Dim() != 3 || s.Size(0) != len(cells) || s.Size(1) != x.Size(1)) {
			fail(op, tensor.ErrShape, fmt.Sprintf("the states must be (%d layers, %d batch, hidden)", len(cells), x.Size(1)), x, s)
		}
		states[i] = s
	}
	hidden := stackHidden(op, cells)
	steps := make([]*tensor.Tensor, x.Size(0))
	finals := make([][]*tensor.Tensor, len(s0))
	for l, c := range cells {
		s := layerStates(states, l, x.Size(1), hidden, x)
		in := x
		if l > 0 {
			in = tensor.Stack(steps, 0)
		}
		gx := c.project(in)
		for t := range steps {
			s = c.recur(gx.Select(0, t), s)
			steps[t] = s[0]
			if l < len(cells)-1 {
				steps[t] = Dropout(s[0], o.Dropout, o.Training, o.Gen)
			}
		}
		for i := range finals {
			finals[i] = append(finals[i], s[i])
		}
	}
	out = tensor.Stack(steps, 0)
	for _, f := range finals {
		sn = append(sn, tensor.Stack(f, 0))
	}
	switch {
	case unbatched:
		out = out.Squeeze(1)
		for i := range sn {
			sn[i] = sn[i].Squeeze(1)
		}
	case o.BatchFirst:
		out = out.Transpose(0, 1)
	}
	return out, sn
}

// recurrentCell is a cell of a stack, *RNNCell, *LSTMCell or *GRUCell:
// weights returns its weight_ih, weight_hh, bias_ih and bias_hh fields.
type recurrentCell interface {
	*RNNCell | *LSTMCell | *GRUCell
	weights() []**tensor.Tensor
	project(x *tensor.Tensor) *tensor.Tensor
	recur(gx *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor
}

// stackHidden returns the hidden size of a stack's cells, panicking with
// ErrArgument for a nil cell or a nil weight.
func stackHidden[C recurrentCell](op string, cells []C) int {
	for k, c := range cells {
		if c == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("cell %d is nil", k))
		}
		for _, w := range c.weights()[:2] {
			if *w == nil {
				fail(op, tensor.ErrArgument, fmt.Sprintf("cell %d has a nil weight", k))
			}
		}
	}
	return (*cells[0].weights()[1]).Size(1)
}

// layerStates returns layer l's initial states: states[i] (layers,
// batch, hidden) at l, or zeros (batch, hidden) like x for a nil one.
func layerStates(states []*tensor.Tensor, l, batch, hidden int, x *tensor.Tensor) []*tensor.Tensor {
	s := make([]*tensor.Tensor, len(states))
	for i, st := range states {
		if st != nil {
			s[i] = st.Select(0, l)
		} else {
			s[i] = tensor.Zeros([]int{batch, hidden}, tensor.Like(x))
		}
	}
	return s
}

// stackSlots returns the slots of a stack's cells layer by layer, each
// cell's four tensors (weight_ih, weight_hh, bias_ih, bias_hh) suffixed
// "_l<k>". It panics with ErrArgument for a nil cell.
func stackSlots[C recurrentCell](op string, cells []C) []Slot {
	var out []Slot
	for k, c := range cells {
		if c == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("cell %d is nil", k))
		}
		out = append(out, cellSlots(fmt.Sprintf("_l%d", k), c.weights())...)
	}
	return out
}
