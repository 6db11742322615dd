package tensor

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/tessera-ml/tessera/internal/layout"
)

// A Tensor is an n-dimensional view of a storage on one device: shape,
// strides (in elements), offset and dtype over a refcounted buffer, as in
// PyTorch. Views (Transpose, Slice, Expand, ...) share the storage;
// Contiguous copies only when needed.
//
// When grad mode is on and an input requires grad, a Tensor records the
// op and inputs that produced it (Source); package autograd walks those
// records backward. A Tensor never imports or calls autograd.
//
// The fields are ordered, and the rarely used hooks kept behind a
// pointer, so that a Tensor fits the runtime's 192-byte size class: a
// training step of a small model makes thousands of them.
type Tensor struct {
	ref     *ref
	shape   []int
	strides []int
	offset  int
	dims    [2 * inlineRank]int // backing of shape and strides up to inlineRank dims (setLayout)

	node  *Node                      // how this tensor was computed; nil for leaves
	grad  *Tensor                    // accumulated gradient of a leaf (or a tensor that retains grad)
	hooks *[]func(*Tensor) *Tensor   // RegisterHook's, nil when there are none
	ctx   *Context                   // the context it belongs to; nil means the default one
	frame atomic.Pointer[scopeFrame] // the Scope that will release it, if any

	kept    atomic.Bool // never released by a Scope (Keep)
	guarded atomic.Bool // its runtime cleanup is registered (guard)

	dtype        DType
	requiresGrad bool
	retainsGrad  bool
}

// Shape returns a copy of the tensor's shape.
func (t *Tensor) Shape() []int {
	t.nonNil("Shape", 0)
	return slices.Clone(t.shape)
}

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int {
	t.nonNil("Strides", 0)
	return slices.Clone(t.strides)
}

// Offset returns the index of the first element in the storage.
func (t *Tensor) Offset() int {
	t.nonNil("Offset", 0)
	return t.offset
}

// Dim returns the number of dimensions (0 for a scalar).
func (t *Tensor) Dim() int {
	t.nonNil("Dim", 0)
	return len(t.shape)
}

// Size returns the size of dimension d; negative d counts from the end.
// It panics with ErrIndex for a d out of range (any d of a 0-d tensor).
func (t *Tensor) Size(d int) int {
	t.nonNil("Size", 0)
	if len(t.shape) == 0 {
		failf("Size", ErrIndex, []*Tensor{t}, "a 0-d tensor has no dimension %d", d)
	}
	return t.shape[t.normDim("Size", d)]
}

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return layout.Numel(t.receiver("Numel").shape) }

// DType returns the element type.
func (t *Tensor) DType() DType {
	t.nonNil("DType", 0)
	return t.dtype
}

// Device returns where the storage lives.
func (t *Tensor) Device() Device {
	t.nonNil("Device", 0)
	return t.ref.s.device
}

// Version returns the version counter shared by every view of the
// storage; in-place ops bump it.
func (t *Tensor) Version() uint64 {
	t.nonNil("Version", 0)
	return t.ref.s.version.Load()
}

// IsContiguous reports whether the view is row-major without gaps.
func (t *Tensor) IsContiguous() bool {
	return layout.IsContiguous(t.receiver("IsContiguous").shape, t.strides)
}

// SharesStorage reports whether t and u are views of the same storage.
func (t *Tensor) SharesStorage(u *Tensor) bool {
	t.nonNil("SharesStorage", 1, u)
	return t.ref.s == u.ref.s
}

// Release drops t's reference on its storage now, instead of when the
// garbage collector finds t unreachable. Release is idempotent. Views,
// and autograd records that saved t, hold their own references, so the
// memory goes back to the device when the last of them is released.
// Using a tensor whose memory is gone panics with ErrReleased.
func (t *Tensor) Release() {
	if t != nil && t.ref != nil {
		t.ref.drop()
	}
}

// OwnsStorage reports whether t is the only holder of its memory (no
// other tensor or view shares it, no autograd record saved it, no op is
// using it) and covers all of it, contiguous from its start. Such a
// tensor can be handed over instead of copied: autograd stores a fresh
// gradient as a leaf's Grad this way.
func (t *Tensor) OwnsStorage() bool {
	t.nonNil("OwnsStorage", 0)
	s := t.ref.s
	return !t.ref.borrowed && !t.ref.released.Load() && s.refs.Load() == 1 &&
		t.offset == 0 && layout.Numel(t.shape) == s.n && t.IsContiguous()
}

