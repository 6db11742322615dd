package device

import (
	"slices"
	"sort"
)

// Buffer is a caller's handle on one allocation. It is backed by one block
// (one driver buffer with usage Storage|CopySrc|CopyDst) that may be larger
// than the request.
type Buffer struct {
	gpu    *GPU
	blk    *block
	size   int64
	freed  bool                // guarded by gpu.mu
	failed *CommandFailedError // guarded by gpu.mu: set when a failed batch could not produce its contents
}

// Size returns the requested size in bytes (the block may be larger).
func (b *Buffer) Size() int64 {
	if b == nil {
		return 0
	}
	return b.size
}

// Block sizes: at least minBlock; powers of two below subclassFrom; from
// there on, four sub-classes per power of two (1, 1.25, 1.5, 1.75 x 2^k),
// as PyTorch's roundup_power2_divisions, so waste stays under 25 %.
const (
	minBlock     = 256
	subclassFrom = 1 << 20
)

// classSize returns the block size for a request of n bytes.
func classSize(n int64) int64 {
	if n <= minBlock {
		return minBlock
	}
	if n <= subclassFrom {
		c := int64(minBlock)
		for c < n {
			c <<= 1
		}
		return c
	}
	p := int64(1)
	for p<<1 <= n {
		p <<= 1
	}
	step := p / 4
	return (n + step - 1) / step * step
}

type blockState uint8

const (
	stateInUse    blockState = iota // handed out to a caller
	stateCached                     // in a free list
	stateDeferred                   // no-cache mode: released once its work retired
	stateReleased                   // returned to the driver
)

// block is one driver buffer owned by the allocator. Its mutable fields
// (raw, lastUse, state, bgKeys) are guarded by its GPU's mu.
type block struct {
	id      uint64
	raw     any    // driver handle (*wgpu.Buffer under cgo, anything for a fake)
	size    int64  // bytes; also its size class
	lastUse uint64 // last batch whose recorded work references the block (0: none)
	state   blockState
	bgKeys  []string // bind-group cache entries that reference the block
}

// rawDevice creates and releases driver buffers. The GPU implements it over
// wgpu; tests implement it with a fake, so the bookkeeping is testable
// without a GPU. releaseBuffer is only called for blocks whose work has
// retired (lastUse <= completed batch).
type rawDevice interface {
	createBuffer(size int64) (any, error)
	releaseBuffer(b *block)
}

type classCounters struct {
	inUse        int
	hits, misses int64
}

// allocator is the caching allocator's bookkeeping: size classes, LIFO free
// lists, best-fit reuse up to twice the class, deferred release in no-cache
// mode, the budget and statistics. It is not safe for concurrent use: its
// GPU calls it with GPU.mu held. Batches are numbered from 1 by the caller:
// "open" is the batch being recorded, "completed" the newest batch known to
// have finished.
//
// The reuse rule (reference/webgpu-ml.md 5.3, PyTorch's same-stream rule):
// a freed block goes back to its free list at once, keeping its lastUse
// stamp, even while recorded but unsubmitted work of the open batch
// references it, and the next allocation of its class may hand it out
// inside that same batch. That is safe because everything that writes a
// block is ordered after the work recorded before it: kernels and copies
// and clears are recorded in the same encoder, and wgpu puts a barrier
// between a read and a later write of a buffer; GPU.Write uploads through a
// staging copy in the encoder whenever the open batch references the block
// (lastUse >= open) and uses queue.WriteBuffer, which runs before the open
// batch, only otherwise. What must wait for the work is giving the block
// back to the driver: release (emptyCache, trim, no-cache mode) takes only
// blocks whose lastUse has completed. Nothing maps allocator blocks
// (mappedAtCreation is used for separate staging buffers only).
type allocator struct {
	dev      rawDevice
	budget   int64
	noCache  bool
	maxBlock int64 // largest driver buffer (0: no limit)

	nextID   uint64
	live     map[uint64]*block  // every block not yet released
	lists    map[int64][]*block // class size -> cached blocks (LIFO)
	sizes    []int64            // sorted class sizes that have a free list
	deferred []*block
	classes  map[int64]*classCounters

	// pendingBytes counts the cached blocks that the open batch references
	// (lastUse >= open): reusable now as kernel outputs, uploads into them
	// are staged, and they cannot be released before that batch finished.
	// A cached block's lastUse does not change (nothing can record work on
	// a freed buffer), so the count changes only when such a block is
	// cached or taken, and drops to zero when the batch is submitted.
	pendingBytes int64

	allocated, reserved         int64
	peakAllocated, peakReserved int64
	allocs, frees, hits, misses int64
	releases                    int64
}

