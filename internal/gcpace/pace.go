// Package gcpace runs the garbage collector on behalf of memory whose
// release depends on it: buffers of tensors that a program drops without
// Release or Scope go back to their pool only when the collector finds
// the tensors unreachable and their runtime cleanups run. Go paces its
// collections by the heap it sees, which is blind to GPU memory and late
// for pooled host buffers (a cleanup keeps a dropped buffer alive for one
// more cycle), so a loop that drops its tensors can hold many times the
// memory it uses. A Pacer watches the bytes an allocator has handed out
// (the allocator's own count) and asks for a collection when they grow by half the lowest count seen
// since the last one (or by a floor, when that is more), as GOGC=50
// would for the heap: what was dropped is collected before it adds half
// again to what is in use.
//
// gcpace imports nothing from the module: the device package, a leaf,
// uses it too.
package gcpace

import (
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultFloor is the growth, in bytes, below which a Pacer never asks
// for a collection: small programs never pay for one.
const DefaultFloor = 16 << 20

// Collect's wait for the cleanups of a collection: at most cleanupWait,
// polling every cleanupPoll.
const (
	cleanupWait = 2 * time.Millisecond
	cleanupPoll = 20 * time.Microsecond
)

// A Pacer decides when the bytes an allocator has handed out (its own
// count, which it passes in) call for a collection. Its methods are safe
// for concurrent use. The zero value is ready, with DefaultFloor.
type Pacer struct {
	Floor int64 // growth never collected below; 0 means DefaultFloor

	low         atomic.Int64 // lowest count seen since the last collection
	running     atomic.Bool  // a collection asked for by Grown is under way
	collections atomic.Int64
}

// Grown reports, after an allocation left inUse bytes handed out,
// whether the caller should now call Collect (outside its own locks):
// they grew past the lowest count since the last collection by half of
// it, or by the floor when that is more. Only one caller at a time is
// told to collect.
func (p *Pacer) Grown(inUse int64) bool {
	floor := p.Floor
	if floor <= 0 {
		floor = DefaultFloor
	}
	low := p.low.Load()
	return inUse > low+max(floor, low/2) && p.running.CompareAndSwap(false, true)
}

// Shrunk notes that a free left inUse bytes handed out.
func (p *Pacer) Shrunk(inUse int64) {
	for {
		l := p.low.Load()
		if inUse >= l || p.low.CompareAndSwap(l, max(0, inUse)) {
			return
		}
	}
}

// Collect runs the garbage collector, so that the runtime cleanups of
// what the program dropped give their bytes back, waits (at most
// cleanupWait) for those cleanups, which run on the runtime's cleanup
// goroutine, to stop freeing, as inUse (the allocator's count, read
// without the caller's locks held) shows, and starts a new pacing cycle
// from the bytes in use then. Call it when Grown says so.
func (p *Pacer) Collect(inUse func() int64) {
	runtime.GC()
	prev, freeing := inUse(), false
	for start := time.Now(); time.Since(start) < cleanupWait; {
		time.Sleep(cleanupPoll)
		v := inUse()
		if v >= prev && freeing {
			break // the cleanups have run
		}
		freeing = freeing || v < prev
		prev = v
	}
	p.low.Store(inUse())
	p.collections.Add(1)
	p.running.Store(false)
}

// Collections returns how many times Collect has run.
func (p *Pacer) Collections() int64 { return p.collections.Load() }
