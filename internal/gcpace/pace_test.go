package gcpace

import (
	"runtime"
	"testing"
)

// TestPacerAsksAtHalfAgain: no collection below the floor, one when the
// bytes in use grow by half the lowest count (or the floor), and none
// again until they grow from the new low.
func TestPacerAsksAtHalfAgain(t *testing.T) {
	p := &Pacer{Floor: 100}
	if p.Alloc(100) {
		t.Fatal("asked to collect at the floor")
	}
	if !p.Alloc(1) {
		t.Fatal("not asked to collect past the floor")
	}
	if p.Alloc(1000) {
		t.Fatal("asked twice while the first collection is under way")
	}
	p.Collect()
	if got := p.Collections(); got != 1 {
		t.Fatalf("Collections = %d, want 1", got)
	}
	// The low is now 1101: the next collection comes past 1101 + 550.
	if p.Alloc(550) {
		t.Fatal("asked to collect below half again the low")
	}
	if !p.Alloc(1) {
		t.Fatal("not asked to collect past half again the low")
	}
	p.Collect()
	p.Free(1652)
	if p.InUse() != 0 {
		t.Fatalf("InUse = %d after freeing all, want 0", p.InUse())
	}
	if p.Alloc(100) || !p.Alloc(1) {
		t.Fatal("after everything was freed, the floor should pace again")
	}
}

// TestPacerCollectFreesDropped: Collect runs the collector, so the
// cleanup of an unreachable object gives its bytes back before the new
// cycle starts from what is in use.
func TestPacerCollectFreesDropped(t *testing.T) {
	p := &Pacer{Floor: 1}
	drop := func() {
		buf := new([1 << 16]byte)
		p.Alloc(int64(len(buf)))
		runtime.AddCleanup(buf, func(n int64) { p.Free(n) }, int64(len(buf)))
	}
	drop()
	// On a loaded machine the cleanup goroutine may miss one wait.
	for i := 0; i < 10 && p.InUse() != 0; i++ {
		p.Collect()
	}
	if p.InUse() != 0 {
		t.Fatalf("%d bytes still in use after ten collections of a dropped buffer", p.InUse())
	}
}
