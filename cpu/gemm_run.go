//go:build amd64

package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// gemmRun calls unit(u) for every u in [0, total) on up to workers
// goroutines, the calling one included, each taking the next unit that no
// other has taken until none is left. It returns once every unit has
// finished, without waiting for goroutines that got none: a core that
// has gone idle can take longer to wake up (tens of µs on a VM) than a
// small product takes. A panic in a unit is re-raised here once every
// unit has finished, as parallelFor does.
func gemmRun(workers, total int, unit func(u int)) {
	workers = min(workers, total)
	if workers <= 1 {
		for u := range total {
			unit(u)
		}
		return
	}
	j := &gemmJob{total: int64(total), unit: unit}
	for range workers - 1 {
		go j.work()
	}
	j.work()
	for j.done.Load() < j.total {
		runtime.Gosched() // a unit is a few µs to a few ms
	}
	if j.panicked {
		panic(j.perr)
	}
}

// A gemmJob is the state of one gemmRun.
type gemmJob struct {
	next, done atomic.Int64 // units taken, units finished
	total      int64
	unit       func(u int)

	mu       sync.Mutex
	panicked bool
	perr     any
}

// work runs units until none is left.
func (j *gemmJob) work() {
	for {
		u := j.next.Add(1) - 1
		if u >= j.total {
			return
		}
		j.run(int(u))
	}
}

// run runs one unit and counts it finished, even when it panics.
func (j *gemmJob) run(u int) {
	defer func() {
		if r := recover(); r != nil {
			j.mu.Lock()
			if !j.panicked {
				j.panicked, j.perr = true, r
			}
			j.mu.Unlock()
		}
		j.done.Add(1)
	}()
	j.unit(u)
}
