package nested

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// A Nested is a batch of tensors (components) that agree in every
// dimension but the first, which is ragged: component i has shape
// [Lengths()[i], rest...]. The components are stored packed, row after
// row, in one tensor of shape [sum of lengths, rest...] (Values) on one
// device; Offsets()[i] is the row where component i starts.
//
// A Nested is immutable: every op returns a new one. Ops record autograd
// through Values like any tensor op.
type Nested struct {
	values  *tensor.Tensor
	offsets []int     // len = components + 1; offsets[0] = 0, offsets[B] = rows of values
	seg     *segIndex // the component id of every row, shared by the Nesteds of these offsets
}

// FromValues wraps values, of shape [sum of lengths, rest...], as the
// packed rows of components of the given lengths, without copying. It
// panics with a *tensor.Error: ErrArgument for a nil values, no lengths
// or a negative length, ErrShape when values is 0-d or the lengths do not
// sum to values' first dimension.
func FromValues(values *tensor.Tensor, lengths []int) *Nested {
	const op = "FromValues"
	need(op, values)
	if values.Dim() == 0 {
		fail(op, tensor.ErrShape, "values must have at least one dimension (the packed rows)", values)
	}
	offsets := offsetsOf(op, lengths, values)
	if offsets[len(lengths)] != values.Size(0) {
		fail(op, tensor.ErrShape, fmt.Sprintf("lengths sum to %d but values has %d rows", offsets[len(lengths)], values.Size(0)), values)
	}
	return &Nested{values: values, offsets: offsets, seg: &segIndex{}}
}

// FromTensors packs ts, tensors of one dtype on one device that agree in
// every dimension but the first, into a Nested: one copy of each, by
// tensor.Cat, the one op whose kernels grow with the number of
// components (FromValues and FromPadded build a batch in a fixed number
// of kernels). It panics with a *tensor.Error: ErrArgument for no tensors
// or a nil one, ErrShape for a 0-d one or trailing dimensions that differ,
// ErrDType and ErrDevice for mixed dtypes and devices.
func FromTensors(ts []*tensor.Tensor) *Nested {
	const op = "FromTensors"
	if len(ts) == 0 {
		fail(op, tensor.ErrArgument, "no components")
	}
	need(op, ts...)
	lengths := make([]int, len(ts))
	for i, t := range ts {
		if t.Dim() == 0 {
			fail(op, tensor.ErrShape, fmt.Sprintf("component %d is 0-d; components need a first (ragged) dimension", i), t)
		}
		sameKind(op, ts[0], t, fmt.Sprintf("component %d", i))
		if !slices.Equal(t.Shape()[1:], ts[0].Shape()[1:]) {
			fail(op, tensor.ErrShape, fmt.Sprintf("component %d differs from component 0 in a dimension other than the first", i), ts[0], t)
		}
		lengths[i] = t.Size(0)
	}
	return FromValues(tensor.Cat(ts, 0), lengths)
}

// FromPadded packs the first lengths[i] rows of padded[i], padded being
// of shape [len(lengths), L, rest...] with every length at most L: the
// inverse of ToPadded. One IndexSelect, whatever the number of
// components. It panics with a *tensor.Error: ErrArgument for a nil
// padded, no lengths or a negative length, ErrShape when padded has
// fewer than 2 dimensions, its first is not len(lengths) or a length
// exceeds its second.
func FromPadded(padded *tensor.Tensor, lengths []int) *Nested {
	const op = "FromPadded"
	need(op, padded)
	offsets := offsetsOf(op, lengths, padded)
	if padded.Dim() < 2 || padded.Size(0) != len(lengths) {
		fail(op, tensor.ErrShape, fmt.Sprintf("padded must have shape [%d, max length, ...]", len(lengths)), padded)
	}
	width := padded.Size(1)
	rows := make([]int32, 0, offsets[len(lengths)])
	for b, n := range lengths {
		if n > width {
			fail(op, tensor.ErrShape, fmt.Sprintf("length %d of component %d exceeds the padded length %d", n, b, width), padded)
		}
		for t := range n {
			rows = append(rows, int32(b*width+t))
		}
	}
	flat := padded.Reshape(append([]int{len(lengths) * width}, padded.Shape()[2:]...)...)
	return FromValues(flat.IndexSelect(0, indexOn(padded, rows)), lengths)
}

// ToPadded returns the components as one tensor of shape [Len(),
// MaxLength(), rest...], each component followed by rows of pad, and the
// Bool mask of shape [Len(), MaxLength()] that is true where a row holds
// data. A Cat and an IndexSelect, whatever the number of components. It
// panics with ErrArgument when pad does not fit the dtype.
func (n *Nested) ToPadded(pad float64) (padded, mask *tensor.Tensor) {
	n.check("ToPadded")
	b, width := n.Len(), n.MaxLength()
	rest := n.RestShape()
	padRow := tensor.Full(append([]int{1}, rest...), pad, tensor.Like(n.values))
	withPad := tensor.Cat([]*tensor.Tensor{n.values, padRow}, 0)
	rows := make([]int32, b*width)
	valid := make([]bool, b*width)
	for i := range b {
		for t := range width {
			rows[i*width+t] = int32(n.values.Size(0)) // the pad row
			if t < n.offsets[i+1]-n.offsets[i] {
				rows[i*width+t], valid[i*width+t] = int32(n.offsets[i]+t), true
			}
		}
	}
	padded = withPad.IndexSelect(0, indexOn(n.values, rows)).Reshape(append([]int{b, width}, rest...)...)
	mask = tensor.From(valid, []int{b, width}, tensor.On(n.values.Device()), tensor.In(n.values.Context()))
	return padded, mask
}

