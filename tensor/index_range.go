package tensor

import (
	"fmt"
	"math"
	"sync"
)

// GPU index kernels cannot report an out-of-range index (they skip it),
// so index ops check the range before dispatching. Reading the indices
// back would cost a device sync per op; instead a storage remembers the
// range of its int32 values when it is known for free: exactly on upload
// from the host and for Full, as bounds for the indices of ArgMax-like
// ops and for Where of two known ranges (cross-entropy's ignore_index
// masking). Bounds inside [0, size) settle a check; exact bounds outside
// it fail at once; anything else is checked on the device. Only ops
// that write a whole fresh storage record a range; later writes bump the
// version (in-place ops) or forget it. Indices computed on the GPU some
// other way are reduced and read back once per version.

// indexRange bounds the int32 values of a storage at a version: every
// value lies in [lo, hi], and when exact is set lo and hi occur.
type indexRange struct {
	mu      sync.Mutex
	known   bool
	exact   bool
	version uint64
	lo, hi  int64
}

// setIndexRange records that the values lie in [lo, hi]; exact says the
// bounds are the actual minimum and maximum.
func (s *storage) setIndexRange(lo, hi int64, exact bool) {
	s.idx.mu.Lock()
	s.idx.known, s.idx.exact, s.idx.version, s.idx.lo, s.idx.hi = true, exact, s.version.Load(), lo, hi
	s.idx.mu.Unlock()
}

func (s *storage) forgetIndexRange() {
	s.idx.mu.Lock()
	s.idx.known = false
	s.idx.mu.Unlock()
}

// knownIndexRange returns the recorded bounds, if any are current.
func (s *storage) knownIndexRange() (lo, hi int64, exact, ok bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if !s.idx.known || s.idx.version != s.version.Load() {
		return 0, 0, false, false
	}
	return s.idx.lo, s.idx.hi, s.idx.exact, true
}

// int32Range returns the smallest and largest of vals (0, -1 when empty).
func int32Range(vals []int32) (lo, hi int64) {
	if len(vals) == 0 {
		return 0, -1
	}
	lo, hi = int64(vals[0]), int64(vals[0])
	for _, v := range vals[1:] {
		lo, hi = min(lo, int64(v)), max(hi, int64(v))
	}
	return lo, hi
}

// checkGPUIndexRange panics with ErrIndex when an index on the GPU falls
// outside [0, size) (CPU kernels check their indices themselves). When
// the range is not known, the check runs on the GPU and is reported at
// the next read or Sync of that device, as CUDA reports device-side
// asserts: a readback here would stall every step that gathers with
// computed indices (cross-entropy with ignored targets does).
func checkGPUIndexRange(op string, index *Tensor, size int, ts ...*Tensor) {
	if index.Device().Kind != KindGPU || index.Numel() == 0 {
		return
	}
	lo, hi, exact, ok := index.ref.s.knownIndexRange()
	switch {
	case ok && lo >= 0 && hi < int64(size):
		return
	case !exact: // unknown, or bounds wider than the values: check on the device
		backendOf(index.Device()).(*gpuBackend).checks.add(op, index, size, ts)
		return
	}
	bad := hi
	if lo < 0 {
		bad = lo
	}
	fail(op, ErrIndex, fmt.Sprintf("index %d is out of bounds for a dimension of size %d", bad, size), ts...)
}

// deferredChecks are index checks recorded on a GPU and not yet read:
// word is a 0-d Int32 tensor on the device holding MaxInt32 minus the
// number (from 1) of the first failed check of ops, or 0.
type deferredChecks struct {
	mu   sync.Mutex
	word *Tensor
	ops  []deferredCheck
}

// deferredCheck describes an index op whose check runs on the GPU.
type deferredCheck struct {
	op   string
	size int
	err  *Error // the operands, for the message
}

// add records the check of index against [0, size) as GPU ops.
func (c *deferredChecks) add(op string, index *Tensor, size int, ts []*Tensor) {
	e := &Error{Op: op, Err: ErrIndex}
	for _, t := range ts {
		e.Shapes = append(e.Shapes, t.shape)
		e.DTypes = append(e.DTypes, t.dtype)
		e.Devices = append(e.Devices, t.Device())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops = append(c.ops, deferredCheck{op: op, size: size, err: e})
	id := len(c.ops)
	bad := index.LtScalar(0).LogicalOr(index.GeScalar(float64(size))).Cast(Int32).Reshape(-1)
	// The word keeps the maximum of the flags, and the first failed check
	// must win: check id flags MaxInt32-id when an index is bad, else 0.
	flag := bad.Amax(nil, false).MulScalar(float64(math.MaxInt32 - id))
	if c.word == nil {
		c.word = flag.Keep()
		return
	}
	prev := c.word
	c.word = prev.Maximum(flag).Keep()
	prev.Release()
}

// raise reads the pending checks of b, forgets them, and panics with the
// first failure's ErrIndex.
func (c *deferredChecks) raise(b *gpuBackend) {
	c.mu.Lock()
	word, ops := c.word, c.ops
	c.word, c.ops = nil, nil
	c.mu.Unlock()
	if word == nil {
		return
	}
	defer word.Release()
	data, err := b.g.Read(gbuf(word), int64(word.offset)*4, 4)
	b.check("read", err)
	if flag := int(decode(Int32, data).([]int32)[0]); flag > 0 {
		d := ops[math.MaxInt32-flag-1]
		d.err.Detail = fmt.Sprintf("an index outside [0, %d) reached the GPU; indices computed on the device are checked there and reported at the next read", d.size)
		panic(d.err)
	}
}
