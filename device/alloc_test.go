package device

import (
	"errors"
	"testing"
)

// fakeDev is a rawDevice without a GPU. It fails the test when a block is
// released while work that references it has not completed.
type fakeDev struct {
	t         *testing.T
	created   int
	released  []int64
	completed *uint64
	failNext  bool
}

func (f *fakeDev) createBuffer(size int64) (any, error) {
	if f.failNext {
		f.failNext = false
		return nil, errors.New("driver refused")
	}
	f.created++
	return f.created, nil
}

func (f *fakeDev) releaseBuffer(b *block) {
	if b.lastUse > *f.completed {
		f.t.Errorf("block %d released while batch %d may still use it (completed %d)", b.id, b.lastUse, *f.completed)
	}
	f.released = append(f.released, b.size)
}

func newFake(t *testing.T, budget int64, noCache bool) (*allocator, *fakeDev, *uint64) {
	completed := new(uint64)
	f := &fakeDev{t: t, completed: completed}
	return newAllocator(f, budget, noCache), f, completed
}

func TestClassSize(t *testing.T) {
	cases := map[int64]int64{
		0: 256, 1: 256, 256: 256, 257: 512, 1000: 1024, 4097: 8192,
		1 << 20: 1 << 20, 1<<20 + 1: 1<<20 + 1<<18, 3 << 20: 3 << 20,
		3<<20 + 1: 3<<20 + 1<<19, 7 << 20: 7 << 20, 7<<20 + 1: 8 << 20,
		129 << 20: 160 << 20,
	}
	for n, want := range cases {
		if got := classSize(n); got != want {
			t.Errorf("classSize(%d) = %d, want %d", n, got, want)
		}
	}
	for n := int64(1); n < 64<<20; n = n*5/4 + 1 {
		c := classSize(n)
		if c < n || (n > 1<<20 && float64(c) > 1.25*float64(n)+1) {
			t.Fatalf("classSize(%d) = %d", n, c)
		}
	}
}

func TestBlockSizeNearMaxBuffer(t *testing.T) {
	a, _, _ := newFake(t, 8<<30, false)
	a.maxBlock = 2<<30 - 1 // lavapipe's maxBufferSize
	if got := a.blockSize(1900 << 20); got != 1900<<20 {
		t.Errorf("blockSize(1900 MiB) = %d, want the request rounded to 256", got)
	}
	if got := a.blockSize(1000); got != 1024 {
		t.Errorf("blockSize(1000) = %d", got)
	}
	if got := a.blockSize(2 << 30); got <= a.maxBlock {
		t.Errorf("blockSize(2 GiB) = %d fits a %d limit", got, a.maxBlock)
	}
}

func TestAllocatorReuse(t *testing.T) {
	a, f, _ := newFake(t, 1<<30, false)
	b1, _ := a.alloc(1000, 1, 0)
	a.free(b1, 1, 0)
	b2, _ := a.alloc(700, 1, 0) // same class
	if b2 != b1 || f.created != 1 {
		t.Fatalf("same class not reused")
	}
	big, _ := a.alloc(4000, 1, 0) // 4 KiB class
	a.free(big, 1, 0)
	s, _ := a.alloc(2500, 1, 0) // 4 KiB block within 2x of the 4 KiB class: reused
	if s != big {
		t.Fatalf("best fit within the class")
	}
	a.free(s, 1, 0)
	tiny, _ := a.alloc(300, 1, 0) // 512 B class: a 4 KiB block is more than 2x
	if tiny == big {
		t.Fatalf("a block more than twice the class was reused")
	}
	mid, _ := a.alloc(1500, 1, 0) // 2 KiB class: 4 KiB is within 2x
	if mid != big {
		t.Fatalf("next class up within 2x not reused")
	}
	// LIFO within a class.
	x, _ := a.alloc(256, 1, 0)
	y, _ := a.alloc(256, 1, 0)
	a.free(x, 1, 0)
	a.free(y, 1, 0)
	if z, _ := a.alloc(256, 1, 0); z != y {
		t.Fatalf("free list is not LIFO")
	}
	st := a.stats()
	if st.CacheHits != 4 || st.Allocs != 9 || st.Frees != 5 {
		t.Fatalf("stats %+v", st)
	}
}