// Unbind returns the components, views of Values (no copy, no kernel).
func (n *Nested) Unbind() []*tensor.Tensor {
	n.check("Unbind")
	out := make([]*tensor.Tensor, n.Len())
	for i := range out {
		out[i] = n.values.Narrow(0, n.offsets[i], n.offsets[i+1]-n.offsets[i])
	}
	return out
}

// Values returns the packed rows, of shape [sum of lengths, rest...].
func (n *Nested) Values() *tensor.Tensor { n.check("Values"); return n.values }

// Len returns the number of components.
func (n *Nested) Len() int { n.check("Len"); return len(n.offsets) - 1 }

// Offsets returns a copy of the row offsets: component i is rows
// Offsets()[i] to Offsets()[i+1] of Values; Len()+1 entries.
func (n *Nested) Offsets() []int { n.check("Offsets"); return slices.Clone(n.offsets) }

// Lengths returns the components' first dimensions.
func (n *Nested) Lengths() []int {
	n.check("Lengths")
	out := make([]int, n.Len())
	for i := range out {
		out[i] = n.offsets[i+1] - n.offsets[i]
	}
	return out
}

// MaxLength returns the longest component's first dimension.
func (n *Nested) MaxLength() int {
	n.check("MaxLength")
	m := 0
	for i := range n.Len() {
		m = max(m, n.offsets[i+1]-n.offsets[i])
	}
	return m
}

// RestShape returns the dimensions every component shares (all but the
// first).
func (n *Nested) RestShape() []int { n.check("RestShape"); return slices.Clone(n.values.Shape()[1:]) }

// Dim returns the components' number of dimensions (at least 1).
func (n *Nested) Dim() int { n.check("Dim"); return n.values.Dim() }

// DType returns the dtype of the values.
func (n *Nested) DType() tensor.DType { n.check("DType"); return n.values.DType() }

// Device returns the device of the values.
func (n *Nested) Device() tensor.Device { n.check("Device"); return n.values.Device() }

// String describes n: its lengths, the shared dimensions, dtype and
// device, as "nested.Nested(lengths [2 1 3], rest [2], float32 on cpu)";
// the values are Values' to print.
func (n *Nested) String() string {
	if n == nil || n.values == nil {
		return "nested.Nested(nil)"
	}
	return fmt.Sprintf("nested.Nested(lengths %v, rest %v, %v on %v)", n.Lengths(), n.RestShape(), n.DType(), n.Device())
}

// with returns a Nested of n's layout over values (which must have n's
// number of rows).
func (n *Nested) with(values *tensor.Tensor) *Nested {
	return &Nested{values: values, offsets: n.offsets, seg: n.seg}
}

// check panics with ErrArgument for a nil or zero Nested.
func (n *Nested) check(op string) {
	if n == nil || n.values == nil {
		fail(op, tensor.ErrArgument, "the receiver is a nil or zero *Nested; make one with FromTensors, FromPadded or FromValues")
	}
}

// offsetsOf returns the offsets of lengths, panicking for op when there
// are none, one is negative or their sum overflows.
func offsetsOf(op string, lengths []int, ts ...*tensor.Tensor) []int {
	if len(lengths) == 0 {
		fail(op, tensor.ErrArgument, "no lengths (a Nested has at least one component)", ts...)
	}
	offsets := make([]int, len(lengths)+1)
	for i, l := range lengths {
		if l < 0 || l > math.MaxInt32 || offsets[i] > math.MaxInt32-l {
			fail(op, tensor.ErrArgument, fmt.Sprintf("length %d of component %d is negative or too large", l, i), ts...)
		}
		offsets[i+1] = offsets[i] + l
	}
	return offsets
}

// indexOn uploads rows as a 1-D Int32 tensor on like's device and in its
// context.
func indexOn(like *tensor.Tensor, rows []int32) *tensor.Tensor {
	return tensor.From(rows, []int{len(rows)}, tensor.On(like.Device()), tensor.In(like.Context()))
}

// sameKind panics for op unless t has ref's dtype and device.
func sameKind(op string, ref, t *tensor.Tensor, what string) {
	if t.Device() != ref.Device() {
		fail(op, tensor.ErrDevice, what+" is on another device", ref, t)
	}
	if t.DType() != ref.DType() {
		fail(op, tensor.ErrDType, what+" has another dtype", ref, t)
	}
}

// need panics with ErrArgument for op when a tensor is nil.
func need(op string, ts ...*tensor.Tensor) {
	for i, t := range ts {
		if t == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("tensor argument %d is nil", i+1))
		}
	}
}

// fail panics with a *tensor.Error for the nested op, naming the
// operands' shapes, dtypes and devices.
func fail(op string, kind error, detail string, ts ...*tensor.Tensor) {
	panic(tensor.NewError("nested."+op, kind, detail, ts...))
}
