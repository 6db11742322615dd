package cpu

import "github.com/tessera-ml/tessera/internal/layout"

// A Layout describes a strided view of a flat buffer: element
// (i0, i1, ...) of the view lives at Offset + i0*Strides[0] + i1*Strides[1] + ...
// A stride of 0 broadcasts a dimension. A 0-d view has empty Shape and Strides.
// Its arithmetic is package internal/layout's, shared with kernels/wgsl
// and tensor.
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// Contiguous returns the row-major layout of shape at offset 0, counting
// a size-0 dimension as 1 in the strides as PyTorch does (an empty
// layout has no stride 0).
func Contiguous(shape ...int) Layout {
	return Layout{Shape: shape, Strides: layout.ContiguousStrides(shape)}
}

// IsContiguous reports whether l is row-major with no gaps; dimensions of
// size 1 may have any stride, and an empty layout is contiguous.
func (l Layout) IsContiguous() bool { return layout.IsContiguous(l.Shape, l.Strides) }

// NumElements returns the number of elements the layout addresses.
func (l Layout) NumElements() int { return layout.Numel(l.Shape) }