// A block freed while the open batch references it is cached at once and
// handed out again inside that batch (the reuse rule of reference 5.3). It
// keeps its lastUse stamp, which is what makes GPU.Write stage uploads into
// it, and it is never released before that batch finished.
func TestAllocatorReuseWithinBatch(t *testing.T) {
	a, f, completed := newFake(t, 1<<30, false)
	b, _ := a.alloc(512, 1, 0)
	b.lastUse = 1 // the open batch (1) reads it
	a.free(b, 1, 0)
	if st := a.stats(); st.Pending != 512 || st.Allocated != 0 {
		t.Fatalf("after free: %+v", st)
	}
	c, _ := a.alloc(512, 1, 0)
	if c != b || f.created != 1 {
		t.Fatalf("block freed in the open batch not reused within it")
	}
	if c.lastUse != 1 {
		t.Fatalf("reused block lost its lastUse stamp (%d): an upload would jump ahead of the batch", c.lastUse)
	}
	if st := a.stats(); st.Pending != 0 || st.CacheHits != 1 {
		t.Fatalf("after reuse: %+v", st)
	}
	// Emptying or trimming the cache inside the batch releases nothing the
	// batch references (the fake fails the test if it did).
	a.free(c, 1, 0)
	if n := a.emptyCache(0); n != 0 || len(f.released) != 0 {
		t.Fatalf("emptyCache released %d bytes the open batch references", n)
	}
	a.trim(1<<30, 0)
	if len(f.released) != 0 || a.stats().Reserved != 512 {
		t.Fatalf("trim released a block the open batch references")
	}
	// The batch is submitted: nothing cached is pending; the block is
	// reused, and freed again it is not pending for batch 2.
	a.flushed()
	if st := a.stats(); st.Pending != 0 {
		t.Fatalf("pending after the flush: %+v", st)
	}
	d, _ := a.alloc(512, 2, 0)
	if d != b {
		t.Fatalf("block of a submitted batch not reused")
	}
	a.free(d, 2, 0)
	if st := a.stats(); st.Pending != 0 {
		t.Fatalf("block last used by batch 1 counted pending in batch 2: %+v", st)
	}
	// In flight (batch 1 not completed): still not released.
	if n := a.emptyCache(0); n != 0 {
		t.Fatalf("released a block of an in-flight batch")
	}
	*completed = 1
	if n := a.emptyCache(1); n != 512 || len(f.released) != 1 {
		t.Fatalf("emptyCache after completion released %d bytes", n)
	}
}

// The chain y = f(x); free(x) repeated at the default batch cap: with
// intra-batch reuse two blocks serve the whole chain. (Before, every block
// freed in the open batch waited for the flush, and reserved memory grew
// to batch cap x tensor size: 65 blocks for 2 in use.)
func TestAllocatorChainWithinBatch(t *testing.T) {
	const size, steps, batchCap, maxInFlight = 1 << 20, 100, DefaultBatchCap, 2
	a, f, completed := newFake(t, 1<<30, false)
	open, cmds := uint64(1), 0
	var inflight []uint64
	x, _ := a.alloc(size, open, *completed)
	for range steps {
		y, err := a.alloc(size, open, *completed)
		if err != nil {
			t.Fatal(err)
		}
		x.lastUse, y.lastUse = open, open // one dispatch reads x, writes y
		a.free(x, open, *completed)
		x = y
		if cmds++; cmds == batchCap {
			a.flushed()
			inflight = append(inflight, open)
			open++
			cmds = 0
			for len(inflight) > maxInFlight {
				*completed, inflight = inflight[0], inflight[1:]
				a.retired(*completed)
			}
		}
		a.emptyCache(*completed) // never releases what unfinished work uses
	}
	st := a.stats()
	t.Logf("peak allocated %s, peak reserved %s, %d misses, %d created", FormatBytes(st.PeakAllocated), FormatBytes(st.PeakReserved), st.CacheMisses, f.created)
	if st.PeakAllocated != 2*size || st.PeakReserved > 3*st.PeakAllocated {
		t.Errorf("peak reserved %d for peak allocated %d", st.PeakReserved, st.PeakAllocated)
	}
	if st.CacheMisses > 3 {
		t.Errorf("%d cache misses for a chain of %d ops", st.CacheMisses, steps)
	}
}