func newAllocator(dev rawDevice, budget int64, noCache bool) *allocator {
	if budget <= 0 {
		budget = DefaultBudget
	}
	return &allocator{
		dev: dev, budget: budget, noCache: noCache,
		live:    map[uint64]*block{},
		lists:   map[int64][]*block{},
		classes: map[int64]*classCounters{},
	}
}

func (a *allocator) counters(size int64) *classCounters {
	c := a.classes[size]
	if c == nil {
		c = &classCounters{}
		a.classes[size] = c
	}
	return c
}

// alloc returns a block of at least n bytes. It reuses a cached block of the
// class, else the smallest cached block up to twice the class; else it
// creates one, first releasing retired cached blocks (largest first) when
// the budget requires. It returns errOverBudget when the block does not fit.
// A reused block may be referenced by the open batch (its lastUse is kept):
// see the reuse rule on allocator.
func (a *allocator) alloc(n int64, open, completed uint64) (*block, error) {
	cs := a.blockSize(n)
	if b := a.take(cs, open); b != nil {
		a.counters(cs).hits++
		a.hits++
		a.handOut(b)
		return b, nil
	}
	if a.reserved+cs > a.budget {
		a.trim(a.reserved+cs-a.budget, completed)
		if a.reserved+cs > a.budget {
			return nil, errOverBudget
		}
	}
	raw, err := a.dev.createBuffer(cs)
	if err != nil {
		return nil, err
	}
	a.nextID++
	b := &block{id: a.nextID, raw: raw, size: cs}
	a.live[b.id] = b
	a.reserved += cs
	a.peakReserved = max(a.peakReserved, a.reserved)
	a.counters(cs).misses++
	a.misses++
	a.handOut(b)
	return b, nil
}

// blockSize is classSize, except that a request the size class would push
// above the device's maximum buffer size gets a block of its own size
// (rounded to minBlock) instead.
func (a *allocator) blockSize(n int64) int64 {
	cs := classSize(n)
	if a.maxBlock > 0 && cs > a.maxBlock {
		if r := (n + minBlock - 1) / minBlock * minBlock; r <= a.maxBlock {
			return r
		}
	}
	return cs
}

func (a *allocator) handOut(b *block) {
	b.state = stateInUse
	a.counters(b.size).inUse++
	a.allocated += b.size
	a.peakAllocated = max(a.peakAllocated, a.allocated)
	a.allocs++
}

// take pops a cached block of class cs, or the smallest cached block of a
// class up to 2*cs (LIFO within a class: the block freed last is the most
// likely to be in a cache).
func (a *allocator) take(cs int64, open uint64) *block {
	i, _ := slices.BinarySearch(a.sizes, cs)
	for ; i < len(a.sizes) && a.sizes[i] <= 2*cs; i++ {
		s := a.sizes[i]
		if l := a.lists[s]; len(l) > 0 {
			b := l[len(l)-1]
			l[len(l)-1] = nil
			a.lists[s] = l[:len(l)-1]
			if b.lastUse >= open {
				a.pendingBytes -= b.size
			}
			return b
		}
	}
	return nil
}

func (a *allocator) push(b *block) {
	b.state = stateCached
	l, ok := a.lists[b.size]
	if !ok {
		i, _ := slices.BinarySearch(a.sizes, b.size)
		a.sizes = slices.Insert(a.sizes, i, b.size)
	}
	a.lists[b.size] = append(l, b)
}

