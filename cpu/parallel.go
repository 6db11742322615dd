package cpu

import "runtime"

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
// chunk, concurrently on the pool's helpers (runUnits); the calling
// goroutine takes chunk 0 and every chunk no helper has taken yet. It
// returns when all chunks are done. A panic in any chunk is recovered and
// re-raised in the caller once every chunk has finished, so that a kernel
// bug (an index out of range) reaches the caller's recover instead of
// killing the process from a helper. parts is clamped to [1, n].
func parallelFor(parts, n int, fn func(p, lo, hi int)) {
	parts = max(1, min(parts, n))
	if parts == 1 {
		fn(0, 0, n)
		return
	}
	runUnits(parts, parts, func(p int) { fn(p, n*p/parts, n*(p+1)/parts) })
}
