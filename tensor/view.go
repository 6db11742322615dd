package tensor

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

// View returns a tensor with the given shape sharing t's storage. One
// dimension may be -1 and is inferred. Like PyTorch's view, it panics
// with ErrShape when t's strides cannot express the new shape without a
// copy (use Reshape, which copies then).
func (t *Tensor) View(shape ...int) *Tensor {
	t.nonNil("View", 0)
	var sbuf, tbuf [inlineRank]int // small shapes stay on the stack (viewOf copies them)
	shape = t.inferShape("View", shape, sbuf[:0])
	strides, ok := viewStrides(t.shape, t.strides, shape, tbuf[:0])
	if !ok {
		failf("View", ErrShape, []*Tensor{t}, "view size %v is not compatible with the input's strides %v "+
			"(at least one dimension spans two contiguous subspaces); use Reshape", slices.Clone(shape), slices.Clone(t.strides))
	}
	return t.viewAs(shape, strides)
}

// Reshape returns t with the given shape: a view when the strides allow
// it, else a contiguous copy. One dimension may be -1.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	t.nonNil("Reshape", 0)
	var sbuf, tbuf [inlineRank]int
	shape = t.inferShape("Reshape", shape, sbuf[:0])
	if strides, ok := viewStrides(t.shape, t.strides, shape, tbuf[:0]); ok {
		return t.viewAs(shape, strides)
	}
	return t.Contiguous().View(shape...)
}

// viewAs makes the reshaping view and records it for autograd.
func (t *Tensor) viewAs(shape, strides []int) *Tensor {
	t.storage("View")
	out := viewOf(t, shape, strides, t.offset)
	return record(out, OpReshape, Attrs{Shape: shapeIfRecorded(OpReshape, out, t)}, t)
}

// inferShape resolves a -1 in shape and checks the element count. It
// returns the resolved shape appended to buf (the caller's, so that a
// small one need not reach the heap).
func (t *Tensor) inferShape(op string, shape, buf []int) []int {
	shape = append(buf, shape...)
	infer := -1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			failf(op, ErrShape, []*Tensor{t}, "invalid shape %v", slices.Clone(shape))
		}
	}
	n := t.Numel()
	if infer >= 0 {
		shape[infer] = 1
		known := shapeNumel(op, shape, t)
		if known == 0 || n%known != 0 {
			shape[infer] = -1
			failf(op, ErrShape, []*Tensor{t}, "shape %v is invalid for input of size %d", slices.Clone(shape), n)
		}
		shape[infer] = n / known
	}
	if shapeNumel(op, shape, t) != n {
		failf(op, ErrShape, []*Tensor{t}, "shape %v is invalid for input of size %d", slices.Clone(shape), n)
	}
	return shape
}

// shapeNumel returns the number of elements of shape, panicking with
// ErrShape for a negative size or a count that overflows an int (as
// PyTorch's "Storage size calculation overflowed": a zero size met
// before the overflow makes the count 0). Every op that makes a shape
// calls it, so it costs a multiply and a compare per dimension and
// allocates nothing.
func shapeNumel(op string, shape []int, ts ...*Tensor) int {
	n := 1
	for _, d := range shape {
		switch {
		case d < 0:
			badShape(op, shape, "negative dimension", ts)
		case d != 0 && n > math.MaxInt/d:
			badShape(op, shape, "element count overflows an int", ts)
		}
		n *= d
	}
	return n
}

// badShape is shapeNumel's failure, out of line so that the check stays
// small.
func badShape(op string, shape []int, why string, ts []*Tensor) {
	failf(op, ErrShape, ts, "shape %v: %s", slices.Clone(shape), why)
}

// addSizes returns a + b for two sizes, panicking with ErrShape when the
// sum overflows an int.
func addSizes(op string, a, b int, ts ...*Tensor) int {
	if a > math.MaxInt-b {
		failf(op, ErrShape, ts, "size %d + %d overflows an int", a, b)
	}
	return a + b
}

// sliceLen returns the length of [start:end:step] for clamped start
// and end and a positive step, without overflowing for any step.
func sliceLen(start, end, step int) int {
	if end <= start {
		return 0
	}
	return (end-start-1)/step + 1
}

