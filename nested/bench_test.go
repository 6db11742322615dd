package nested_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

// benchBatch is 16 components of lengths 8 to 32 (a 4× spread) with 64
// features, as a Nested and as the padded tensor and mask it replaces.
func benchBatch() (x *nested.Nested, padded, mask *T) {
	lengths := make([]int, 16)
	for i := range lengths {
		lengths[i] = 8 + (i*7)%25
	}
	x = nested.FromValues(tensor.Randn([]int{total(lengths), 64}), lengths)
	padded, mask = x.ToPadded(0)
	return x, padded, mask
}

// BenchmarkSoftmaxOverTimeRagged is the ragged softmax along the
// sequence dimension, forward and backward.
func BenchmarkSoftmaxOverTimeRagged(b *testing.B) {
	x, _, _ := benchBatch()
	v := x.Values().SetRequiresGrad(true)
	x = nested.FromValues(v, x.Lengths())
	for b.Loop() {
		tensor.Scope(func() {
			autograd.Backward(x.Softmax(0).Values().Sum())
		})
	}
}

// BenchmarkSoftmaxOverTimePadded is the same softmax done the padded
// way: fill the padding with -Inf and take the softmax of the rectangle.
func BenchmarkSoftmaxOverTimePadded(b *testing.B) {
	_, padded, mask := benchBatch()
	padded.SetRequiresGrad(true)
	m := mask.Unsqueeze(2).Expand(padded.Shape()...)
	for b.Loop() {
		tensor.Scope(func() {
			y := padded.MaskedFill(m.LogicalNot(), math.Inf(-1)).Softmax(1).MaskedFill(m.LogicalNot(), 0).Sum()
			autograd.Backward(y)
		})
	}
}

// BenchmarkMeanOverTimeRagged is the ragged mean along the sequence
// dimension, forward and backward.
func BenchmarkMeanOverTimeRagged(b *testing.B) {
	x, _, _ := benchBatch()
	v := x.Values().SetRequiresGrad(true)
	x = nested.FromValues(v, x.Lengths())
	for b.Loop() {
		tensor.Scope(func() { autograd.Backward(x.Mean().Sum()) })
	}
}

// BenchmarkMeanOverTimePadded is the masked mean of the padded batch.
func BenchmarkMeanOverTimePadded(b *testing.B) {
	x, padded, mask := benchBatch()
	padded.SetRequiresGrad(true)
	w := mask.Cast(tensor.Float32).Unsqueeze(2)
	lengths := make([]float32, x.Len())
	for i, l := range x.Lengths() {
		lengths[i] = float32(l)
	}
	n := tensor.New(lengths, x.Len(), 1)
	for b.Loop() {
		tensor.Scope(func() { autograd.Backward(padded.Mul(w).SumDims([]int{1}, false).Div(n).Sum()) })
	}
}
