package tensor

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/cpu"
)

// rawView is a view for backends only: it shares t's reference and is
// never recorded, tracked or returned to users.
func rawView(t *Tensor, shape, strides []int, offset int) *Tensor {
	v := &Tensor{ref: t.ref, dtype: t.dtype, offset: offset}
	v.setLayout(shape, strides)
	return v
}

// rawSlice is rawView of t[start:end:step] along dim.
func rawSlice(t *Tensor, dim, start, end, step int) *Tensor {
	shape, strides := slices.Clone(t.shape), slices.Clone(t.strides)
	shape[dim] = sliceLen(start, end, step)
	if shape[dim] > 1 {
		strides[dim] *= step
	}
	return rawView(t, shape, strides, t.offset+start*t.strides[dim])
}

// Cat concatenates tensors along dim; all must have the same shape
// except along dim, and live on one device. dtypes are promoted.
func Cat(ts []*Tensor, dim int) *Tensor {
	if len(ts) == 0 {
		failf("Cat", ErrArgument, nil, "expected a non-empty list of tensors")
	}
	listNonNil("Cat", ts)
	dt := ts[0].dtype
	for _, t := range ts {
		t.storage("Cat")
		dt = PromoteTypes(dt, t.dtype)
		if t.Device() != ts[0].Device() {
			fail("Cat", ErrDevice, "tensors are on different devices", ts...)
		}
	}
	first := ts[0]
	if first.Dim() == 0 {
		fail("Cat", ErrShape, "zero-dimensional tensors cannot be concatenated", ts...)
	}
	d := first.normDim("Cat", dim)
	shape := slices.Clone(first.shape)
	shape[d] = 0
	sizes := make([]int, len(ts))
	cast := make([]*Tensor, len(ts))
	for i, t := range ts {
		if t.Dim() != first.Dim() {
			fail("Cat", ErrShape, "tensors must have the same number of dimensions", ts...)
		}
		for j := range t.shape {
			if j != d && t.shape[j] != first.shape[j] {
				fail("Cat", ErrShape, fmt.Sprintf("sizes must match except in dimension %d", d), ts...)
			}
		}
		sizes[i] = t.shape[d]
		shape[d] = addSizes("Cat", shape[d], t.shape[d], ts...)
	}
	shapeNumel("Cat", shape, ts...)
	for i, t := range ts {
		cast[i] = t.Cast(dt)
	}
	out := newTensor(dt, shape, first.Device())
	be := backendOf(first.Device())
	at := 0
	for i, t := range cast {
		copyInto(be, rawSlice(out, d, at, at+sizes[i], 1), t)
		at += sizes[i]
	}
	return record(out, OpCat, Attrs{Dim: d, Sizes: sizes}, cast...)
}

// Stack joins tensors of one shape along a new dimension dim.
func Stack(ts []*Tensor, dim int) *Tensor {
	if len(ts) == 0 {
		failf("Stack", ErrArgument, nil, "expected a non-empty list of tensors")
	}
	listNonNil("Stack", ts)
	for _, t := range ts {
		if !slices.Equal(t.shape, ts[0].shape) {
			fail("Stack", ErrShape, "stack expects each tensor to be equal size", ts...)
		}
	}
	d := normDimN("Stack", dim, ts[0].Dim()+1, ts...)
	shapeNumel("Stack", slices.Insert(slices.Clone(ts[0].shape), d, len(ts)), ts...)
	us := make([]*Tensor, len(ts))
	for i, t := range ts {
		us[i] = t.Unsqueeze(d)
	}
	return Cat(us, d)
}

// checkIndex validates an index tensor for op, the argument at
// position pos.
func checkIndex(op string, x, index *Tensor, pos int) {
	x.nonNil(op, pos, index)
	x.storage(op)
	index.storage(op)
	if index.dtype != Int32 {
		fail(op, ErrDType, "indices must be an Int32 tensor", x, index)
	}
	if index.Device() != x.Device() {
		fail(op, ErrDevice, "the index is on another device", x, index)
	}
}

// indexError turns a kernel's index error into the op's *Error panic.
func indexError(op string, err error, ts ...*Tensor) {
	if err == nil {
		return
	}
	var ie *cpu.IndexError
	if errors.As(err, &ie) {
		fail(op, ErrIndex, ie.Error(), ts...)
	}
	fail(op, ErrArgument, err.Error(), ts...)
}

// IndexSelect returns the entries of x at index (1-D Int32) along dim,
// as torch.index_select.
func (x *Tensor) IndexSelect(dim int, index *Tensor) *Tensor {
	checkIndex("IndexSelect", x, index, 2)
	if index.Dim() > 1 {
		fail("IndexSelect", ErrShape, "the index must be 0-d or 1-D", x, index)
	}
	index = index.Reshape(-1).Contiguous()
	d := x.normDim("IndexSelect", dim)
	src := x
	if x.Dim() == 0 {
		src = x.Reshape(1)
	}
	shape := slices.Clone(src.shape)
	shape[d] = index.Numel()
	shapeNumel("IndexSelect", shape, x, index)
	checkGPUIndexRange("IndexSelect", index, src.shape[d], x, index)
	out := newTensor(x.dtype, shape, x.Device())
	indexError("IndexSelect", backendOf(x.Device()).indexSelect(out, src, index, d), x, index)
	return record(out, OpIndexSelect, Attrs{Dim: d, Index: index, Shape: slices.Clone(src.shape)}, src)
}

