package tensor

import (
	"fmt"
	"sync"
)

// GPU index kernels cannot report an out-of-range index (they skip it),
// so index ops check the range before dispatching. Reading the indices
// back would cost a device sync per op; instead a GPU storage remembers
// the range of its int32 values when it is known for free: on upload
// from the host and for the indices of ArgMax-like ops. Only indices
// computed on the GPU some other way are reduced and read back once per
// version.

// indexRange is the known [lo, hi] of an int32 storage at a version.
type indexRange struct {
	mu      sync.Mutex
	known   bool
	version uint64
	lo, hi  int64
}

func (s *storage) setIndexRange(lo, hi int64) {
	s.idx.mu.Lock()
	s.idx.known, s.idx.version, s.idx.lo, s.idx.hi = true, s.version.Load(), lo, hi
	s.idx.mu.Unlock()
}

func (s *storage) knownIndexRange() (lo, hi int64, ok bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if !s.idx.known || s.idx.version != s.version.Load() {
		return 0, 0, false
	}
	return s.idx.lo, s.idx.hi, true
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
// outside [0, size) (CPU kernels check their indices themselves).
func checkGPUIndexRange(op string, index *Tensor, size int, ts ...*Tensor) {
	if index.Device().Kind != KindGPU || index.Numel() == 0 {
		return
	}
	s := index.ref.s
	lo, hi, ok := s.knownIndexRange()
	if !ok {
		// The storage range covers every view of it: conservative but
		// exact for the whole-storage indices ops normally get.
		whole := rawView(index, []int{s.n}, []int{1}, 0)
		lo, hi = int64(whole.Min().Item()), int64(whole.Max().Item())
		s.setIndexRange(lo, hi)
	}
	if lo < 0 || hi >= int64(size) {
		bad := hi
		if lo < 0 {
			bad = lo
		}
		fail(op, ErrIndex, fmt.Sprintf("index %d is out of bounds for a dimension of size %d", bad, size), ts...)
	}
}
