package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// ForwardPacked runs the RNN over a packed batch of sequences of
// different lengths, as torch.nn.RNN does given a PackedSequence: out
// holds the last layer's hidden state at every step in x's layout, hn
// (layers, batch, hidden) each sequence's state after its last step, in
// batch order. h0 is (layers, batch, hidden) in batch order, nil meaning
// zeros. No step computes a finished sequence, and nothing is padded.
// It panics with ErrArgument for a nil x and ErrShape for a mis-shaped
// h0.
func (m *RNN) ForwardPacked(x *PackedSequence, h0 *tensor.Tensor) (out *PackedSequence, hn *tensor.Tensor) {
	receiver("RNN.ForwardPacked", m)
	out, s := runPackedStack("RNN.ForwardPacked", m.Cells, m.StackOptions, x, h0)
	return out, s[0]
}

// ForwardPacked runs the GRU over a packed batch, as RNN.ForwardPacked.
func (m *GRU) ForwardPacked(x *PackedSequence, h0 *tensor.Tensor) (out *PackedSequence, hn *tensor.Tensor) {
	receiver("GRU.ForwardPacked", m)
	out, s := runPackedStack("GRU.ForwardPacked", m.Cells, m.StackOptions, x, h0)
	return out, s[0]
}

// ForwardPacked runs the LSTM over a packed batch, as RNN.ForwardPacked,
// from initial states h0 and c0 (layers, batch, hidden) in batch order,
// nil meaning zeros, and returns the final hidden and cell states.
func (m *LSTM) ForwardPacked(x *PackedSequence, h0, c0 *tensor.Tensor) (out *PackedSequence, hn, cn *tensor.Tensor) {
	receiver("LSTM.ForwardPacked", m)
	out, s := runPackedStack("LSTM.ForwardPacked", m.Cells, m.StackOptions, x, h0, c0)
	return out, s[0], s[1]
}

// runPackedStack runs a stack of cells over the packed x with RunPacked,
// layer after layer, each projecting all its packed rows at once, from initial states s0 (each (layers, batch,
// hidden) in batch order, or nil for zeros), with dropout between layers
// in training. It returns the last layer's outputs and each final state,
// (layers, batch, hidden) in batch order.
func runPackedStack[C recurrentCell](op string, cells []C, o StackOptions, x *PackedSequence, s0 ...*tensor.Tensor) (*PackedSequence, []*tensor.Tensor) {
	if x == nil || x.Data == nil {
		fail(op, tensor.ErrArgument, "x is a nil *PackedSequence")
	}
	if len(cells) == 0 {
		fail(op, tensor.ErrArgument, "the stack has no layer", x.Data)
	}
	hidden := stackHidden(op, cells)
	batch := len(x.SortedIndices)
	for _, s := range s0 {
		if s != nil && (s.Dim() != 3 || s.Size(0) != len(cells) || s.Size(1) != batch) {
			fail(op, tensor.ErrShape, fmt.Sprintf("the states must be (%d layers, %d batch, hidden)", len(cells), batch), x.Data, s)
		}
	}
	finals := make([][]*tensor.Tensor, len(s0))
	orders := x.orders()
	for l, c := range cells {
		s := layerStates(s0, l, batch, hidden, x.Data)
		out, fin := runPacked(x.WithData(c.project(x.Data)), orders, s, c.recur)
		if l < len(cells)-1 {
			out = out.WithData(Dropout(out.Data, o.Dropout, o.Training, o.Gen))
		}
		x = out
		for i := range finals {
			finals[i] = append(finals[i], fin[i])
		}
	}
	sn := make([]*tensor.Tensor, len(finals))
	for i, f := range finals {
		sn[i] = tensor.Stack(f, 0)
	}
	return x, sn
}
