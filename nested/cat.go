package nested

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// Cat concatenates Nested tensors of one dtype and device component by
// component along dim of the components' shape: along the ragged
// dimension 0, component i of the result is component i of every ns[k]
// one after the other (so all have the same number of components and
// trailing dimensions; a tensor Cat of the values and one IndexSelect);
// along another dim, all must have the same lengths and agree in the
// other dimensions (a tensor Cat of the values). The kernels depend on
// len(ns), never on the number of components. It panics with
// ErrArgument for no or a nil Nested, ErrShape for mismatched
// components, ErrIndex for a bad dim, ErrDType and ErrDevice for mixed
// dtypes and devices.
func Cat(ns []*Nested, dim int) *Nested {
	const op = "Cat"
	vals := valuesOf(op, ns)
	d := ns[0].normDim(op, dim)
	if d != 0 {
		for _, m := range ns[1:] {
			ns[0].sameLayout(op, m)
		}
		return ns[0].with(tensor.Cat(vals, d))
	}
	b := ns[0].Len()
	lengths := make([]int, b)
	for k, m := range ns {
		if m.Len() != b || !slices.Equal(m.RestShape(), ns[0].RestShape()) {
			fail(op, tensor.ErrShape, fmt.Sprintf("Nested %d has %d components of [*, %v]; want %d of [*, %v]",
				k, m.Len(), m.RestShape(), b, ns[0].RestShape()), ns[0].values, m.values)
		}
		for i := range b {
			lengths[i] += m.offsets[i+1] - m.offsets[i]
		}
	}
	// Row r of the result comes from row rows[r] of the stacked values.
	base := make([]int, len(ns))
	for k := 1; k < len(ns); k++ {
		base[k] = base[k-1] + ns[k-1].values.Size(0)
	}
	rows := make([]int32, 0, base[len(ns)-1]+ns[len(ns)-1].values.Size(0))
	for i := range b {
		for k, m := range ns {
			for r := m.offsets[i]; r < m.offsets[i+1]; r++ {
				rows = append(rows, int32(base[k]+r))
			}
		}
	}
	stacked := tensor.Cat(vals, 0)
	return FromValues(stacked.IndexSelect(0, indexOn(stacked, rows)), lengths)
}

// CatComponents returns the components of every ns[k] in order, as one
// Nested: a tensor Cat of the values (the kernels depend on len(ns),
// never on the number of components). The Nested tensors must share
// dtype, device and trailing dimensions; it panics with a *tensor.Error
// otherwise, or for no or a nil Nested.
func CatComponents(ns []*Nested) *Nested {
	const op = "CatComponents"
	vals := valuesOf(op, ns)
	var lengths []int
	for k, m := range ns {
		if !slices.Equal(m.RestShape(), ns[0].RestShape()) {
			fail(op, tensor.ErrShape, fmt.Sprintf("Nested %d has components [*, %v]; want [*, %v]", k, m.RestShape(), ns[0].RestShape()), ns[0].values, m.values)
		}
		lengths = append(lengths, m.Lengths()...)
	}
	return FromValues(tensor.Cat(vals, 0), lengths)
}

// valuesOf checks ns for op (at least one, none nil, one dtype and
// device) and returns their values.
func valuesOf(op string, ns []*Nested) []*tensor.Tensor {
	if len(ns) == 0 {
		fail(op, tensor.ErrArgument, "no Nested tensors")
	}
	vals := make([]*tensor.Tensor, len(ns))
	for k, m := range ns {
		m.check(op)
		sameKind(op, ns[0].values, m.values, fmt.Sprintf("Nested %d", k))
		vals[k] = m.values
	}
	return vals
}
