package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A storage is a refcounted buffer of n elements of one dtype on one
// device. Views share their base's storage; each Tensor holds one
// reference. The version counter lives here too, so every view of a
// storage sees the bumps of in-place ops on any of them, as in PyTorch.
type storage struct {
	refs    atomic.Int64
	version atomic.Uint64
	dtype   DType
	device  Device
	n       int
	idx     indexRange // the range of int32 values, when known (index_range.go)
	buf     any        // backend-specific: []float32 ... on the CPU, a GPU buffer handle on the GPU

	// pend, when not nil, is the fused expression whose result the
	// storage will hold: buf is nil until realize (fuse.go).
	pend atomic.Pointer[fexpr]
	// readers are the pending storages whose expressions read this one,
	// realized before an in-place op writes it.
	rmu     sync.Mutex
	readers []*storage
}

// init allocates n elements on dev into s, a zero storage, through the
// dispatch table, with one reference. The contents are undefined;
// callers overwrite every element.
func (s *storage) init(dt DType, n int, dev Device) {
	buf, err := alloc(dt, n, dev) // pool_cpu.go: checks the size first
	if err != nil {
		panic(&Error{Op: "alloc", Err: err, Devices: []Device{dev}})
	}
	s.dtype, s.device, s.n, s.buf = dt, dev, n, buf
	s.refs.Store(1)
	liveStorages.Add(1)
	countAlloc(dt, n)
}

// An ownedStorage is a new storage and the first reference on it, made
// in one allocation for a new tensor (newTensor, newResult). The ref
// points into the same block, which the runtime cleanup on the tensor
// may keep alive without keeping the tensor.
type ownedStorage struct {
	s storage
	r ref
}

// newOwnedRef allocates n elements on dev and returns the first
// reference on them.
func newOwnedRef(dt DType, n int, dev Device) *ref {
	o := &ownedStorage{}
	o.s.init(dt, n, dev)
	o.r.s = &o.s
	return &o.r
}

// countAlloc adds an allocation of n elements of dt to the counters.
func countAlloc(dt DType, n int) {
	counters.storageBytes.Add(int64(n) * int64(dt.Size()))
	counters.storages.Add(1)
}

// liveStorages counts storages whose memory has not gone back to their
// backend, on every device: what leak tests watch.
var liveStorages atomic.Int64

// tryRetain takes a reference unless the memory is already gone.
func (s *storage) tryRetain() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// mustRetain takes a reference for op, panicking with ErrReleased when
// the memory is already gone (released by another goroutine since op
// checked its operands).
func (s *storage) mustRetain(op string) {
	if !s.tryRetain() {
		failf(op, ErrReleased, nil, "the tensor's memory was released by another goroutine during the op")
	}
}

// live reports whether the storage still holds memory.
func (s *storage) live() bool { return s.refs.Load() > 0 }

// release drops one reference and returns the buffer to its backend when
// the last one goes.
func (s *storage) release() {
	switch r := s.refs.Add(-1); {
	case r == 0:
		if e := s.pend.Swap(nil); e != nil { // never realized: no memory
			liveStorages.Add(-1)
			e.drop(s)
			return
		}
		buf := s.buf
		s.buf = nil
		liveStorages.Add(-1)
		backendOf(s.device).free(s.dtype, buf)
	case r < 0:
		panic("tensor: storage released more times than retained")
	}
}

// A ref is one reference a Tensor holds on its storage. It is a separate
// object so that the runtime cleanup registered on the Tensor can release
// it without keeping the Tensor alive, and so that Release stays
// idempotent. A borrowed ref holds no reference: a view of a kept tensor
// (a parameter, a gradient, optimizer state) lives as long as that
// tensor's memory, which its owner releases by hand, and releasing the
// view releases nothing. It points to the kept tensor (lender), so that
// the garbage collector cannot collect that tensor, and its cleanup free
// the memory, while the view is still in use: a detached parameter
// outliving the last reference to the parameter itself.
//
// saved is what the node that computed the tensor saved for backward,
// if anything: the node is reachable only through its output (and
// points back to it), so the tensor's one cleanup releases both.
type ref struct {
	s        *storage
	released atomic.Bool
	borrowed bool
	lender   *Tensor // a borrowed ref's kept tensor, or nil
	saved    atomic.Pointer[savedRefs]
}

func (r *ref) drop() {
	if r.released.CompareAndSwap(false, true) && !r.borrowed {
		r.s.release()
	}
}

// collected is the runtime cleanup of a Tensor: it drops the tensor's
// reference and what its node saved.
func collected(r *ref) {
	r.drop()
	if sv := r.saved.Load(); sv != nil {
		sv.drop()
	}
}

// attach gives t a reference on s (a new one when retain is true) and
// registers the safety-net cleanup that releases it when t is garbage
// collected without Release.
func (t *Tensor) attach(s *storage, retain bool) {
	if retain {
		s.mustRetain("view")
	}
	t.ref = &ref{s: s}
	t.guard()
}

// guard registers, once, the safety-net cleanup that releases t's
// reference and its node's saves when t is garbage collected without
// Release. Tensors get it when they are made outside any Scope, or
// when they leave one alive (kept, returned from the outermost Scope,
// or released with a graph that backward never freed); while a Scope
// tracks a tensor, the Scope holds it and releases it.
func (t *Tensor) guard() {
	if t.guarded.CompareAndSwap(false, true) {
		runtime.AddCleanup(t, collected, t.ref)
	}
}

// borrow gives t, a view of the kept tensor lender, a borrowed ref on
// its storage.
func (t *Tensor) borrow(lender *Tensor) {
	t.ref = &ref{s: lender.ref.s, borrowed: true, lender: lender}
}

// pin realizes pending operands (fuse.go) and takes a reference on the
// storage of each tensor for the duration of a backend call, and unpin
// drops them; backend methods start with
// defer unpin(pin(operands...)). A tensor that another goroutine
// releases mid-call thus keeps its memory until the call returns, and
// one already released fails here with ErrReleased rather than handing
// the kernel a buffer the pool gave to someone else. The pinned
// tensors also stay reachable, so no runtime cleanup runs mid-kernel.
func pin(ts ...*Tensor) []*Tensor {
	for i, t := range ts {
		if t != nil && !t.ref.s.tryRetain() {
			unpin(ts[:i])
			fail("use", ErrReleased, "the tensor's memory was released by another goroutine while an op was using it", t)
		}
	}
	// Realize after retaining: realizing allocates, which may run the
	// collector, whose cleanups must not release an operand whose only
	// holder is a view the caller made (a broadcast operand).
	for _, t := range ts {
		if t != nil && t.ref.s.pend.Load() != nil {
			realizePinned(t, ts)
		}
	}
	return ts
}

// realizePinned realizes t, one of the pinned ts, unpinning them all if
// that fails.
func realizePinned(t *Tensor, ts []*Tensor) {
	ok := false
	defer func() {
		if !ok {
			unpin(ts)
		}
	}()
	t.ref.s.realize()
	ok = true
}

func unpin(ts []*Tensor) {
	for _, t := range ts {
		if t != nil {
			t.ref.s.release()
		}
	}
}
