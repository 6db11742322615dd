package gcpace

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestPacerAsksAtHalfAgain: no collection below the floor, one when the
// bytes in use grow by half the lowest count (or the floor), and none
// again until they grow from the new low.
func TestPacerAsksAtHalfAgain(t *testing.T) {
	p := &Pacer{Floor: 100}
	inUse := int64(0)
	count := func() int64 { return inUse }
	if p.Grown(100) {
		t.Fatal("asked to collect at the floor")
	}
	if !p.Grown(101) {
		t.Fatal("not asked to collect past the floor")
	}
	if p.Grown(1101) {
		t.Fatal("asked twice while the first collection is under way")
	}
	inUse = 1101
	p.Collect(count)
	if got := p.Collections(); got != 1 {
		t.Fatalf("Collections = %d, want 1", got)
	}
	// The low is now 1101: the next collection comes past 1101 + 550.
	if p.Grown(1651) {
		t.Fatal("asked to collect below half again the low")
	}
	if !p.Grown(1652) {
		t.Fatal("not asked to collect past half again the low")
	}
	inUse = 1652
	p.Collect(count)
	p.Shrunk(0)
	if p.Grown(100) || !p.Grown(101) {
		t.Fatal("after everything was freed, the floor should pace again")
	}
}

// TestPacerCollectFreesDropped: Collect runs the collector, so the
// cleanup of an unreachable object gives its bytes back before the new
// cycle starts from what is in use.
func TestPacerCollectFreesDropped(t *testing.T) {
	p := &Pacer{Floor: 1}
	var inUse atomic.Int64
	drop := func() {
		buf := new([1 << 16]byte)
		if !p.Grown(inUse.Add(int64(len(buf)))) {
			t.Fatal("not asked to collect past a floor of 1 byte")
		}
		runtime.AddCleanup(buf, func(n int64) { p.Shrunk(inUse.Add(-n)) }, int64(len(buf)))
	}
	drop()
	// On a loaded machine the cleanup goroutine may miss one wait.
	for i := 0; i < 10 && inUse.Load() != 0; i++ {
		p.Collect(inUse.Load)
	}
	if inUse.Load() != 0 {
		t.Fatalf("%d bytes still in use after ten collections of a dropped buffer", inUse.Load())
	}
	if p.Grown(1) {
		t.Fatal("the new cycle did not start from the freed count")
	}
	if !p.Grown(2) {
		t.Fatal("not asked past the floor of the new cycle")
	}
}
