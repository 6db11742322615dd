package nested

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// Map returns f applied to the values: for f that acts on each row
// alone (any elementwise op, such as (*tensor.Tensor).ReLU, or an op over
// the trailing dimensions), the Nested whose components are f of n's. f
// runs once, on the packed rows, so it runs the kernels of one call
// whatever the number of components. It panics with ErrArgument for a
// nil f and ErrShape when f's result does not keep the rows.
func (n *Nested) Map(f func(values *tensor.Tensor) *tensor.Tensor) *Nested {
	n.check("Map")
	if f == nil {
		fail("Map", tensor.ErrArgument, "nil function")
	}
	return n.rows("Map", f(n.values))
}

// Zip returns f applied to the values of n and y, two Nested tensors of
// the same lengths and device: for an elementwise f such as
// (*tensor.Tensor).Add, the componentwise result (trailing dimensions
// broadcast as f broadcasts them). One call of f whatever the number of
// components. It panics with ErrArgument for a nil f or y, ErrShape when
// the lengths differ or f does not keep the rows, ErrDevice for another
// device.
func (n *Nested) Zip(y *Nested, f func(a, b *tensor.Tensor) *tensor.Tensor) *Nested {
	n.check("Zip")
	y.check("Zip")
	if f == nil {
		fail("Zip", tensor.ErrArgument, "nil function")
	}
	n.sameLayout("Zip", y)
	return n.rows("Zip", f(n.values, y.values))
}

// ZipDense returns f applied to the values and a dense tensor y that
// broadcasts against every component: y of the components' shape with a
// first dimension of 1, or of fewer dimensions broadcasting against
// their trailing ones (as a bias [rest...]), meets every row alike; y of
// shape [Len(), 1, rest...] gives component i its slice y[i] (one
// IndexSelect). f is elementwise, as (*tensor.Tensor).Mul. It panics
// with ErrArgument for a nil f or y, ErrShape for a y that broadcasts
// neither way, ErrDevice for another device.
func (n *Nested) ZipDense(y *tensor.Tensor, f func(a, b *tensor.Tensor) *tensor.Tensor) *Nested {
	const op = "ZipDense"
	n.check(op)
	need(op, y)
	if f == nil {
		fail(op, tensor.ErrArgument, "nil function")
	}
	if y.Device() != n.values.Device() {
		fail(op, tensor.ErrDevice, "the dense operand is on another device", n.values, y)
	}
	rank := n.values.Dim()
	switch {
	case y.Dim() == rank+1 && y.Size(0) == n.Len() && y.Size(1) == 1:
		// One row of y per row of n. y may be kept (a parameter), so the
		// index, uploaded afresh in the values' context, decides the
		// context of the rows as it always has; the cached upload is kept
		// and would leave that to y's.
		y = y.Squeeze(1).IndexSelect(0, indexOn(n.values, n.segmentIDs()))
	case y.Dim() == rank && y.Size(0) == 1:
		y = y.Squeeze(0)
	case y.Dim() < rank:
	default:
		fail(op, tensor.ErrShape, fmt.Sprintf("a dense operand must broadcast against components [*, %v] (first dimension 1 or absent) or have shape [%d, 1, ...]",
			n.RestShape(), n.Len()), n.values, y)
	}
	return n.rows(op, f(n.values, y))
}

// MatMul returns each component times w, of shape [k, m], for components
// [len, ..., k]: one batched tensor MatMul of the values, whatever the
// number of components. It panics with ErrArgument for a nil w, ErrShape
// unless w is 2-D, the components have at least 2 dimensions and the
// inner dimensions agree, ErrDevice for another device.
func (n *Nested) MatMul(w *tensor.Tensor) *Nested {
	const op = "MatMul"
	n.check(op)
	need(op, w)
	if w.Dim() != 2 || n.values.Dim() < 2 || w.Size(0) != n.values.Size(n.values.Dim()-1) {
		fail(op, tensor.ErrShape, "want components [len, ..., k] and a weight [k, m]", n.values, w)
	}
	if w.Device() != n.values.Device() {
		fail(op, tensor.ErrDevice, "the weight is on another device", n.values, w)
	}
	return n.rows(op, n.values.MatMul(w))
}

