package nn

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// PackedSequence is torch.nn.utils.rnn.PackedSequence: a batch of
// sequences of different lengths stored without padding. Data holds the
// steps time-major: step 0 of every sequence, longest sequence first,
// then step 1 of every sequence longer than 1, and so on, so Data is
// (Σ lengths, features…) and BatchSizes[t] is how many sequences are
// longer than t (non-increasing). SortedIndices[k] is the batch index of
// the k-th longest sequence (ties in batch order) and UnsortedIndices is
// its inverse. A recurrent layer steps through Data with narrowing
// views, never touching a padded copy: at step t the first BatchSizes[t]
// rows of the state are the sequences still running.
//
// Build one with PackSequence or PackPadded; read it back with Unpack
// or Pad. The fields are read-only once built.
type PackedSequence struct {
	Data            *tensor.Tensor
	BatchSizes      []int
	SortedIndices   []int
	UnsortedIndices []int
}

// PackSequence packs sequences, each (length, features…) with equal
// trailing dims, in any order of lengths, as
// torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False). It runs
// one concatenation and one gather, whatever the number of sequences,
// and is differentiable. It panics with ErrArgument for no sequence, a
// nil one or an empty one and with ErrShape or ErrDevice when their
// trailing dims or devices differ.
func PackSequence(seqs []*tensor.Tensor) *PackedSequence {
	const op = "PackSequence"
	if len(seqs) == 0 {
		fail(op, tensor.ErrArgument, "no sequence to pack")
	}
	lengths := make([]int, len(seqs))
	starts := make([]int, len(seqs))
	at := 0
	for b, s := range seqs {
		if s == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("sequence %d is a nil *Tensor", b))
		}
		if s.Dim() == 0 || s.Size(0) == 0 {
			fail(op, tensor.ErrArgument, fmt.Sprintf("sequence %d is empty; every sequence needs at least one step", b), s)
		}
		lengths[b], starts[b] = s.Size(0), at
		at += s.Size(0)
	}
	flat := tensor.Cat(seqs, 0) // checks trailing dims and devices
	p := newPacking(lengths)
	p.Data = flat.IndexSelect(0, p.rows(flat.Device(), func(b, t int) int { return starts[b] + t }))
	return p.PackedSequence
}

// PackPadded packs x, padded (seq, batch, features…), or (batch, seq,
// features…) when batchFirst, keeping the first lengths[b] steps of
// sequence b, as torch.nn.utils.rnn.pack_padded_sequence(x, lengths,
// batch_first, enforce_sorted=False). It runs one gather and is
// differentiable. It panics with ErrShape when x has fewer than 2 dims
// or len(lengths) is not its batch size, and with ErrArgument for a
// length below 1 or beyond x's steps.
func PackPadded(x *tensor.Tensor, lengths []int, batchFirst bool) *PackedSequence {
	const op = "PackPadded"
	need(op, "x", x)
	if x.Dim() < 2 {
		fail(op, tensor.ErrShape, "x must be (seq, batch, features…) or (batch, seq, features…)", x)
	}
	if batchFirst {
		x = x.Transpose(0, 1)
	}
	steps, batch := x.Size(0), x.Size(1)
	if len(lengths) != batch {
		fail(op, tensor.ErrShape, fmt.Sprintf("%d lengths for a batch of %d", len(lengths), batch), x)
	}
	for b, n := range lengths {
		if n < 1 || n > steps {
			fail(op, tensor.ErrArgument, fmt.Sprintf("length %d of sequence %d is outside [1, %d]", n, b, steps), x)
		}
	}
	flat := x.Reshape(append([]int{steps * batch}, x.Shape()[2:]...)...)
	p := newPacking(slices.Clone(lengths))
	p.Data = flat.IndexSelect(0, p.rows(x.Device(), func(b, t int) int { return t*batch + b }))
	return p.PackedSequence
}

// packing is a PackedSequence being built, with its lengths.
type packing struct {
	*PackedSequence
	lengths []int
}