// IndexAdd returns x with src added at index (1-D Int32) along dim:
// out[..., index[i], ...] += src[..., i, ...], as torch.index_add. As in
// PyTorch, a 0-d x, index or src counts as 1-D when the others are at
// most 1-D.
func (x *Tensor) IndexAdd(dim int, index, src *Tensor) *Tensor {
	return x.indexReduce(OpIndexAdd, dim, index, src, backend.indexAdd)
}

// IndexAmax returns x with src's maximum taken in at index (1-D Int32)
// along dim: out[..., index[i], ...] = max(x[..., index[i], ...] and every
// src[..., i, ...] sent there), as torch.Tensor.index_reduce(dim, index,
// src, "amax") with include_self; a NaN wins. With x full of -Inf it is a
// segment max: the maximum of the rows of src that index maps to each row
// (-Inf for none), in one kernel whatever the number of segments. Float32,
// Float64 and Int32; 0-d operands count as 1-D as in IndexAdd. The
// gradient is shared evenly among the entries, of x and of src, equal to
// the result, as PyTorch's.
func (x *Tensor) IndexAmax(dim int, index, src *Tensor) *Tensor {
	return x.indexReduce(OpIndexAmax, dim, index, src, backend.indexAmax)
}

// indexReduce runs op, IndexAdd or IndexAmax, through its backend entry
// run after the checks they share.
func (x *Tensor) indexReduce(op Op, dim int, index, src *Tensor, run func(b backend, dst, index, src *Tensor, dim int) error) *Tensor {
	name := op.String()
	checkIndex(name, x, index, 2)
	argsNonNil(name, 3, src)
	src.storage(name)
	if x.dtype == Bool {
		fail(name, ErrDType, "cannot reduce into a Bool tensor", x, src)
	}
	d := x.normDim(name, dim)
	if as1D(x, index, src) {
		return x.Reshape(-1).indexReduce(op, 0, index.Reshape(-1), src.Reshape(-1), run).Reshape(x.shape...)
	}
	if x.Dim() == 0 {
		fail(name, ErrShape, "a 0-d tensor takes only a 0-d or 1-D index and source", x, index, src)
	}
	index = index.Reshape(-1).Contiguous()
	want := slices.Clone(x.shape)
	want[d] = index.Numel()
	if !slices.Equal(src.shape, want) {
		fail(name, ErrShape, fmt.Sprintf("source must have shape %v", want), x, index, src)
	}
	checkGPUIndexRange(name, index, x.shape[d], x, index, src)
	src = src.Cast(x.dtype)
	out := x.Detach().Clone()
	indexError(name, run(backendOf(x.Device()), out, index, src, d), x, index, src)
	return record(out, op, Attrs{Dim: d, Index: index}, x, src)
}

// as1D reports whether an index op should see its operands as 1-D: one
// of them is 0-d and none has more than one dim (PyTorch's rule).
func as1D(ts ...*Tensor) bool {
	zero, vec := false, true
	for _, t := range ts {
		zero = zero || t.Dim() == 0
		vec = vec && t.Dim() <= 1
	}
	return zero && vec
}

// Gather returns out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (and
// likewise for other dims), as torch.gather. index has x's rank and is
// no larger than x in the other dims; as in PyTorch, a 0-d x or index
// counts as 1-D when the other is at most 1-D.
func (x *Tensor) Gather(dim int, index *Tensor) *Tensor {
	checkIndex("Gather", x, index, 2)
	d := x.normDim("Gather", dim)
	if as1D(x, index) {
		return x.Reshape(-1).Gather(0, index.Reshape(-1)).Reshape(index.shape...)
	}
	if index.Dim() != x.Dim() {
		fail("Gather", ErrShape, "the index must have as many dims as the input", x, index)
	}
	for i := range index.shape {
		if i != d && index.shape[i] > x.shape[i] {
			fail("Gather", ErrShape, fmt.Sprintf("index size %d exceeds the input's %d at dim %d", index.shape[i], x.shape[i], i), x, index)
		}
	}
	checkGPUIndexRange("Gather", index, x.shape[d], x, index)
	out := newTensor(x.dtype, index.shape, x.Device())
	indexError("Gather", backendOf(x.Device()).gather(out, x, index, d), x, index)
	return record(out, OpGather, Attrs{Dim: d, Index: index, Shape: slices.Clone(x.shape)}, x)
}