// LayerNorm normalizes every row over its trailing dimensions
// normalizedShape (never the ragged one), as torch.nn.functional.layer_norm
// on each component: (x - mean) / sqrt(var + eps), var biased, then times
// weight and plus bias when not nil (both of shape normalizedShape). A
// fixed chain of kernels on the values. It panics with ErrShape unless
// normalizedShape is non-empty and ends the components' shape without
// reaching the ragged dimension and weight and bias have its shape,
// ErrArgument for a negative or NaN eps.
func (n *Nested) LayerNorm(normalizedShape []int, weight, bias *tensor.Tensor, eps float64) *Nested {
	const op = "LayerNorm"
	n.check(op)
	rest := n.RestShape()
	k := len(normalizedShape)
	if k == 0 || k > len(rest) || !slices.Equal(rest[len(rest)-k:], normalizedShape) {
		fail(op, tensor.ErrShape, fmt.Sprintf("normalizedShape %v must end the non-ragged dimensions %v", normalizedShape, rest), n.values)
	}
	if !(eps >= 0) {
		fail(op, tensor.ErrArgument, fmt.Sprintf("eps %v must be non-negative", eps), n.values)
	}
	for _, p := range []*tensor.Tensor{weight, bias} {
		if p != nil && !slices.Equal(p.Shape(), normalizedShape) {
			fail(op, tensor.ErrShape, fmt.Sprintf("weight and bias must have shape %v", normalizedShape), n.values, p)
		}
	}
	dims := make([]int, k)
	for i := range dims {
		dims[i] = n.values.Dim() - k + i
	}
	centred := n.values.Sub(n.values.MeanDims(dims, true))
	out := centred.Mul(centred.Square().MeanDims(dims, true).AddScalar(eps).Rsqrt())
	if weight != nil {
		out = out.Mul(weight)
	}
	if bias != nil {
		out = out.Add(bias)
	}
	return n.rows(op, out)
}

// Embedding looks up the rows of weight, of shape [vocabulary, d...], at
// the Int32 indices of a Nested: a Nested of components [len, ..., d...]
// (one IndexSelect), as torch.nn.functional.embedding on each component.
// It panics with ErrArgument for a nil argument, ErrDType for indices
// that are not Int32, ErrShape for a 0-d weight, ErrDevice for another
// device and ErrIndex for an index out of range.
func Embedding(weight *tensor.Tensor, indices *Nested) *Nested {
	const op = "Embedding"
	need(op, weight)
	indices.check(op)
	if indices.DType() != tensor.Int32 {
		fail(op, tensor.ErrDType, "indices must be Int32", weight, indices.values)
	}
	if weight.Dim() == 0 {
		fail(op, tensor.ErrShape, "the weight must have a vocabulary dimension", weight, indices.values)
	}
	if weight.Device() != indices.Device() {
		fail(op, tensor.ErrDevice, "the weight and the indices are on different devices", weight, indices.values)
	}
	shape := append(indices.values.Shape(), weight.Shape()[1:]...)
	return indices.rows(op, weight.IndexSelect(0, indices.values.Reshape(-1)).Reshape(shape...))
}

// rows wraps out, computed from n's values, as a Nested of n's layout,
// panicking for op when it lost the rows.
func (n *Nested) rows(op string, out *tensor.Tensor) *Nested {
	if out == nil || out.Dim() == 0 || out.Size(0) != n.values.Size(0) {
		fail(op, tensor.ErrShape, fmt.Sprintf("the result must keep the %d packed rows", n.values.Size(0)), n.values, out)
	}
	return n.with(out)
}

// sameLayout panics for op unless y has n's lengths and device.
func (n *Nested) sameLayout(op string, y *Nested) {
	if !slices.Equal(n.offsets, y.offsets) {
		fail(op, tensor.ErrShape, fmt.Sprintf("lengths %v and %v differ", n.Lengths(), y.Lengths()), n.values, y.values)
	}
	if y.values.Device() != n.values.Device() {
		fail(op, tensor.ErrDevice, "the operands are on different devices", n.values, y.values)
	}
}
