package nn

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// RNNCell is torch.nn.RNNCell with the tanh non-linearity, or relu
// when ReLU is true (nonlinearity='relu'):
//
//	h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh)
//
// WeightIH is (hidden, input), WeightHH (hidden, hidden), the biases
// (hidden); nil biases are left out.
type RNNCell struct {
	WeightIH, WeightHH, BiasIH, BiasHH *tensor.Tensor
	ReLU                               bool
}

// NewRNNCell returns an RNNCell with every weight and bias drawn from
// U(-1/√hidden, 1/√hidden), as PyTorch initialises recurrent layers
// (0 for no hidden units). opts are those of NewLinear. It panics with
// ErrArgument for a negative size.
func NewRNNCell(input, hidden int, opts ...tensor.Option) *RNNCell {
	c := &RNNCell{}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams("NewRNNCell", 1, input, hidden, opts)
	return c
}

// Forward returns the next hidden state for input x, (batch, input) or
// (input), and hidden state h of the matching shape (batch, hidden) or
// (hidden); nil h means zeros.
func (c *RNNCell) Forward(x, h *tensor.Tensor) *tensor.Tensor {
	receiver("RNNCell.Forward", c)
	need("RNNCell", "x, weight_ih, weight_hh", x, c.WeightIH, c.WeightHH)
	h = zeroState("RNNCell", x, h, c.WeightHH.Size(1))
	return c.recur(c.project(x), []*tensor.Tensor{h})[0]
}

// project returns x·W_ihᵀ + b_ih for every row of x, (…, input) →
// (…, hidden): the part of a step that does not depend on the state,
// which a stack computes for all steps at once.
func (c *RNNCell) project(x *tensor.Tensor) *tensor.Tensor { return Linear(x, c.WeightIH, c.BiasIH) }