// newPacking returns the batch sizes and orders of sequences of lengths
// (each at least 1).
func newPacking(lengths []int) packing {
	sorted := make([]int, len(lengths))
	for b := range sorted {
		sorted[b] = b
	}
	slices.SortStableFunc(sorted, func(a, b int) int { return cmp.Compare(lengths[b], lengths[a]) })
	unsorted := make([]int, len(sorted))
	for k, b := range sorted {
		unsorted[b] = k
	}
	sizes := make([]int, lengths[sorted[0]])
	for _, n := range lengths {
		for t := range n {
			sizes[t]++
		}
	}
	return packing{&PackedSequence{BatchSizes: sizes, SortedIndices: sorted, UnsortedIndices: unsorted}, lengths}
}

// rows returns, as an index on dev, the row of each packed step in a
// source where step t of sequence b sits at row(b, t), in Data's order.
func (p packing) rows(dev tensor.Device, row func(b, t int) int) *tensor.Tensor {
	idx := make([]int, 0, len(p.BatchSizes)*len(p.lengths))
	for t, n := range p.BatchSizes {
		for _, b := range p.SortedIndices[:n] {
			idx = append(idx, row(b, t))
		}
	}
	return tensor.FromInts(idx, len(idx)).To(dev)
}

// Lengths returns the sequences' lengths in batch order.
func (p *PackedSequence) Lengths() []int {
	receiver("PackedSequence.Lengths", p)
	lengths := make([]int, len(p.SortedIndices))
	for t, n := range p.BatchSizes {
		for _, b := range p.SortedIndices[:n] {
			lengths[b] = t + 1
		}
	}
	return lengths
}

// WithData returns a PackedSequence of p's layout holding data, (Σ
// lengths, features…), as a layer's output over p is. It panics with
// ErrShape when data's first dim is not p's.
func (p *PackedSequence) WithData(data *tensor.Tensor) *PackedSequence {
	receiver("PackedSequence.WithData", p)
	need("PackedSequence.WithData", "data", data)
	if data.Dim() == 0 || data.Size(0) != p.Data.Size(0) {
		fail("PackedSequence.WithData", tensor.ErrShape, fmt.Sprintf("data must have %d rows", p.Data.Size(0)), p.Data, data)
	}
	q := *p
	q.Data = data
	return &q
}

// Unpack returns the sequences in batch order, each (length,
// features…), as torch.nn.utils.rnn.unpack_sequence: one gather
// (Nested), then views of its result.
func (p *PackedSequence) Unpack() []*tensor.Tensor {
	receiver("PackedSequence.Unpack", p)
	return p.Nested().Unbind()
}

// each calls f with every packed row, its sequence and its step, in
// Data's order.
func (p packing) each(f func(row, b, t int)) {
	row := 0
	for t, n := range p.BatchSizes {
		for _, b := range p.SortedIndices[:n] {
			f(row, b, t)
			row++
		}
	}
}

// Pad returns the sequences padded with value to the longest length,
// (seq, batch, features…) or (batch, seq, features…) when batchFirst,
// and their lengths, as torch.nn.utils.rnn.pad_packed_sequence. It runs
// one concatenation and one gather, and is differentiable.
func (p *PackedSequence) Pad(batchFirst bool, value float64) (*tensor.Tensor, []int) {
	receiver("PackedSequence.Pad", p)
	lengths := p.Lengths()
	steps, batch := len(p.BatchSizes), len(lengths)
	rest := p.Data.Shape()[1:]
	fill := tensor.Full(append([]int{1}, rest...), value, tensor.On(p.Data.Device()), tensor.Of(p.Data.DType()))
	src := tensor.Cat([]*tensor.Tensor{p.Data, fill}, 0)
	padRow := p.Data.Size(0)
	idx := make([]int, steps*batch)
	for i := range idx {
		idx[i] = padRow
	}
	packing{p, lengths}.each(func(row, b, t int) {
		if batchFirst {
			idx[b*steps+t] = row
		} else {
			idx[t*batch+b] = row
		}
	})
	out := src.IndexSelect(0, tensor.FromInts(idx, len(idx)).To(p.Data.Device()))
	lead := []int{steps, batch}
	if batchFirst {
		lead = []int{batch, steps}
	}
	return out.Reshape(append(lead, rest...)...), lengths
}