// ScatterAdd returns x with src added at index along dim:
// out[i][index[i][j][k]][k] += src[i][j][k] for dim 1, as torch.scatter_add.
// index, src and x have the same rank (a 0-d one counts as 1-D when the
// others are at most 1-D); index is no larger than src in any dim and no
// larger than x off dim. Only the part of src that index covers (its
// leading corner) is read, as in PyTorch.
func (x *Tensor) ScatterAdd(dim int, index, src *Tensor) *Tensor {
	checkIndex("ScatterAdd", x, index, 2)
	argsNonNil("ScatterAdd", 3, src)
	src.storage("ScatterAdd")
	if x.dtype == Bool {
		fail("ScatterAdd", ErrDType, "cannot add into a Bool tensor", x, src)
	}
	d := x.normDim("ScatterAdd", dim)
	if as1D(x, index, src) {
		return x.Reshape(-1).ScatterAdd(0, index.Reshape(-1), src.Reshape(-1)).Reshape(x.shape...)
	}
	if index.Dim() != x.Dim() || src.Dim() != x.Dim() {
		fail("ScatterAdd", ErrShape, "index and source must have the input's rank", x, index, src)
	}
	for i := range index.shape {
		if index.shape[i] > src.shape[i] || (i != d && index.shape[i] > x.shape[i]) {
			fail("ScatterAdd", ErrShape, fmt.Sprintf("index size %d at dim %d exceeds the source's or the input's", index.shape[i], i), x, index, src)
		}
	}
	checkGPUIndexRange("ScatterAdd", index, x.shape[d], x, index, src)
	src = src.Cast(x.dtype)
	out := x.Detach().Clone()
	read := rawView(src, slices.Clone(index.shape), src.strides, src.offset) // the corner index covers
	indexError("ScatterAdd", backendOf(x.Device()).scatterAdd(out, index, read, d), x, index, src)
	return record(out, OpScatterAdd, Attrs{Dim: d, Index: index}, x, src)
}

// SliceScatter returns zeros of shape with src written into the slice
// [start:end:step] along dim: the adjoint of Slice, used by its
// gradient, as torch.slice_scatter of zeros. start and end follow
// Slice's rules (negative counts from the end; both clamped); it panics
// with ErrArgument for a step that is not positive, ErrIndex for a bad
// dim, and ErrShape unless src has the slice's shape.
func SliceScatter(src *Tensor, shape []int, dim, start, end, step int) *Tensor {
	argsNonNil("SliceScatter", 1, src)
	src.storage("SliceScatter")
	shapeNumel("SliceScatter", shape, src)
	if len(shape) == 0 {
		fail("SliceScatter", ErrIndex, "a 0-d shape has no dimension to slice", src)
	}
	dim = normDimN("SliceScatter", dim, len(shape), src)
	if step <= 0 {
		failf("SliceScatter", ErrArgument, []*Tensor{src}, "slice step must be positive, got %d", step)
	}
	start, end = clampIndex(start, shape[dim]), clampIndex(end, shape[dim])
	end = max(end, start)
	want := slices.Clone(shape)
	want[dim] = sliceLen(start, end, step)
	if !slices.Equal(want, src.shape) {
		fail("SliceScatter", ErrShape, fmt.Sprintf("the slice [%d:%d:%d] of dim %d of %v has shape %v", start, end, step, dim, shape, want), src)
	}
	out := newTensor(src.dtype, shape, src.Device())
	backendOf(src.Device()).sliceScatter(out, src, dim, start, step)
	return record(out, OpSliceScatter, Attrs{Shape: slices.Clone(shape), Dim: dim, Start: start, End: end, Step: step}, src)
}

// OneHot returns the Int32 one-hot encoding of an Int32 tensor of class
// indices, with a new last dimension of size numClasses (PyTorch returns
// int64); numClasses -1 means the largest index plus one, as in PyTorch.
// It panics with ErrArgument for any other negative numClasses and with
// ErrIndex for an index outside [0, numClasses).
func OneHot(index *Tensor, numClasses int) *Tensor {
	argsNonNil("OneHot", 1, index)
	index.storage("OneHot")
	if index.dtype != Int32 {
		fail("OneHot", ErrDType, "class indices must be Int32", index)
	}
	if numClasses < -1 {
		failf("OneHot", ErrArgument, []*Tensor{index}, "numClasses is %d; want -1 (infer) or a non-negative count", numClasses)
	}
	if index.Numel() == 0 && numClasses < 0 {
		fail("OneHot", ErrArgument, "cannot infer the number of classes from an empty tensor", index)
	}
	lo, hi := 0, -1
	if index.Numel() > 0 {
		lo, hi = int(index.Min().Item()), int(index.Max().Item())
	}
	if numClasses < 0 {
		numClasses = hi + 1
	}
	n := shapeNumel("OneHot", append(slices.Clone(index.shape), numClasses), index)
	checkFits("OneHot", Int32, n, index.Device(), index)
	if lo < 0 || hi >= numClasses {
		failf("OneHot", ErrIndex, []*Tensor{index}, "class values must be in [0, %d), got %d..%d", numClasses, lo, hi)
	}
	classes := Arange(0, float64(numClasses), 1, Like(index))
	return index.Unsqueeze(-1).Eq(classes).Cast(Int32)
}