// A random mix of allocations, recorded work, frees, flushes, retirements,
// cache emptying and a tight budget keeps the allocator's invariants: no
// block is released while unfinished work references it (the fake checks),
// a reused block carries the newest stamp of the work that used it, the
// byte counts match the blocks, and Pending counts exactly the cached
// blocks the open batch references.
func TestAllocatorRandomized(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		a, _, completed := newFake(t, 64<<10, noCache)
		rng := uint64(0x9e3779b97f4a7c15)
		rand := func(n int) int {
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			return int(rng % uint64(n))
		}
		open := uint64(1)
		stamp := map[uint64]uint64{} // block id -> newest batch that used it
		var live []*block
		sizes := []int64{100, 256, 1000, 1500, 4096, 5000, 9000}
		for step := range 20000 {
			switch op := rand(100); {
			case op < 35:
				b, err := a.alloc(sizes[rand(len(sizes))], open, *completed)
				if err == errOverBudget {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if b.lastUse != stamp[b.id] {
					t.Fatalf("step %d: block %d handed out with lastUse %d, last used by batch %d", step, b.id, b.lastUse, stamp[b.id])
				}
				live = append(live, b)
			case op < 60 && len(live) > 0: // a dispatch uses some live blocks
				for range 1 + rand(3) {
					b := live[rand(len(live))]
					b.lastUse, stamp[b.id] = open, open
				}
			case op < 85 && len(live) > 0:
				i := rand(len(live))
				a.free(live[i], open, *completed)
				live = append(live[:i], live[i+1:]...)
			case op < 93:
				a.flushed()
				open++
			case op < 98:
				if *completed+1 < open {
					*completed++
					a.retired(*completed)
				}
			default:
				a.emptyCache(*completed)
			}
			var inUse, reserved, pending int64
			for _, b := range live {
				if b.state != stateInUse {
					t.Fatalf("step %d: live block %d in state %d", step, b.id, b.state)
				}
				inUse += b.size
			}
			for _, b := range a.live {
				reserved += b.size
			}
			for _, l := range a.lists {
				for _, b := range l {
					if b.state != stateCached {
						t.Fatalf("step %d: block %d in a free list in state %d", step, b.id, b.state)
					}
					if b.lastUse >= open {
						pending += b.size
					}
				}
			}
			st := a.stats()
			if st.Allocated != inUse || st.Reserved != reserved || st.Pending != pending || st.Reserved > st.Budget {
				t.Fatalf("step %d (noCache %v): stats %+v; want allocated %d reserved %d pending %d", step, noCache, st, inUse, reserved, pending)
			}
		}
	}
}

// The budget: cached blocks whose work completed are released (largest
// first) to make room; blocks in flight or referenced by the open batch
// never are; otherwise errOverBudget.
func TestAllocatorBudget(t *testing.T) {
	a, f, completed := newFake(t, 4096, false)
	x, _ := a.alloc(2048, 1, 0)
	y, _ := a.alloc(1024, 1, 0)
	z, _ := a.alloc(1024, 1, 0)
	x.lastUse, y.lastUse, z.lastUse = 2, 1, 3
	a.free(x, 4, 1) // cached, in flight (batch 2)
	a.free(y, 4, 1) // cached, completed
	a.free(z, 4, 1) // cached, in flight
	*completed = 1
	if _, err := a.alloc(4096, 4, 1); err != errOverBudget {
		t.Fatalf("want errOverBudget, got %v", err)
	}
	if len(f.released) != 1 || f.released[0] != 1024 {
		t.Fatalf("released %v, want only the completed block", f.released)
	}
	*completed = 3
	if _, err := a.alloc(4096, 4, 3); err != nil {
		t.Fatalf("after completion: %v", err)
	}
	if st := a.stats(); st.Reserved != 4096 || st.Releases != 3 {
		t.Fatalf("stats %+v", st)
	}
	// A cached block the open batch references is not released by
	// trimming; once its batch completed, it is.
	a2, f2, completed2 := newFake(t, 2048, false)
	p, _ := a2.alloc(1024, 5, 4)
	p.lastUse = 5
	a2.free(p, 5, 4)
	if _, err := a2.alloc(2048, 5, 4); err != errOverBudget || len(f2.released) != 0 {
		t.Fatalf("block of the open batch trimmed: %v", err)
	}
	a2.flushed()
	*completed2 = 5
	if _, err := a2.alloc(2048, 6, 5); err != nil || len(f2.released) != 1 {
		t.Fatalf("after its batch completed: %v, released %v", err, f2.released)
	}
	// Driver errors are passed on.
	a3, f3, _ := newFake(t, 1<<20, false)
	f3.failNext = true
	if _, err := a3.alloc(10, 1, 0); err == nil || err == errOverBudget {
		t.Fatalf("driver error: %v", err)
	}
}

