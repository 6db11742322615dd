package nested

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// Packed holds the rows of a Nested step-major, as PyTorch's
// PackedSequence does: first row 0 of every component, then row 1 of
// every component that has one, and so on. Within a step the components
// come longest first (SortedIndices), so the components still running
// at step t are always the first BatchSizes[t]: a recurrent layer keeps
// a state of [Len(), ...] rows in sorted order and, at step t, updates
// its first BatchSizes[t] rows from Step(t); the kernels per step do
// not depend on the number of components, and nothing is padded.
type Packed struct {
	// Data is the rows, [sum of lengths, rest...], step after step.
	Data *tensor.Tensor
	// BatchSizes[t] is the number of components longer than t; there are
	// MaxLength steps, and the sizes never grow.
	BatchSizes []int
	// SortedIndices lists the components longest first (ties in their
	// order); UnsortedIndices is its inverse: component i is the
	// UnsortedIndices[i]-th in a step.
	SortedIndices, UnsortedIndices []int
}

// Pack returns n's rows step-major (one IndexSelect).
func (n *Nested) Pack() *Packed {
	n.check("Pack")
	lengths := n.Lengths()
	sorted := make([]int, len(lengths))
	for i := range sorted {
		sorted[i] = i
	}
	slices.SortStableFunc(sorted, func(a, b int) int { return lengths[b] - lengths[a] })
	p := &Packed{BatchSizes: make([]int, n.MaxLength()), SortedIndices: sorted, UnsortedIndices: inverse(sorted)}
	for _, l := range lengths {
		for t := range l {
			p.BatchSizes[t]++
		}
	}
	rows := p.jaggedRows(n.offsets)
	p.Data = n.values.IndexSelect(0, indexOn(n.values, rows))
	return p
}

// Step returns the rows of step t, a view of Data of BatchSizes[t] rows
// (component SortedIndices[j] in row j). It panics with ErrIndex for a t
// out of range.
func (p *Packed) Step(t int) *tensor.Tensor {
	p.check("Step")
	if t < 0 || t >= len(p.BatchSizes) {
		fail("Step", tensor.ErrIndex, fmt.Sprintf("step %d of %d", t, len(p.BatchSizes)), p.Data)
	}
	start := 0
	for _, b := range p.BatchSizes[:t] {
		start += b
	}
	return p.Data.Narrow(0, start, p.BatchSizes[t])
}

// Unpack returns the Nested whose Pack is p (one IndexSelect); Data may
// be any tensor computed row by row from a Pack, such as a recurrent
// layer's outputs. It panics with ErrArgument when the fields do not
// describe a packing (sizes that grow, indices that are not a
// permutation or its inverse) and ErrShape when Data's rows do not match.
func (p *Packed) Unpack() *Nested {
	p.check("Unpack")
	lengths := make([]int, len(p.SortedIndices))
	for _, b := range p.BatchSizes {
		for j := range b {
			lengths[p.SortedIndices[j]]++
		}
	}
	offsets := offsetsOf("Unpack", lengths, p.Data)
	if p.Data.Size(0) != offsets[len(lengths)] {
		fail("Unpack", tensor.ErrShape, fmt.Sprintf("BatchSizes sum to %d rows but Data has %d", offsets[len(lengths)], p.Data.Size(0)), p.Data)
	}
	// Data row k holds jagged row rows[k]; invert that map to gather.
	rows := p.jaggedRows(offsets)
	from := make([]int32, len(rows))
	for k, r := range rows {
		from[r] = int32(k)
	}
	return FromValues(p.Data.IndexSelect(0, indexOn(p.Data, from)), lengths)
}

// jaggedRows returns, for each row of the step-major layout, the row of
// the jagged layout with offsets that it holds.
func (p *Packed) jaggedRows(offsets []int) []int32 {
	rows := make([]int32, 0, offsets[len(offsets)-1])
	for t, b := range p.BatchSizes {
		for j := range b {
			rows = append(rows, int32(offsets[p.SortedIndices[j]]+t))
		}
	}
	return rows
}

// check panics with ErrArgument unless p describes a packing.
func (p *Packed) check(op string) {
	if p == nil || p.Data == nil {
		fail(op, tensor.ErrArgument, "a nil *Packed or one without Data; make one with Nested.Pack")
	}
	b := len(p.SortedIndices)
	seen := make([]bool, b)
	for _, i := range p.SortedIndices {
		if i < 0 || i >= b || seen[i] {
			fail(op, tensor.ErrArgument, fmt.Sprintf("SortedIndices %v is not a permutation", p.SortedIndices), p.Data)
		}
		seen[i] = true
	}
	if b == 0 || !slices.Equal(p.UnsortedIndices, inverse(p.SortedIndices)) {
		fail(op, tensor.ErrArgument, "UnsortedIndices must be the inverse of SortedIndices, of at least one component", p.Data)
	}
	prev := b
	for t, s := range p.BatchSizes {
		if s < 1 || s > prev {
			fail(op, tensor.ErrArgument, fmt.Sprintf("BatchSizes[%d] = %d: sizes must be positive and never grow, at most %d", t, s, b), p.Data)
		}
		prev = s
	}
	if p.Data.Dim() == 0 {
		fail(op, tensor.ErrShape, "Data must have a row dimension", p.Data)
	}
}

// inverse returns the inverse of the permutation perm.
func inverse(perm []int) []int {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[p] = i
	}
	return out
}
