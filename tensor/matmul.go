package tensor

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tessera-ml/tessera/internal/layout"
)

// MatMul returns the matrix product of a and b with torch.matmul's rules:
// 1-D·1-D is a dot product (0-d); a 1-D operand is treated as a row
// (left) or column (right) vector whose dim is removed from the result;
// 2-D·2-D is the matrix product; with more dims, the leading (batch)
// dims broadcast. a (…, M, K) · b (…, K, N) → (…, M, N). Integer inputs
// are computed in Float32.
func (a *Tensor) MatMul(b *Tensor) *Tensor {
	defer allocatedFor("MatMul")
	a.nonNil("MatMul", 1, b)
	a.storage("MatMul")
	b.storage("MatMul")
	if a.Device() != b.Device() {
		fail("MatMul", ErrDevice, "operands are on different devices", a, b)
	}
	if a.Dim() == 0 || b.Dim() == 0 {
		fail("MatMul", ErrShape, "both arguments need at least 1 dimension", a, b)
	}
	dt := floatType(PromoteTypes(a.dtype, b.dtype))
	a, b = a.Cast(dt), b.Cast(dt)
	// The shapes a and b take as matrices: a 1-D a is a row, a 1-D b a
	// column.
	ash, bsh := a.shape, b.shape
	if a.Dim() == 1 {
		ash = []int{1, a.shape[0]}
	}
	if b.Dim() == 1 {
		bsh = []int{b.shape[0], 1}
	}
	m, k := ash[len(ash)-2], ash[len(ash)-1]
	k2, n := bsh[len(bsh)-2], bsh[len(bsh)-1]
	if k != k2 {
		fail("MatMul", ErrShape, fmt.Sprintf("inner dimensions differ: %d and %d", k, k2), a, b)
	}
	batch, ok := broadcastBatch(ash[:len(ash)-2], bsh[:len(bsh)-2])
	if !ok {
		fail("MatMul", ErrShape, "batch dimensions cannot be broadcast together", a, b)
	}
	outShape := append(clone(batch), m, n)
	shapeNumel("MatMul", outShape, a, b)
	if len(batch) == 0 {
		return matmulFlat(a, b, m, k, n)
	}
	nb := layout.Numel(batch)
	// Each operand becomes (nb, ·, ·) through as few recorded views as
	// possible.
	aa, bb := a, b
	if a.Dim() == 1 {
		aa = a.Unsqueeze(0)
	}
	if b.Dim() == 1 {
		bb = b.Unsqueeze(1)
	}
	a3 := aa.Expand(append(clone(batch), m, k)...).reshapeTo(nb, m, k)
	b3 := bb.Expand(append(clone(batch), k, n)...).reshapeTo(nb, k, n)
	out := bmm(a3, b3)
	shape := clone(batch)
	if a.Dim() > 1 {
		shape = append(shape, m)
	}
	if b.Dim() > 1 {
		shape = append(shape, n)
	}
	return out.reshapeTo(shape...)
}

// matmulFlat is MatMul for operands of at most 2 dims (no batch): the
// product of a as an (m,k) matrix and b as a (k,n) one, of shape
// (m, n) without the dims of 1-D operands. The backend sees 3-D
// layouts of the operands' own storage, made here without records or
// references; the node records a and b as they are, and the rule
// handles their 1-D cases. A matrix-vector product of a small RNN thus
// costs one tensor and one node rather than four of each.
func matmulFlat(a, b *Tensor, m, k, n int) *Tensor {
	var dims [2]int
	shape := dims[:0]
	if a.Dim() > 1 {
		shape = append(shape, m)
	}
	if b.Dim() > 1 {
		shape = append(shape, n)
	}
	ins := []*Tensor{a, b}
	outVec := 0 // a 1-D result is a column, (m)
	if a.Dim() == 1 {
		outVec = 1 // or a row, (n)
	}
	vs := matViews.Get().(*[3]Tensor)
	am, bm := a.asMatrixIn(&vs[0], 1, m, k), b.asMatrixIn(&vs[1], 0, k, n)
	if out := fuseMatMul(am, bm, shape, mmMap{outVec, m, n}); out != nil {
		return record(out, OpMatMul, Attrs{}, ins...) // the expression may hold the views: vs is not reused
	}
	out := newResult(a.dtype, shape, a.Device(), ins)
	backendOf(a.Device()).matmul(out.asMatrixIn(&vs[2], outVec, m, n), am, bm)
	*vs = [3]Tensor{} // backends keep no operand past the call
	matViews.Put(vs)
	return record(out, OpMatMul, Attrs{}, ins...)
}