// viewStrides returns strides that let a tensor of oldShape/oldStrides be
// seen as newShape without copying, following ATen's computeStride. It
// appends them to buf, as inferShape appends.
func viewStrides(oldShape, oldStrides, newShape, buf []int) ([]int, bool) {
	newStrides := append(buf, make([]int, len(newShape))...)
	if layout.Numel(oldShape) == 0 {
		return layout.ContiguousStrides(newShape), true
	}
	if len(oldShape) == 0 {
		oldShape, oldStrides = []int{1}, []int{1}
	}
	viewD := len(newShape) - 1
	chunkBase := oldStrides[len(oldStrides)-1]
	tensorN, viewN := 1, 1
	for d := len(oldShape) - 1; d >= 0; d-- {
		tensorN *= oldShape[d]
		if d == 0 || (oldShape[d-1] != 1 && oldStrides[d-1] != tensorN*chunkBase) {
			for viewD >= 0 && (viewN < tensorN || newShape[viewD] == 1) {
				newStrides[viewD] = viewN * chunkBase
				viewN *= newShape[viewD]
				viewD--
			}
			if viewN != tensorN {
				return nil, false
			}
			if d > 0 {
				chunkBase = oldStrides[d-1]
				tensorN, viewN = 1, 1
			}
		}
	}
	return newStrides, viewD == -1
}

// Flatten merges dimensions start..end (inclusive, negative from the
// end) into one, as torch.flatten.
func (t *Tensor) Flatten(start, end int) *Tensor {
	t.nonNil("Flatten", 0)
	if t.Dim() == 0 {
		return t.Reshape(1)
	}
	s, e := t.normDim("Flatten", start), t.normDim("Flatten", end)
	if s > e {
		failf("Flatten", ErrArgument, []*Tensor{t}, "start dim %d comes after end dim %d", start, end)
	}
	shape := slices.Clone(t.shape[:s])
	shape = append(shape, layout.Numel(t.shape[s:e+1]))
	shape = append(shape, t.shape[e+1:]...)
	return t.Reshape(shape...)
}

