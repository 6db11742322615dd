package tensor

import (
	"runtime"
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
}

// newStorage allocates n elements on dev through the dispatch table. The
// contents are undefined; callers overwrite every element.
func newStorage(dt DType, n int, dev Device) *storage {
	buf, err := alloc(dt, n, dev) // pool_cpu.go: checks the size first
	if err != nil {
		panic(&Error{Op: "alloc", Err: err, Devices: []Device{dev}})
	}
	s := &storage{dtype: dt, device: dev, n: n, buf: buf}
	s.refs.Store(1)
	liveStorages.Add(1)
	return s
}

// liveStorages counts storages whose memory has not gone back to their
// backend, on every device: what leak tests watch.
var liveStorages atomic.Int64

func (s *storage) retain() { s.refs.Add(1) }

// release drops one reference and returns the buffer to its backend when
// the last one goes.
func (s *storage) release() {
	switch r := s.refs.Add(-1); {
	case r == 0:
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
// idempotent.
type ref struct {
	s        *storage
	released atomic.Bool
}

func newRef(s *storage) *ref { return &ref{s: s} }

func (r *ref) drop() {
	if r.released.CompareAndSwap(false, true) {
		r.s.release()
	}
}

// attach gives t its reference on s (taking a new one when retain is
// true) and registers the safety-net cleanup that releases it when t is
// garbage collected without Release.
func (t *Tensor) attach(s *storage, retain bool) {
	if retain {
		s.retain()
	}
	r := newRef(s)
	t.ref = r
	runtime.AddCleanup(t, func(r *ref) { r.drop() }, r)
	track(t)
}

// keepAlive keeps tensors reachable until a backend call that reads
// their buffers returns: otherwise the runtime cleanup of a tensor the
// caller dropped could hand its buffer to another goroutine mid-kernel.
// Backend methods defer it.
func keepAlive(ts ...*Tensor) { runtime.KeepAlive(ts) }