// recur returns the next state [h'] from the projected input gx and the
// state [h].
func (c *RNNCell) recur(gx *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor {
	pre := gx.Add(Linear(s[0], c.WeightHH, c.BiasHH))
	if c.ReLU {
		return []*tensor.Tensor{pre.ReLU()}
	}
	return []*tensor.Tensor{pre.Tanh()}
}

// Slots returns "weight_ih", "weight_hh", "bias_ih" and "bias_hh", as
// torch.nn.RNNCell names them.
func (c *RNNCell) Slots() []Slot {
	receiver("RNNCell.Slots", c)
	return cellSlots("", c.weights())
}

// Children returns nil.
func (c *RNNCell) Children() []Child {
	receiver("RNNCell.Children", c)
	return nil
}

// cellSlots returns the slots of a recurrent cell's weights and biases
// w (weight_ih, weight_hh, bias_ih, bias_hh) under PyTorch's names, each
// followed by suffix ("_l0" in a stack).
func cellSlots(suffix string, w []**tensor.Tensor) []Slot {
	return []Slot{Param("weight_ih"+suffix, w[0]), Param("weight_hh"+suffix, w[1]), Param("bias_ih"+suffix, w[2]), Param("bias_hh"+suffix, w[3])}
}

func (c *RNNCell) weights() []**tensor.Tensor {
	return []**tensor.Tensor{&c.WeightIH, &c.WeightHH, &c.BiasIH, &c.BiasHH}
}

func (l *LSTMCell) weights() []**tensor.Tensor {
	return []**tensor.Tensor{&l.WeightIH, &l.WeightHH, &l.BiasIH, &l.BiasHH}
}

// LSTMCell is torch.nn.LSTMCell. The gates are stacked in PyTorch's
// order i, f, g, o: WeightIH is (4·hidden, input), WeightHH
// (4·hidden, hidden), BiasIH and BiasHH (4·hidden), both added:
//
//	i = σ(·), f = σ(·), g = tanh(·), o = σ(·)   of x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh
//	c' = f⊙c + i⊙g
//	h' = o⊙tanh(c')
//
// Karpathy's lstm.py stacks the gates as i, f, o, g in one matrix with
// the bias as row 0; permute the blocks to convert.
type LSTMCell struct {
	WeightIH, WeightHH, BiasIH, BiasHH *tensor.Tensor
}

// NewLSTMCell returns an LSTMCell with every weight and bias drawn from
// U(-1/√hidden, 1/√hidden), as PyTorch does. opts are those of NewLinear.
// It panics with ErrArgument for a negative size.
func NewLSTMCell(input, hidden int, opts ...tensor.Option) *LSTMCell {
	c := &LSTMCell{}
	c.WeightIH, c.WeightHH, c.BiasIH, c.BiasHH = cellParams("NewLSTMCell", 4, input, hidden, opts)
	return c
}

// Forward returns the next hidden and cell states for input x,
// (batch, input) or (input), and states h, c of shape (batch, hidden) or
// (hidden); nil states mean zeros.
func (l *LSTMCell) Forward(x, h, c *tensor.Tensor) (h2, c2 *tensor.Tensor) {
	receiver("LSTMCell.Forward", l)
	need("LSTMCell", "x, weight_ih, weight_hh", x, l.WeightIH, l.WeightHH)
	hidden := l.WeightHH.Size(1)
	h = zeroState("LSTMCell", x, h, hidden)
	c = zeroState("LSTMCell", x, c, hidden)
	s := l.recur(l.project(x), []*tensor.Tensor{h, c})
	return s[0], s[1]
}

// project returns x·W_ihᵀ + b_ih, (…, input) → (…, 4·hidden), as
// RNNCell's.
func (l *LSTMCell) project(x *tensor.Tensor) *tensor.Tensor { return Linear(x, l.WeightIH, l.BiasIH) }

// recur returns the next states [h', c'] from the projected input gx
// and the states [h, c].
func (l *LSTMCell) recur(gx *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor {
	g := gx.Add(Linear(s[0], l.WeightHH, l.BiasHH)).Chunk(4, -1)
	i, f, cand, o := g[0].Sigmoid(), g[1].Sigmoid(), g[2].Tanh(), g[3].Sigmoid()
	c2 := f.Mul(s[1]).Add(i.Mul(cand))
	return []*tensor.Tensor{o.Mul(c2.Tanh()), c2}
}

// Slots returns "weight_ih", "weight_hh", "bias_ih" and "bias_hh", as
// torch.nn.LSTMCell names them.
func (l *LSTMCell) Slots() []Slot {
	receiver("LSTMCell.Slots", l)
	return cellSlots("", l.weights())
}

// Children returns nil.
func (l *LSTMCell) Children() []Child {
	receiver("LSTMCell.Children", l)
	return nil
}

// cellParams returns a recurrent cell's weights (gates·hidden, input)
// and (gates·hidden, hidden) and biases (gates·hidden), drawn from
// U(-1/√hidden, 1/√hidden) as PyTorch initialises recurrent layers (a
// bound of 0 for no hidden units). It panics with ErrArgument for a
// negative size.
func cellParams(op string, gates, input, hidden int, opts []tensor.Option) (wih, whh, bih, bhh *tensor.Tensor) {
	checkRecurrentSize(op, 1, gates, input, hidden)
	b := 0.0
	if hidden > 0 {
		b = 1 / math.Sqrt(float64(hidden))
	}
	n := gates * hidden
	return uniformParam([]int{n, input}, b, opts), uniformParam([]int{n, hidden}, b, opts),
		uniformParam([]int{n}, b, opts), uniformParam([]int{n}, b, opts)
}

// checkRecurrentSize panics, naming op, with ErrArgument for a negative
// size and with ErrOutOfMemory when copies cells of gates·hidden units
// over input features (gates·hidden·(input + hidden + 2) parameters
// each) would not fit the CPU budget as float32, before anything is
// allocated: a stack of 2⁴⁰ layers is refused at once, and gates·hidden
// never wraps.
func checkRecurrentSize(op string, copies, gates, input, hidden int) {
	checkSizes(op, input, hidden)
	n := big.NewInt(2)
	n.Add(n, big.NewInt(int64(max(input, hidden))))
	n.Add(n, big.NewInt(int64(hidden)))
	for _, f := range []int{copies, gates, hidden, 4} {
		n.Mul(n, big.NewInt(int64(f)))
	}
	if budget, err := tensor.CPUBudget(); err == nil && n.Cmp(big.NewInt(budget)) > 0 {
		fail(op, tensor.ErrOutOfMemory, fmt.Sprintf("%d layers of %d×%d units over %d inputs: %v bytes of float32 parameters exceed the CPU budget of %d bytes", copies, gates, hidden, input, n, budget))
	}
}

// zeroState returns s, or zeros of x's batch shape with size hidden when
// s is nil, checking s's shape.
func zeroState(op string, x, s *tensor.Tensor, hidden int) *tensor.Tensor {
	if x.Dim() < 1 || x.Dim() > 2 {
		fail(op, tensor.ErrShape, "the input must be (batch, input) or (input)", x)
	}
	want := append(x.Shape()[:x.Dim()-1], hidden)
	if s == nil {
		return tensor.Zeros(want, tensor.Like(x))
	}
	if !slices.Equal(s.Shape(), want) {
		fail(op, tensor.ErrShape, fmt.Sprintf("the state must have shape %v", want), x, s)
	}
	return s
}

// LSTM is torch.nn.LSTM without bidirectionality or projections: a
// stack of LSTMCells, layer l+1 reading the hidden states of layer l,
// over inputs (seq, batch, input), (batch, seq, input) with BatchFirst,
// or unbatched (seq, input); StackOptions as for RNN. Its state dict
// holds the cells' tensors under PyTorch's names ("weight_ih_l0", …).
type LSTM struct {
	Cells []*LSTMCell
	StackOptions
}

// NewLSTM returns an LSTM of layers stacked cells (input → hidden, then
// hidden → hidden), initialised as NewLSTMCell, in training mode,
// without dropout. It panics with ErrArgument when layers < 1 or a size
// is negative.
func NewLSTM(input, hidden, layers int, opts ...tensor.Option) *LSTM {
	return &LSTM{StackOptions: StackOptions{Training: true}, Cells: stackCells("NewLSTM", 4, input, hidden, layers, func(in int) *LSTMCell {
		return NewLSTMCell(in, hidden, opts...)
	})}
}

// Forward runs the LSTM over x from initial states h0, c0 (layers,
// batch, hidden), or (layers, hidden) for an unbatched x, nil meaning
// zeros, and returns the last layer's hidden state at every step, out
// (seq, batch, hidden) (batch first with BatchFirst; (seq, hidden)
// unbatched), and the final states hn, cn of the states' shape, as
// torch.nn.LSTM returns output, (h_n, c_n). It panics with ErrShape when
// x is neither 2-D nor 3-D or a state has the wrong shape.
func (m *LSTM) Forward(x, h0, c0 *tensor.Tensor) (out, hn, cn *tensor.Tensor) {
	receiver("LSTM", m)
	out, s := runStack("LSTM", m.Cells, m.StackOptions, x, h0, c0)
	return out, s[0], s[1]
}

// Slots returns the cells' weights and biases layer by layer under
// torch.nn.LSTM's names: "weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
// "bias_hh_l0", "weight_ih_l1", …. It panics with ErrArgument for a nil
// cell.
func (m *LSTM) Slots() []Slot {
	receiver("LSTM.Slots", m)
	return stackSlots("LSTM", m.Cells)
}

// Children returns nil: the cells' tensors are the LSTM's own slots, as
// in PyTorch.
func (m *LSTM) Children() []Child { return nil }
