package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

// PackNested packs the components of x, sequences (length, features…),
// as PackSequence(x.Unbind()) does, in one gather of x's packed values
// whatever the number of sequences: the way from a ragged batch
// (package nested) into a recurrent layer's ForwardPacked. It is
// differentiable. It panics with ErrArgument for a nil x or an empty
// component (a packed sequence has at least one step).
func PackNested(x *nested.Nested) *PackedSequence {
	const op = "PackNested"
	if x == nil {
		fail(op, tensor.ErrArgument, "x is a nil *nested.Nested")
	}
	lengths, offsets := x.Lengths(), x.Offsets()
	for b, n := range lengths {
		if n < 1 {
			fail(op, tensor.ErrArgument, fmt.Sprintf("sequence %d is empty", b), x.Values())
		}
	}
	p := newPacking(lengths)
	p.Data = x.Values().IndexSelect(0, p.rows(x.Device(), func(b, t int) int { return offsets[b] + t }))
	return p.PackedSequence
}

// Nested returns the sequences of p in batch order as a nested.Nested,
// (length, features…) each, packed sequence after sequence: one gather,
// whatever the number of sequences, and differentiable (the inverse of
// PackNested).
func (p *PackedSequence) Nested() *nested.Nested {
	receiver("PackedSequence.Nested", p)
	lengths := p.Lengths()
	offsets := make([]int, len(lengths)+1)
	for b, n := range lengths {
		offsets[b+1] = offsets[b] + n
	}
	// Row offsets[b]+t of the result is step t of sequence b.
	idx := make([]int, offsets[len(lengths)])
	packing{p, lengths}.each(func(row, b, t int) { idx[offsets[b]+t] = row })
	return nested.FromValues(p.Data.IndexSelect(0, tensor.FromInts(idx, len(idx)).To(p.Data.Device())), lengths)
}
