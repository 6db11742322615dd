package nested

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// Sum returns the sum of each component over its ragged dimension, a
// dense tensor of shape [Len(), rest...] (zero for an empty component):
// one IndexAdd of the values by component id, whatever the number of
// components.
func (n *Nested) Sum() *tensor.Tensor {
	n.check("Sum")
	return n.segmentSum(n.values)
}

// Mean returns the mean of each component over its ragged dimension, of
// shape [Len(), rest...]: Sum divided by the lengths (NaN for an empty
// component, as torch.mean of an empty tensor). Float dtypes only.
func (n *Nested) Mean() *tensor.Tensor {
	n.check("Mean")
	if !floating(n.values) {
		fail("Mean", tensor.ErrDType, "the mean needs a float dtype", n.values)
	}
	lengths := make([]float64, n.Len())
	for i, l := range n.Lengths() {
		lengths[i] = float64(l)
	}
	shape := append([]int{n.Len()}, ones(n.values.Dim()-1)...)
	return n.Sum().Div(tensor.From(lengths, shape, tensor.Like(n.values)))
}

// Max returns the largest entry of each component over its ragged
// dimension, of shape [Len(), rest...]; a NaN wins, and the gradient is
// shared among ties, as torch.amax's. One tensor IndexAmax of the values
// by component id into -Inf (the segment max), whatever the number of
// components. It panics with ErrArgument when a component is empty (a
// max of nothing) and ErrDType for a Bool dtype.
func (n *Nested) Max() *tensor.Tensor {
	n.check("Max")
	if n.values.DType() == tensor.Bool {
		fail("Max", tensor.ErrDType, "the max needs a number dtype", n.values)
	}
	for i, l := range n.Lengths() {
		if l == 0 {
			fail("Max", tensor.ErrArgument, fmt.Sprintf("component %d is empty: the max of nothing is undefined", i), n.values)
		}
	}
	return n.segmentMaxBy(n.values, n.segments())
}

// segmentMaxBy is the max over each component of v (n's layout) whose
// rows belong to the components seg: the lowest value of the dtype for an
// empty component.
func (n *Nested) segmentMaxBy(v, seg *tensor.Tensor) *tensor.Tensor {
	lowest := math.Inf(-1)
	if v.DType() == tensor.Int32 {
		lowest = math.MinInt32
	}
	return tensor.Full(append([]int{n.Len()}, v.Shape()[1:]...), lowest, tensor.Like(v)).IndexAmax(0, seg, v)
}

// SumDims sums every component over dims, numbered in a component's
// shape (1 is the first non-ragged dimension; negative counts from the
// end), keeping them as size 1 when keepDim: the tensor SumDims of the
// values. It panics with ErrArgument for the ragged dimension 0 (use Sum)
// and ErrIndex for a dim out of range.
func (n *Nested) SumDims(dims []int, keepDim bool) *Nested {
	return n.rows("SumDims", n.values.SumDims(n.restDims("SumDims", dims), keepDim))
}

// MeanDims is SumDims for the mean.
func (n *Nested) MeanDims(dims []int, keepDim bool) *Nested {
	return n.rows("MeanDims", n.values.MeanDims(n.restDims("MeanDims", dims), keepDim))
}

// MaxDims is SumDims for the max (tensor Amax).
func (n *Nested) MaxDims(dims []int, keepDim bool) *Nested {
	return n.rows("MaxDims", n.values.Amax(n.restDims("MaxDims", dims), keepDim))
}

// Softmax returns the softmax of every component along dim of its shape:
// along the ragged dimension 0, each component's rows sum to one (a
// fixed chain: the segment max of the detached values by IndexAmax for
// stability, IndexSelect, Sub, Exp, the segment sum by IndexAdd,
// IndexSelect and Div); along another dim it is
// the tensor Softmax of the values. It panics with ErrIndex for a dim out
// of range and ErrDType for a non-float dtype.
func (n *Nested) Softmax(dim int) *Nested { return n.softmax("Softmax", dim, false) }

// LogSoftmax is Softmax's logarithm, computed stably (x - max - log of
// the sum of exponentials).
func (n *Nested) LogSoftmax(dim int) *Nested { return n.softmax("LogSoftmax", dim, true) }

func (n *Nested) softmax(op string, dim int, log bool) *Nested {
	n.check(op)
	if !floating(n.values) {
		fail(op, tensor.ErrDType, "softmax needs a float dtype", n.values)
	}
	d := n.normDim(op, dim)
	if d != 0 {
		if log {
			return n.with(n.values.LogSoftmax(d))
		}
		return n.with(n.values.Softmax(d))
	}
	if n.values.Size(0) == 0 {
		return n.with(n.values.Exp())
	}
	seg := n.segments()
	shifted := n.values.Sub(n.segmentMaxBy(n.values.Detach(), seg).IndexSelect(0, seg))
	exps := shifted.Exp()
	sums := n.segmentSumBy(exps, seg).IndexSelect(0, seg)
	if log {
		return n.with(shifted.Sub(sums.Log()))
	}
	return n.with(exps.Div(sums))
}

// segmentSum sums v (n's layout) over each component: [Len(), rest...].
func (n *Nested) segmentSum(v *tensor.Tensor) *tensor.Tensor {
	return n.segmentSumBy(v, n.segments())
}

func (n *Nested) segmentSumBy(v, seg *tensor.Tensor) *tensor.Tensor {
	zeros := tensor.Zeros(append([]int{n.Len()}, v.Shape()[1:]...), tensor.Like(v))
	return zeros.IndexAdd(0, seg, v)
}

// restDims maps dims of a component's shape to dims of the values,
// panicking for op at the ragged dimension or one out of range.
func (n *Nested) restDims(op string, dims []int) []int {
	n.check(op)
	out := make([]int, len(dims))
	for i, d := range dims {
		if out[i] = n.normDim(op, d); out[i] == 0 {
			fail(op, tensor.ErrArgument, "dim 0 is the ragged dimension: reduce over it with Sum, Mean or Max", n.values)
		}
	}
	return out
}

// normDim checks dim against the components' rank (negative counts from
// the end).
func (n *Nested) normDim(op string, dim int) int {
	r := n.values.Dim()
	if dim < -r || dim >= r {
		fail(op, tensor.ErrIndex, fmt.Sprintf("dim %d out of range for components of %d dims", dim, r), n.values)
	}
	if dim < 0 {
		dim += r
	}
	return dim
}

func floating(t *tensor.Tensor) bool {
	return t.DType() == tensor.Float32 || t.DType() == tensor.Float64
}

func ones(k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = 1
	}
	return out
}
