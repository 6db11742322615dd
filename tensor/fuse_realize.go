package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

// newPendingTensor returns a contiguous tensor of e's shape on dev whose
// storage holds no memory yet, only e; it registers the storage as a
// reader of e's leaves.
func newPendingTensor(e *fexpr, dev Device) *Tensor {
	s := &storage{dtype: e.dtype, device: dev, n: shapeNumel("fuse", e.shape)}
	s.refs.Store(1)
	s.pend.Store(e)
	liveStorages.Add(1)
	for _, l := range e.leaves {
		l.ref.s.addReader(s)
	}
	t := &Tensor{dtype: e.dtype}
	t.setLayout(e.shape, layout.ContiguousStrides(e.shape))
	t.attach(s, false)
	return t
}

// realize gives a pending storage its memory and computes it (one fused
// kernel), then drops the expression; nothing for a realized one. It is
// safe to call from several goroutines: one computes, the others wait.
func (s *storage) realize() {
	e := s.pend.Load()
	if e == nil || !s.tryRetain() {
		return
	}
	defer s.release()
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.pend.Load() != e {
		return
	}
	buf, err := alloc(s.dtype, s.n, s.device)
	if err != nil {
		panic(&Error{Op: e.label(), Err: err, Devices: []Device{s.device}})
	}
	countAlloc(s.dtype, s.n)
	s.buf = buf
	dst := &Tensor{dtype: s.dtype, ref: &ref{s: s, borrowed: true}}
	dst.setLayout(e.shape, layout.ContiguousStrides(e.shape))
	done := false
	defer func() {
		if !done { // the kernel failed: leave the storage pending
			s.buf = nil
			backendOf(s.device).free(s.dtype, buf)
		}
	}()
	backendOf(s.device).fused(dst, e)
	done = true
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	s.pend.Store(nil)
	e.drop(s)
}

// memory returns the storage's buffer, realizing it first if it is
// pending.
func (s *storage) memory() any {
	if s.pend.Load() != nil {
		s.realize()
	}
	return s.buf
}

// drop releases e's leaves and unregisters s, e's storage, as their
// reader.
func (e *fexpr) drop(s *storage) {
	for _, l := range e.leaves {
		l.ref.s.removeReader(s)
		l.ref.s.release()
	}
}

// addReader records that the pending storage r reads s.
func (s *storage) addReader(r *storage) {
	s.rmu.Lock()
	s.readers = append(s.readers, r)
	s.rmu.Unlock()
}

func (s *storage) removeReader(r *storage) {
	s.rmu.Lock()
	if i := slices.Index(s.readers, r); i >= 0 {
		s.readers = slices.Delete(s.readers, i, i+1)
	}
	s.rmu.Unlock()
}

// detachReaders prepares t's storage s for an in-place op on t with
// operands ys. Pending results that read s must see it as it is now.
// When t covers s whole on a GPU and no operand is a view of s, s gets
// a fresh buffer, which the op writes, and its old buffer moves to a new
// storage that those results read from then on (copy on write): they
// stay pending, and a result nobody reads again (the forward products of
// a training step, read by nothing after the optimizer's update) costs
// nothing. src is then a view of the old values, for the op to read, and
// done releases it once the op is recorded. Otherwise the readers get
// a copy of s or are realized now (prepareWrite), src is t and done does
// nothing.
func (t *Tensor) detachReaders(ys []*Tensor) (src *Tensor, done func()) {
	s := t.ref.s
	if !t.coversStorage() || t.Device().Kind == KindCPU || s.pend.Load() != nil || !s.hasPendingReaders() ||
		slices.ContainsFunc(ys, func(y *Tensor) bool { return y.ref.s == s }) {
		s.prepareWrite()
		return t, func() {}
	}
	buf, err := alloc(s.dtype, s.n, s.device)
	if err != nil {
		s.prepareWrite()
		return t, func() {}
	}
	countAlloc(s.dtype, s.n)
	src = t.oldValues()
	old := src.ref.s
	s.rmu.Lock()
	readers := s.readers
	s.readers = nil
	s.rmu.Unlock()
	for _, r := range readers {
		r.moveLeaves(s, old)
	}
	s.buf = buf
	return src, old.release
}

// oldValues shares the buffer of t's storage s, which t covers, with a
// new storage holding one reference (the caller's, released when the old
// values are no longer needed), and returns a view of it with t's
// layout, borrowing it: what an in-place op on t reads once the caller
// gives s another buffer (or none, until realized).
func (t *Tensor) oldValues() *Tensor {
	s := t.ref.s
	old := &storage{dtype: s.dtype, device: s.device, n: s.n, buf: s.buf}
	old.refs.Store(1)
	liveStorages.Add(1)
	src := &Tensor{dtype: t.dtype, ref: &ref{s: old, borrowed: true}}
	src.setLayout(t.shape, t.strides)
	return src
}

// coversStorage reports whether t is every element of its storage once,
// in order.
func (t *Tensor) coversStorage() bool {
	return t.offset == 0 && t.Numel() == t.ref.s.n && layout.IsContiguous(t.shape, t.strides)
}

// hasPendingReaders reports whether a pending storage reads s.
func (s *storage) hasPendingReaders() bool {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return slices.ContainsFunc(s.readers, func(r *storage) bool { return r.pend.Load() != nil })
}

// moveLeaves makes r's expression, if r is still pending, read old
// wherever it read from, moving the references and the reader entry.
func (r *storage) moveLeaves(from, to *storage) {
	e := r.pend.Load()
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.pend.Load() != e {
		return
	}
	moved := false
	for _, l := range e.leaves {
		if l.ref.s == from {
			to.refs.Add(1)
			l.ref.s = to
			from.release()
			moved = true
		}
	}
	if moved {
		to.addReader(r)
	}
}

// flushReaders realizes every pending storage that reads s, before an
// in-place op writes s.
func (s *storage) flushReaders() {
	s.rmu.Lock()
	rs := slices.Clone(s.readers)
	s.rmu.Unlock()
	for _, r := range rs {
		r.realize()
	}
}
