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
	b1, _ := a.alloc(1000, 0)
	a.free(b1, 1, 0)
	b2, _ := a.alloc(700, 0) // same class
	if b2 != b1 || f.created != 1 {
		t.Fatalf("same class not reused")
	}
	big, _ := a.alloc(4000, 0) // 4 KiB class
	a.free(big, 1, 0)
	s, _ := a.alloc(2500, 0) // 4 KiB block within 2x of the 4 KiB class: reused
	if s != big {
		t.Fatalf("best fit within the class")
	}
	a.free(s, 1, 0)
	tiny, _ := a.alloc(300, 0) // 512 B class: a 4 KiB block is more than 2x
	if tiny == big {
		t.Fatalf("a block more than twice the class was reused")
	}
	mid, _ := a.alloc(1500, 0) // 2 KiB class: 4 KiB is within 2x
	if mid != big {
		t.Fatalf("next class up within 2x not reused")
	}
	// LIFO within a class.
	x, _ := a.alloc(256, 0)
	y, _ := a.alloc(256, 0)
	a.free(x, 1, 0)
	a.free(y, 1, 0)
	if z, _ := a.alloc(256, 0); z != y {
		t.Fatalf("free list is not LIFO")
	}
	st := a.stats()
	if st.CacheHits != 4 || st.Allocs != 9 || st.Frees != 5 {
		t.Fatalf("stats %+v", st)
	}
}

// Blocks freed while the open batch references them are not reused until
// the batch is flushed.
func TestAllocatorPending(t *testing.T) {
	a, f, _ := newFake(t, 1<<30, false)
	b, _ := a.alloc(512, 0)
	b.lastUse = 1 // the open batch (1) reads it
	a.free(b, 1, 0)
	if st := a.stats(); st.Pending != 512 {
		t.Fatalf("pending = %d", st.Pending)
	}
	c, _ := a.alloc(512, 0)
	if c == b || f.created != 2 {
		t.Fatalf("pending block reused inside its batch")
	}
	a.flushed()
	d, _ := a.alloc(512, 0)
	if d != b {
		t.Fatalf("pending block not reusable after the flush")
	}
	// A block last used by an earlier, submitted batch goes straight to the
	// free list.
	d.lastUse = 1
	a.free(d, 2, 0)
	if e, _ := a.alloc(512, 0); e != d {
		t.Fatalf("block of a submitted batch not reused")
	}
}

// The budget: cached blocks whose work completed are released (largest
// first) to make room; blocks in flight or pending never are; otherwise
// errOverBudget.
func TestAllocatorBudget(t *testing.T) {
	a, f, completed := newFake(t, 4096, false)
	x, _ := a.alloc(2048, 0)
	y, _ := a.alloc(1024, 0)
	z, _ := a.alloc(1024, 0)
	x.lastUse, y.lastUse, z.lastUse = 2, 1, 3
	a.free(x, 4, 1) // cached, in flight (batch 2)
	a.free(y, 4, 1) // cached, completed
	a.free(z, 4, 1) // cached, in flight
	*completed = 1
	if _, err := a.alloc(4096, 1); err != errOverBudget {
		t.Fatalf("want errOverBudget, got %v", err)
	}
	if len(f.released) != 1 || f.released[0] != 1024 {
		t.Fatalf("released %v, want only the completed block", f.released)
	}
	*completed = 3
	if _, err := a.alloc(4096, 3); err != nil {
		t.Fatalf("after completion: %v", err)
	}
	if st := a.stats(); st.Reserved != 4096 || st.Releases != 3 {
		t.Fatalf("stats %+v", st)
	}
	// Pending blocks are not released by trimming.
	a2, _, _ := newFake(t, 1024, false)
	p, _ := a2.alloc(1024, 0)
	p.lastUse = 5
	a2.free(p, 5, 4)
	if _, err := a2.alloc(512, 4); err != errOverBudget {
		t.Fatalf("pending block trimmed: %v", err)
	}
	// Driver errors are passed on.
	a3, f3, _ := newFake(t, 1<<20, false)
	f3.failNext = true
	if _, err := a3.alloc(10, 0); err == nil || err == errOverBudget {
		t.Fatalf("driver error: %v", err)
	}
}

func TestAllocatorEmptyCache(t *testing.T) {
	a, f, completed := newFake(t, 1<<30, false)
	var bs []*block
	for i := range 4 {
		b, _ := a.alloc(int64(256<<i), 0)
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
	b, _ := a.alloc(256, 0)
	b.lastUse = 1
	a.free(b, 1, 0) // open batch references it: deferred
	if len(f.released) != 0 {
		t.Fatalf("released before its batch completed")
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
	c, _ := a.alloc(256, 1) // never used: released at once
	a.free(c, 2, 1)
	if len(f.released) != 2 || a.stats().CacheHits != 0 || a.stats().Reserved != 0 {
		t.Fatalf("no-cache: %+v", a.stats())
	}
}

func TestAllocatorReleaseAll(t *testing.T) {
	a, f, _ := newFake(t, 1<<30, false)
	x, _ := a.alloc(256, 0)
	y, _ := a.alloc(1024, 0)
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