func TestAllocatorEmptyCache(t *testing.T) {
	a, f, completed := newFake(t, 1<<30, false)
	var bs []*block
	for i := range 4 {
		b, _ := a.alloc(int64(256<<i), 5, 0)
		b.lastUse = uint64(i + 1)
		bs = append(bs, b)
	}
	for _, b := range bs {
		a.free(b, 5, 0)
	}
	*completed = 2
	if n := a.emptyCache(2); n != 256+512 {
		t.Fatalf("emptyCache released %d bytes", n)
	}
	if st := a.stats(); st.Reserved != 1024+2048 || len(f.released) != 2 {
		t.Fatalf("stats %+v", st)
	}
	*completed = 4
	a.emptyCache(4)
	st := a.stats()
	if st.Reserved != 0 || st.Allocated != 0 || st.PeakReserved != 3840 {
		t.Fatalf("stats %+v", st)
	}
	for _, c := range st.Classes {
		if c.Cached != 0 || c.InUse != 0 || c.Misses != 1 {
			t.Errorf("class %+v", c)
		}
	}
}

func TestAllocatorNoCache(t *testing.T) {
	a, f, completed := newFake(t, 1<<30, true)
	b, _ := a.alloc(256, 1, 0)
	b.lastUse = 1
	a.free(b, 1, 0) // open batch references it: deferred
	if len(f.released) != 0 {
		t.Fatalf("released before its batch completed")
	}
	if c, _ := a.alloc(256, 1, 0); c == b {
		t.Fatalf("no-cache mode reused a block")
	}
	a.flushed()
	a.retired(0)
	if len(f.released) != 0 {
		t.Fatalf("released before its batch completed")
	}
	*completed = 1
	a.retired(1)
	if len(f.released) != 1 {
		t.Fatalf("not released after its batch completed")
	}
	c, _ := a.alloc(256, 2, 1) // never used: released at once
	a.free(c, 2, 1)
	if len(f.released) != 2 || a.stats().CacheHits != 0 || a.stats().Reserved != 256 {
		t.Fatalf("no-cache: %+v", a.stats())
	}
}

func TestAllocatorReleaseAll(t *testing.T) {
	a, f, _ := newFake(t, 1<<30, false)
	x, _ := a.alloc(256, 1, 0)
	y, _ := a.alloc(1024, 1, 0)
	a.free(y, 1, 0)
	_ = x
	a.releaseAll()
	if st := a.stats(); st.Reserved != 0 || st.Allocated != 0 || len(f.released) != 2 {
		t.Fatalf("releaseAll: %+v", st)
	}
	a.free(x, 1, 0) // after releaseAll: ignored
}

func TestOOMErrorMessage(t *testing.T) {
	err := error(&OOMError{Requested: 3 << 30, Block: 3 << 30, Allocated: 1 << 30, Reserved: 2 << 30, Budget: 2 << 30})
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatal("OOMError does not wrap ErrOutOfMemory")
	}
	for _, w := range []string{"3.00 GiB", "1.00 GiB", "2.00 GiB", "TESSERA_GPU_BUDGET"} {
		if !contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	b := error(&BindingTooLargeError{Binding: 2, Size: 129 << 20, Limit: 128 << 20})
	if !errors.Is(b, ErrBindingTooLarge) || !contains(b.Error(), "134217728") {
		t.Errorf("BindingTooLargeError: %v", b)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
