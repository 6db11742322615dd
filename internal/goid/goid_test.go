package goid

import (
	"runtime"
	"sync"
	"testing"
)

// ids are the identities one way of reading them gives.
var ids = []struct {
	name string
	read func() uintptr
}{{"Current", Current}, {"fromStack", fromStack}}

// deep calls read n frames down, past several stack growths.
func deep(n int, read func() uintptr) uintptr {
	var pad [64]byte // grows the stack faster
	if n == 0 {
		return read() + uintptr(pad[0])
	}
	return deep(n-1, read)
}

// A goroutine's identity is not 0 and does not change while it runs: not
// when its stack grows and moves, not when it blocks and resumes, maybe
// on another thread.
func TestStableWithinAGoroutine(t *testing.T) {
	for _, id := range ids {
		first := id.read()
		if first == 0 {
			t.Fatalf("%s: 0", id.name)
		}
		if got := deep(10000, id.read); got != first {
			t.Errorf("%s: %#x after the stack grew, %#x before", id.name, got, first)
		}
		for range 100 {
			runtime.Gosched()
			done := make(chan struct{})
			go func() { close(done) }()
			<-done
			if got := id.read(); got != first {
				t.Fatalf("%s: %#x after blocking, %#x before", id.name, got, first)
			}
		}
	}
}

// Goroutines alive at the same time have different identities, and each
// reads the same one twice.
func TestDistinctAcrossGoroutines(t *testing.T) {
	const n = 200
	for _, id := range ids {
		got := make([]uintptr, n)
		var all, read sync.WaitGroup
		all.Add(n)
		read.Add(n)
		release := make(chan struct{})
		for i := range n {
			go func() {
				defer all.Done()
				got[i] = id.read()
				read.Done()
				<-release // stay alive until every one has read its identity
				if again := id.read(); again != got[i] {
					t.Errorf("%s: goroutine %d read %#x, then %#x", id.name, i, got[i], again)
				}
			}()
		}
		read.Wait()
		close(release)
		all.Wait()
		seen := map[uintptr]int{id.read(): -1} // this goroutine's, alive too
		for i, g := range got {
			if j, dup := seen[g]; dup {
				t.Fatalf("%s: goroutines %d and %d both read %#x", id.name, j, i, g)
			}
			seen[g] = i
		}
	}
}

func BenchmarkCurrent(b *testing.B) {
	for _, id := range ids {
		b.Run(id.name, func(b *testing.B) {
			var sink uintptr
			for b.Loop() {
				sink += id.read()
			}
			_ = sink
		})
	}
}