// matViews holds the bare views of matmulFlat's backend calls, reused
// from one product to the next: an RNN step makes hundreds of products.
var matViews = sync.Pool{New: func() any { return new([3]Tensor) }}

// asMatrix returns t, a tensor of at most 2 dims, as a (1, rows, cols)
// layout over the same storage, for a backend call: a bare struct that
// holds no reference of its own (t's keeps the memory) and is never
// recorded or tracked. A 1-D t is a row when vecDim is 1 (the left
// operand of MatMul) and a column when it is 0; a 0-d t is 1×1.
func (t *Tensor) asMatrix(vecDim, rows, cols int) *Tensor {
	return t.asMatrixIn(new(Tensor), vecDim, rows, cols)
}

// asMatrixIn is asMatrix made in v, a zero Tensor.
func (t *Tensor) asMatrixIn(v *Tensor, vecDim, rows, cols int) *Tensor {
	v.ref, v.dtype, v.offset = t.ref, t.dtype, t.offset
	var sr, sc int
	switch {
	case len(t.shape) == 2:
		sr, sc = t.strides[0], t.strides[1]
	case len(t.shape) == 0:
		sr, sc = 1, 1
	case vecDim == 1: // a row: (1, n)
		sr, sc = rows*t.strides[0], t.strides[0]
	default: // a column: (n, 1)
		sr, sc = t.strides[0], cols*t.strides[0]
	}
	v.shape, v.strides = v.dims[:3:3], v.dims[inlineRank:inlineRank+3:inlineRank+3]
	copy(v.shape, []int{1, rows, cols})
	copy(v.strides, []int{rows * cols, sr, sc})
	return v
}

// reshapeTo is Reshape, except that it returns t itself when t already
// has shape. MatMul uses it for intermediates the caller never sees, and
// for its result, which is new.
func (t *Tensor) reshapeTo(shape ...int) *Tensor {
	if slices.Equal(t.shape, shape) {
		return t
	}
	return t.Reshape(shape...)
}

// bmm is the primitive: (B,M,K)·(B,K,N) → (B,M,N), contiguous.
func bmm(a, b *Tensor) *Tensor {
	shape := []int{a.shape[0], a.shape[1], b.shape[2]}
	if out := fuseMatMul(a, b, shape, mmMap{}); out != nil {
		return record(out, OpMatMul, Attrs{}, a, b)
	}
	out := newTensor(a.dtype, shape, a.Device())
	backendOf(a.Device()).matmul(out, a, b)
	return record(out, OpMatMul, Attrs{}, a, b)
}

// BMM multiplies batches of matrices: (B,M,K)·(B,K,N) → (B,M,N), as
// torch.bmm (no broadcasting).
func (a *Tensor) BMM(b *Tensor) *Tensor {
	a.nonNil("BMM", 1, b)
	if a.Dim() != 3 || b.Dim() != 3 || a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1] {
		fail("BMM", ErrShape, "want (B,M,K) and (B,K,N)", a, b)
	}
	return a.MatMul(b)
}

// Outer returns the outer product a bᵀ of two 1-D tensors.
func (a *Tensor) Outer(b *Tensor) *Tensor {
	a.nonNil("Outer", 1, b)
	if a.Dim() != 1 || b.Dim() != 1 {
		fail("Outer", ErrShape, "both arguments must be 1-D", a, b)
	}
	return a.Unsqueeze(1).Mul(b.Unsqueeze(0))
}

func clone(s []int) []int { return append([]int(nil), s...) }

// broadcastBatch broadcasts two batch shapes, reporting false when they
// do not broadcast.
func broadcastBatch(a, b []int) ([]int, bool) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range out {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}