// Squeeze removes the given dimensions if they have size 1, or every
// size-1 dimension when none is given.
func (t *Tensor) Squeeze(dims ...int) *Tensor {
	t.nonNil("Squeeze", 0)
	drop := make([]bool, t.Dim())
	if len(dims) == 0 {
		for i, d := range t.shape {
			drop[i] = d == 1
		}
	}
	for _, d := range dims {
		if d = t.normDim("Squeeze", d); t.Dim() > 0 && t.shape[d] == 1 {
			drop[d] = true
		}
	}
	var buf [inlineRank]int // a small shape stays on the stack
	shape := buf[:0]
	for i, d := range t.shape {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return t.Reshape(shape...)
}

// Unsqueeze inserts a dimension of size 1 at d (in -(Dim+1)..Dim).
func (t *Tensor) Unsqueeze(d int) *Tensor {
	t.nonNil("Unsqueeze", 0)
	d = normDimN("Unsqueeze", d, t.Dim()+1, t)
	var buf [inlineRank]int // a small shape stays on the stack
	shape := append(buf[:0], t.shape[:d]...)
	shape = append(shape, 1)
	shape = append(shape, t.shape[d:]...)
	return t.Reshape(shape...)
}

// Permute returns a view with dimensions reordered: dimension i of the
// result is dimension dims[i] of t.
func (t *Tensor) Permute(dims ...int) *Tensor {
	t.nonNil("Permute", 0)
	if len(dims) != t.Dim() {
		failf("Permute", ErrArgument, []*Tensor{t}, "permutation %v has %d dims, tensor has %d", slices.Clone(dims), len(dims), t.Dim())
	}
	// Small permutations stay on the stack; the node gets a copy.
	var seenBuf [inlineRank]bool
	var permBuf, shapeBuf, strideBuf [inlineRank]int
	seen := append(seenBuf[:0], make([]bool, len(dims))...)
	perm := append(permBuf[:0], make([]int, len(dims))...)
	shape := append(shapeBuf[:0], make([]int, len(dims))...)
	strides := append(strideBuf[:0], make([]int, len(dims))...)
	for i, d := range dims {
		d = t.normDim("Permute", d)
		if seen[d] {
			failf("Permute", ErrArgument, []*Tensor{t}, "repeated dim in permutation %v", slices.Clone(dims))
		}
		seen[d] = true
		perm[i] = d
		shape[i], strides[i] = t.shape[d], t.strides[d]
	}
	t.storage("Permute")
	out := viewOf(t, shape, strides, t.offset)
	var recorded []int
	if t.requiresGrad && out.Context().gradOn("Permute") {
		recorded = slices.Clone(perm)
	}
	return record(out, OpPermute, Attrs{Dims: recorded}, t)
}

// Transpose swaps dimensions a and b (a view).
func (t *Tensor) Transpose(a, b int) *Tensor {
	t.nonNil("Transpose", 0)
	if t.Dim() == 0 {
		return t.Permute()
	}
	a, b = t.normDim("Transpose", a), t.normDim("Transpose", b)
	var buf [inlineRank]int
	perm := append(buf[:0], make([]int, t.Dim())...)
	for i := range perm {
		perm[i] = i
	}
	perm[a], perm[b] = perm[b], perm[a]
	return t.Permute(perm...)
}

// T returns the transpose of a tensor with at most 2 dimensions.
func (t *Tensor) T() *Tensor {
	t.nonNil("T", 0)
	if t.Dim() > 2 {
		fail("T", ErrShape, "T needs a tensor with at most 2 dims; use Transpose or Permute", t)
	}
	if t.Dim() < 2 {
		return t.Transpose(0, 0)
	}
	return t.Transpose(0, 1)
}

// Slice returns the view t[..., start:end:step, ...] along dim, with
// Python's rules: negative start/end count from the end and both are
// clamped to the size. step must be positive.
func (t *Tensor) Slice(dim, start, end, step int) *Tensor {
	t.nonNil("Slice", 0)
	dim = t.sizedDim("Slice", dim)
	if step <= 0 {
		failf("Slice", ErrArgument, []*Tensor{t}, "slice step must be positive, got %d", step)
	}
	n := t.shape[dim]
	start, end = clampIndex(start, n), clampIndex(end, n)
	if end < start {
		end = start
	}
	var sbuf, tbuf [inlineRank]int // small layouts stay on the stack (viewOf copies them)
	shape, strides := append(sbuf[:0], t.shape...), append(tbuf[:0], t.strides...)
	shape[dim] = sliceLen(start, end, step)
	if shape[dim] > 1 { // a step past the end would overflow the stride
		strides[dim] *= step
	}
	t.storage("Slice")
	out := viewOf(t, shape, strides, t.offset+start*t.strides[dim])
	return record(out, OpSlice, Attrs{Dim: dim, Start: start, End: end, Step: step, Shape: shapeIfRecorded(OpSlice, out, t)}, t)
}

// sizedDim normalises dim d for an op that indexes into a dimension,
// panicking with ErrIndex for a 0-d tensor, which has none (PyTorch:
// "select() cannot be applied to a 0-dim tensor").
func (t *Tensor) sizedDim(op string, d int) int {
	if t.Dim() == 0 {
		failf(op, ErrIndex, []*Tensor{t}, "dimension %d: a 0-d tensor has no dimension to index", d)
	}
	return t.normDim(op, d)
}

func clampIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// Narrow returns the view of length elements from start along dim.
func (t *Tensor) Narrow(dim, start, length int) *Tensor {
	t.nonNil("Narrow", 0)
	d := t.sizedDim("Narrow", dim)
	if start < 0 {
		start += t.shape[d]
	}
	if start < 0 || length < 0 || start > t.shape[d] || length > t.shape[d]-start {
		failf("Narrow", ErrIndex, []*Tensor{t}, "start %d + length %d exceeds dimension %d of size %d", start, length, d, t.shape[d])
	}
	return t.Slice(d, start, start+length, 1)
}

// Select returns the view at index i along dim, with dim removed.
func (t *Tensor) Select(dim, i int) *Tensor {
	t.nonNil("Select", 0)
	d := t.sizedDim("Select", dim)
	n := t.shape[d]
	if i < -n || i >= n {
		failf("Select", ErrIndex, []*Tensor{t}, "index %d is out of bounds for dimension %d with size %d", i, d, n)
	}
	if i < 0 {
		i += n
	}
	return t.Slice(d, i, i+1, 1).Squeeze(d)
}

// Expand returns a view broadcasting size-1 dimensions to shape (stride
// 0), as torch.expand: -1 keeps a size, and new leading dims may be added.
func (t *Tensor) Expand(shape ...int) *Tensor {
	t.nonNil("Expand", 0)
	t.storage("Expand")
	if len(shape) < t.Dim() {
		failf("Expand", ErrShape, []*Tensor{t}, "cannot expand to %v: fewer dims than the tensor", shape)
	}
	shape = slices.Clone(shape)
	strides := make([]int, len(shape))
	lead := len(shape) - t.Dim()
	for i := range shape {
		if i < lead {
			if shape[i] < 0 {
				failf("Expand", ErrShape, []*Tensor{t}, "the expanded size %d is not allowed in a new leading dim of %v", shape[i], shape)
			}
			continue // stride 0
		}
		d, s := t.shape[i-lead], t.strides[i-lead]
		switch {
		case shape[i] == -1 || shape[i] == d:
			shape[i], strides[i] = d, s
		case shape[i] < 0:
			failf("Expand", ErrShape, []*Tensor{t}, "the expanded size %d at dim %d is negative", shape[i], i)
		case d == 1:
			strides[i] = 0
		default:
			failf("Expand", ErrShape, []*Tensor{t}, "the expanded size %d must match the existing size %d at dim %d", shape[i], d, i)
		}
	}
	shapeNumel("Expand", shape, t)
	if slices.Equal(shape, t.shape) {
		return t
	}
	out := viewOf(t, shape, strides, t.offset)
	return record(out, OpExpand, Attrs{Shape: slices.Clone(t.shape)}, t)
}

// BroadcastTo is Expand to shape.
func (t *Tensor) BroadcastTo(shape ...int) *Tensor { return t.Expand(shape...) }

// Contiguous returns t if it is contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	t.nonNil("Contiguous", 0)
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// Clone returns a contiguous copy of t; gradients flow back to t.
func (t *Tensor) Clone() *Tensor {
	defer allocatedFor("Clone")
	t.nonNil("Clone", 0)
	t.storage("Clone")
	out := fuseClone(t)
	if out == nil {
		out = newTensor(t.dtype, t.shape, t.Device())
		backendOf(t.Device()).copy(out, t)
	}
	return record(out, OpCopy, Attrs{}, t)
}

// Split splits t along dim into pieces of size (the last may be
// smaller), as torch.split with an int.
func (t *Tensor) Split(size, dim int) []*Tensor {
	t.nonNil("Split", 0)
	d := t.sizedDim("Split", dim)
	if size <= 0 {
		failf("Split", ErrArgument, []*Tensor{t}, "split size must be positive, got %d", size)
	}
	var out []*Tensor
	for s := 0; s < t.shape[d] || (s == 0 && t.shape[d] == 0); s += size {
		out = append(out, t.Narrow(d, s, min(size, t.shape[d]-s)))
		if t.shape[d] == 0 {
			break
		}
	}
	return out
}

// SplitSizes splits t along dim into pieces of the given sizes, which
// must add up to the dimension's size.
func (t *Tensor) SplitSizes(sizes []int, dim int) []*Tensor {
	t.nonNil("SplitSizes", 0)
	d := t.sizedDim("SplitSizes", dim)
	total := 0
	for _, s := range sizes {
		if s < 0 {
			failf("SplitSizes", ErrArgument, []*Tensor{t}, "split sizes must be non-negative, got %v", sizes)
		}
		total = addSizes("SplitSizes", total, s, t)
	}
	if total != t.shape[d] {
		failf("SplitSizes", ErrShape, []*Tensor{t}, "sizes %v add up to %d, dimension %d has %d", sizes, total, d, t.shape[d])
	}
	out := make([]*Tensor, len(sizes))
	s := 0
	for i, n := range sizes {
		out[i] = t.Narrow(d, s, n)
		s += n
	}
	return out
}

// Chunk splits t into n pieces along dim, as torch.chunk: pieces of
// ceil(size/n), so fewer than n may come back.
func (t *Tensor) Chunk(n, dim int) []*Tensor {
	t.nonNil("Chunk", 0)
	d := t.sizedDim("Chunk", dim)
	if n <= 0 {
		failf("Chunk", ErrArgument, []*Tensor{t}, "chunk count must be positive, got %d", n)
	}
	return t.Split(max(sliceLen(0, t.shape[d], n), 1), d)
}

// broadcastShapes returns the broadcast of shapes, NumPy/PyTorch style.
func broadcastShapes(op string, ts []*Tensor) []int {
	rank := 0
	for _, t := range ts {
		rank = max(rank, t.Dim())
	}
	out := make([]int, rank)
	for i := range out {
		out[i] = 1
	}
	for _, t := range ts {
		lead := rank - t.Dim()
		for i, d := range t.shape {
			o := &out[lead+i]
			switch {
			case d == *o || d == 1:
			case *o == 1:
				*o = d
			default:
				fail(op, ErrShape, fmt.Sprintf("shapes cannot be broadcast together (size %d vs %d at dim %d)", *o, d, lead+i), ts...)
			}
		}
	}
	shapeNumel(op, out, ts...)
	return out
}

// broadcastView returns t seen with shape (stride 0 on broadcast dims),
// without recording anything: backends take it as an operand.
func (t *Tensor) broadcastView(shape []int) *Tensor {
	if slices.Equal(t.shape, shape) {
		return t
	}
	strides := make([]int, len(shape))
	lead := len(shape) - t.Dim()
	for i := lead; i < len(shape); i++ {
		if t.shape[i-lead] == shape[i] {
			strides[i] = t.strides[i-lead]
		}
	}
	v := &Tensor{ref: t.ref, dtype: t.dtype, offset: t.offset}
	v.setLayout(shape, strides)
	return v
}