// storage returns t's storage, panicking if its memory is gone.
func (t *Tensor) storage(op string) *storage {
	s := t.ref.s
	if !s.live() {
		fail(op, ErrReleased, "the tensor's memory was released (Release or the end of a Scope)", t)
	}
	return s
}

// bumpVersion records an in-place modification.
func (t *Tensor) bumpVersion() { t.ref.s.version.Add(1) }

// newTensor allocates a contiguous tensor of shape on dev. It belongs to
// no context or Scope yet: record (or settle) places an op's result,
// empty a created tensor.
func newTensor(dt DType, shape []int, dev Device) *Tensor {
	t := newBare(dt, shape, dev)
	t.guard()
	return t
}

// newBare allocates a contiguous tensor of shape on dev, unplaced and
// without a runtime cleanup (newTensor and newResult add one or the
// other).
func newBare(dt DType, shape []int, dev Device) *Tensor {
	t := &Tensor{dtype: dt}
	if n := len(shape); n <= inlineRank {
		t.shape = t.dims[:n:n]
		copy(t.shape, shape)
		t.strides = layout.FillContiguousStrides(t.dims[inlineRank:inlineRank+n:inlineRank+n], shape)
	} else {
		t.shape = slices.Clone(shape)
		t.strides = layout.ContiguousStrides(shape)
	}
	t.ref = newOwnedRef(dt, layout.Numel(shape), dev)
	return t
}

// newResult is newTensor for the result of an op on inputs, placed at
// once in the context and Scope it belongs to (settle), before a kernel
// fills it: a panic in the kernel then leaves it to that Scope, or to
// the runtime cleanup when no Scope is open. A result that a Scope
// tracks needs no cleanup while it is tracked (the Scope holds it and
// releases it), so registering one waits until it leaves the Scope
// (guard), which most intermediates of a training step never do.
func newResult(dt DType, shape []int, dev Device, inputs []*Tensor) *Tensor {
	t := newBare(dt, shape, dev)
	settle(t, inputs, nil)
	return t
}

// viewOf returns a new Tensor over base's storage with the given layout.
// A view of a kept tensor is kept and borrows base's memory (see ref);
// any other holds a reference of its own and is placed at once in
// base's context and Scope, as newResult places a result.
func viewOf(base *Tensor, shape, strides []int, offset int) *Tensor {
	t := &Tensor{dtype: base.dtype, offset: offset}
	t.setLayout(shape, strides)
	if base.kept.Load() {
		t.borrow(base)
		t.ctx = base.ctx
		t.kept.Store(true)
		return t
	}
	base.ref.s.mustRetain("view")
	t.ref = &ref{s: base.ref.s}
	t.ctx = base.Context()
	t.ctx.track(t) // a view belongs with its base (settle), guarded by track if no Scope holds it
	return t
}

// inlineRank is the rank up to which a Tensor holds its shape and
// strides in its own dims array rather than in two allocations.
const inlineRank = 4

// setLayout gives t a copy of shape and strides (of one length), in t's
// dims when they fit. Callers may pass slices they go on using, and
// small ones never escape to the heap.
func (t *Tensor) setLayout(shape, strides []int) {
	n := len(shape)
	if n > inlineRank {
		t.shape, t.strides = slices.Clone(shape), slices.Clone(strides)
		return
	}
	t.shape, t.strides = t.dims[:n:n], t.dims[inlineRank:inlineRank+n:inlineRank+n]
	copy(t.shape, shape)
	copy(t.strides, strides)
}

// String formats the tensor like PyTorch's repr, abridged for large
// tensors; a nil tensor formats as "<nil>", as fmt prints it.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil>"
	}
	if !t.ref.s.live() {
		return fmt.Sprintf("tensor(<released>, shape=%v, dtype=%v)", t.shape, t.dtype)
	}
	return formatTensor(t)
}

// normDim turns a possibly negative dim into an index into the shape.
func (t *Tensor) normDim(op string, d int) int {
	return normDimN(op, d, len(t.shape), t)
}

// normDimN normalises dim d for a rank-n tensor (0-d tensors accept 0 and -1, as in PyTorch).
func normDimN(op string, d, n int, ts ...*Tensor) int {
	m := max(n, 1)
	if d < -m || d >= m {
		failf(op, ErrIndex, ts, "dimension %d out of range [%d, %d]", d, -m, m-1)
	}
	if d < 0 {
		d += m
	}
	return d
}