// RunPacked runs a recurrent step over p, time step by time step, and
// returns the outputs as a PackedSequence of p's layout and the final
// states in batch order. s0 are the initial states, each (batch,
// hidden…) in batch order; step
// maps the inputs of the running sequences, (n, features…), and their
// states, (n, hidden…), to the next states, the first of which is the
// output. At step t only the BatchSizes[t] running sequences are
// computed; a sequence's final state is its state after its last step,
// as PyTorch's packed recurrent layers return. It is the loop under
// RNN, LSTM and GRU's ForwardPacked and serves any user cell. It panics
// with ErrArgument for no state, a nil state or step, or a step that
// returns a different number of states, and with ErrShape for a state
// whose first dim is not the batch size.
func RunPacked(p *PackedSequence, s0 []*tensor.Tensor, step func(x *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor) (*PackedSequence, []*tensor.Tensor) {
	const op = "RunPacked"
	receiver(op, p)
	if step == nil {
		fail(op, tensor.ErrArgument, "step is nil")
	}
	if len(s0) == 0 {
		fail(op, tensor.ErrArgument, "a recurrent step needs at least one state")
	}
	return runPacked(p, p.orders(), s0, step)
}

// packedOrders are a PackedSequence's SortedIndices and UnsortedIndices
// as index tensors on its device, uploaded once for every layer of a
// stack.
type packedOrders struct{ sorted, unsorted *tensor.Tensor }

func (p *PackedSequence) orders() packedOrders {
	dev, batch := p.Data.Device(), len(p.SortedIndices)
	return packedOrders{tensor.FromInts(p.SortedIndices, batch).To(dev), tensor.FromInts(p.UnsortedIndices, batch).To(dev)}
}

// runPacked is RunPacked with p's orders given and its arguments checked
// but for the states.
func runPacked(p *PackedSequence, o packedOrders, s0 []*tensor.Tensor, step func(x *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor) (*PackedSequence, []*tensor.Tensor) {
	const op = "RunPacked"
	batch := len(p.SortedIndices)
	s := make([]*tensor.Tensor, len(s0))
	for i, st := range s0 {
		if st == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("state %d is a nil *Tensor", i))
		}
		if st.Dim() == 0 || st.Size(0) != batch {
			fail(op, tensor.ErrShape, fmt.Sprintf("state %d must be (%d batch, hidden…)", i, batch), p.Data, st)
		}
		s[i] = st.IndexSelect(0, o.sorted) // longest first
	}
	outs := make([]*tensor.Tensor, len(p.BatchSizes))
	done := make([][]*tensor.Tensor, len(s)) // finished states, shortest last
	row := 0
	for t, n := range p.BatchSizes {
		if running := s[0].Size(0); n < running {
			for i := range s {
				done[i] = append(done[i], s[i].Narrow(0, n, running-n))
				s[i] = s[i].Narrow(0, 0, n)
			}
		}
		s = step(p.Data.Narrow(0, row, n), s)
		if len(s) != len(s0) {
			fail(op, tensor.ErrArgument, fmt.Sprintf("step returned %d states, want %d", len(s), len(s0)))
		}
		outs[t] = s[0]
		row += n
	}
	finals := make([]*tensor.Tensor, len(s))
	for i := range s {
		parts := append(done[i], s[i])
		slices.Reverse(parts)
		finals[i] = tensor.Cat(parts, 0).IndexSelect(0, o.unsorted)
	}
	return p.WithData(tensor.Cat(outs, 0)), finals
}
