package cpu

import "slices"

// A Layout describes a strided view of a flat buffer: element
// (i0, i1, ...) of the view lives at Offset + i0*Strides[0] + i1*Strides[1] + ...
// A stride of 0 broadcasts a dimension. A 0-d view has empty Shape and Strides.
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// Contiguous returns the row-major layout of shape at offset 0.
func Contiguous(shape ...int) Layout {
	return Layout{Shape: shape, Strides: ContiguousStrides(shape)}
}

// ContiguousStrides returns the row-major strides of shape, counting a
// size-0 dimension as 1 as PyTorch does (an empty layout has no stride
// 0).
func ContiguousStrides(shape []int) []int {
	strides := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= max(shape[i], 1)
	}
	return strides
}

// NumElements returns the product of shape (1 for a 0-d shape).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// IsContiguous reports whether l is row-major with no gaps; dimensions of
// size 1 may have any stride, and an empty layout is contiguous.
func (l Layout) IsContiguous() bool {
	if slices.Contains(l.Shape, 0) {
		return true
	}
	s := 1
	for i := len(l.Shape) - 1; i >= 0; i-- {
		if l.Shape[i] != 1 && l.Strides[i] != s {
			return false
		}
		s *= l.Shape[i]
	}
	return true
}

// NumElements returns the number of elements the layout addresses.
func (l Layout) NumElements() int { return NumElements(l.Shape) }