// free takes back a block. It is cached at once, even when the open batch
// references it (it keeps its lastUse, so uploads into it are staged and it
// is not released before that batch finished). In no-cache mode the block
// is released once its last batch has completed.
func (a *allocator) free(b *block, open, completed uint64) {
	if b.state != stateInUse {
		return
	}
	a.counters(b.size).inUse--
	a.allocated -= b.size
	a.frees++
	switch {
	case a.noCache:
		b.state = stateDeferred
		if b.lastUse <= completed {
			a.release(b)
		} else {
			a.deferred = append(a.deferred, b)
		}
	default:
		if b.lastUse >= open {
			a.pendingBytes += b.size
		}
		a.push(b)
	}
}

// flushed is called after the open batch was submitted (or discarded) and
// the next batch opened: no cached block is referenced by the open batch
// any more.
func (a *allocator) flushed() {
	a.pendingBytes = 0
}

// retired is called when batch completed (and all before it) finished.
func (a *allocator) retired(completed uint64) {
	keep := a.deferred[:0]
	for _, b := range a.deferred {
		if b.lastUse <= completed {
			a.release(b)
		} else {
			keep = append(keep, b)
		}
	}
	clear(a.deferred[len(keep):])
	a.deferred = keep
}

// emptyCache releases every cached block whose work has completed and
// returns the bytes released.
func (a *allocator) emptyCache(completed uint64) int64 {
	var n int64
	for _, s := range a.sizes {
		l := a.lists[s]
		keep := l[:0]
		for _, b := range l {
			if b.lastUse <= completed {
				n += b.size
				a.release(b)
			} else {
				keep = append(keep, b)
			}
		}
		clear(l[len(keep):])
		a.lists[s] = keep
	}
	return n
}

// trim releases retired cached blocks, largest first, until need bytes were
// released or none is left.
func (a *allocator) trim(need int64, completed uint64) {
	var cand []*block
	for _, s := range a.sizes {
		for _, b := range a.lists[s] {
			if b.lastUse <= completed {
				cand = append(cand, b)
			}
		}
	}
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].size > cand[j].size })
	var got int64
	for _, b := range cand {
		if got >= need {
			break
		}
		l := a.lists[b.size]
		if i := slices.Index(l, b); i >= 0 {
			a.lists[b.size] = slices.Delete(l, i, i+1)
		}
		got += b.size
		a.release(b)
	}
}

func (a *allocator) release(b *block) {
	if b.state == stateReleased {
		return
	}
	b.state = stateReleased
	a.reserved -= b.size
	a.releases++
	delete(a.live, b.id)
	a.dev.releaseBuffer(b)
}

// releaseAll releases every block, in use or not (Close).
func (a *allocator) releaseAll() {
	ids := make([]uint64, 0, len(a.live))
	for id := range a.live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b := a.live[id]
		if b.state == stateInUse {
			a.counters(b.size).inUse--
			a.allocated -= b.size
		}
		a.release(b)
	}
	a.lists = map[int64][]*block{}
	a.sizes = nil
	a.deferred = nil
	a.pendingBytes = 0
}

// oomError is the typed out-of-memory error for a request of requested
// bytes that needed a block of block bytes.
func (a *allocator) oomError(requested, block int64) *OOMError {
	return &OOMError{Requested: requested, Block: block, Allocated: a.allocated, Reserved: a.reserved, Budget: a.budget}
}

func (a *allocator) resetPeak() {
	a.peakAllocated = a.allocated
	a.peakReserved = a.reserved
}

func (a *allocator) stats() MemStats {
	s := MemStats{
		Allocated: a.allocated, Reserved: a.reserved,
		PeakAllocated: a.peakAllocated, PeakReserved: a.peakReserved,
		Pending: a.pendingBytes,
		Allocs:  a.allocs, Frees: a.frees, CacheHits: a.hits, CacheMisses: a.misses,
		Releases: a.releases, Budget: a.budget,
	}
	sizes := make([]int64, 0, len(a.classes))
	for sz := range a.classes {
		sizes = append(sizes, sz)
	}
	slices.Sort(sizes)
	for _, sz := range sizes {
		c := a.classes[sz]
		s.Classes = append(s.Classes, ClassStats{Size: sz, Cached: len(a.lists[sz]), InUse: c.inUse, Hits: c.hits, Misses: c.misses})
	}
	return s
}
