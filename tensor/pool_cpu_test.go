package tensor

import (
	"sync"
	"testing"
)

// TestCPUPoolEvictsLeastRecentlyUsed fills a small pool with buffers of
// one size class, uses another class, and checks that releasing buffers
// of the new class evicts the old class's buffers rather than dropping
// the new ones, that the bytes held stay under the limit, and that the
// CPU budget gets the evicted bytes back.
func TestCPUPoolEvictsLeastRecentlyUsed(t *testing.T) {
	const mib = 1 << 20
	p := &slicePool{limit: mib}
	reserved := cpuMem.reserved.Load()
	get := func(n int) any {
		b, err := p.get(Float32, n)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var old []any
	for range 4 { // 4 × 256 KiB: the pool is full
		old = append(old, get(64<<10))
	}
	for _, b := range old {
		p.put(b)
	}
	if p.cached != mib {
		t.Fatalf("cached %d bytes, want %d", p.cached, mib)
	}
	a, b := get(128<<10), get(128<<10) // 2 × 512 KiB of a new class
	p.put(a)
	p.put(b)
	if p.cached > mib {
		t.Fatalf("cached %d bytes, over the %d limit", p.cached, mib)
	}
	if n := len(*p.list(poolKey{Float32, 128 << 10})); n != 2 {
		t.Errorf("%d buffers of the class in use cached, want 2: the pool kept the old class instead", n)
	}
	if n := len(*p.list(poolKey{Float32, 64 << 10})); n != 0 {
		t.Errorf("%d buffers of the old class still cached, want 0", n)
	}
	// The new class's buffers come back from the pool, not fresh.
	got := get(128 << 10)
	if len(*p.list(poolKey{Float32, 128 << 10})) != 1 {
		t.Errorf("a get of the cached class did not take a cached buffer")
	}
	p.put(got)
	p.emptyCache()
	if d := cpuMem.reserved.Load() - reserved; d != 0 {
		t.Errorf("the budget holds %d bytes more than before the test, want 0", d)
	}
}

// TestCPUPoolConcurrentEviction runs goroutines that take and release
// buffers of several classes from a small pool at once, so that puts
// evict while others get: the pool must stay under its limit and give
// the budget back every byte (run with -race).
func TestCPUPoolConcurrentEviction(t *testing.T) {
	p := &slicePool{limit: 1 << 20}
	reserved := cpuMem.reserved.Load()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := 1 << (12 + (g+i)%6) // 4 Ki to 128 Ki floats
				b, err := p.get(Float32, n)
				if err != nil {
					t.Error(err)
					return
				}
				p.put(b)
			}
		}()
	}
	wg.Wait()
	p.mu.Lock()
	cached := p.cached
	p.mu.Unlock()
	if cached > 1<<20 {
		t.Errorf("cached %d bytes, over the %d limit", cached, 1<<20)
	}
	p.emptyCache()
	if d := cpuMem.reserved.Load() - reserved; d != 0 {
		t.Errorf("the budget holds %d bytes more than before the test, want 0", d)
	}
}
