package cpu

import (
	"runtime"
	"sync"
)

// numWorkers returns how many goroutines a kernel that touches work
// elements should use: 1 below parallelThreshold, else GOMAXPROCS.
func numWorkers(work int) int {
	w := runtime.GOMAXPROCS(0)
	if w < 2 || work < parallelThreshold {
		return 1
	}
	return w
}

// parallelFor splits [0, n) into parts contiguous chunks, the chunk p
// being [n*p/parts, n*(p+1)/parts), and calls fn(p, lo, hi) for every
// chunk concurrently, chunk 0 on the calling goroutine. It returns when
// all chunks are done. A panic in any chunk is recovered and re-raised in
// the caller once every chunk has finished, so that a kernel bug (an
// index out of range) reaches the caller's recover instead of killing the
// process from a worker goroutine. parts is clamped to [1, n].
func parallelFor(parts, n int, fn func(p, lo, hi int)) {
	if parts > n {
		parts = n
	}
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicked bool
		perr     any
	)
	catch := func() {
		if r := recover(); r != nil {
			mu.Lock()
			if !panicked {
				panicked, perr = true, r
			}
			mu.Unlock()
		}
	}
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer catch()
			fn(p, n*p/parts, n*(p+1)/parts)
		}()
	}
	func() {
		defer catch()
		fn(0, 0, n/parts)
	}()
	wg.Wait()
	if panicked {
		panic(perr)
	}
}
