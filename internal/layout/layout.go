// Package layout is the arithmetic of strided layouts that cpu,
// kernels/wgsl, tensor and the reference harness (internal/torchref)
// share: element counts, row-major strides, contiguity and the promotion
// of 0-d operands. It imports nothing from the module, so that the
// leaves may import it: ci/test.sh allows exactly internal/layout (and,
// in tests, internal/approx) into cpu, device and kernels/wgsl, and
// ci/dupcheck_test.go fails when one of these helpers is defined again
// elsewhere.
//
// The leaves keep their own Layout types (cpu.Layout, wgsl.Layout), with
// the same fields as Layout; the generic functions take any of them.
package layout

import "slices"

// A Layout is a strided view of a flat buffer: element (i0, i1, ...)
// lives at Offset + i0·Strides[0] + i1·Strides[1] + .... A stride of 0
// broadcasts a dimension; a 0-d view has empty Shape and Strides.
type Layout struct {
	Shape   []int
	Strides []int
	Offset  int
}

// Strided is any layout type with Layout's fields (cpu.Layout,
// wgsl.Layout).
type Strided interface {
	~struct {
		Shape   []int
		Strides []int
		Offset  int
	}
}

// Numel returns the number of elements of shape: its product, 1 for a
// 0-d shape.
func Numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// ContiguousStrides returns the row-major strides of shape. As in
// PyTorch, a size-0 dimension counts as 1, so that an empty layout has
// no stride 0 (which in-place ops read as an expanded view).
func ContiguousStrides(shape []int) []int {
	return FillContiguousStrides(make([]int, len(shape)), shape)
}

// FillContiguousStrides writes shape's row-major strides into strides
// (of len(shape)) and returns it.
func FillContiguousStrides(strides, shape []int) []int {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = s
		s *= max(shape[i], 1)
	}
	return strides
}

// IsContiguous reports whether shape and strides are row-major without
// gaps. Dimensions of size 1 may have any stride, and an empty layout is
// contiguous, as in PyTorch.
func IsContiguous(shape, strides []int) bool {
	if slices.Contains(shape, 0) {
		return true
	}
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

// One1D turns a 0-d layout into the 1-D layout of shape [1] at the same
// offset; other layouts are returned as they are.
func One1D[L Strided](l L) L {
	v := Layout(l)
	if len(v.Shape) > 0 {
		return l
	}
	return L(Layout{Shape: []int{1}, Strides: []int{0}, Offset: v.Offset})
}

// Promote0D makes the operands of the 1-D-index kernels (index_select,
// index_add) 1-D when either is 0-d, with dim 0; otherwise it returns
// them and dim as they are.
func Promote0D[L Strided](a, b L, dim int) (L, L, int) {
	if len(Layout(a).Shape) == 0 || len(Layout(b).Shape) == 0 {
		return One1D(a), One1D(b), 0
	}
	return a, b, dim
}
