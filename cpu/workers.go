//go:build amd64

package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// gemmRun calls unit(u) for every u in [0, total) on up to workers
// goroutines, the calling one included, each taking the next unit that no
// other has taken until none is left. It returns once every unit has
// finished, without waiting for goroutines that got none. A panic in a
// unit is re-raised here once every unit has finished, as parallelFor
// does.
//
// The other goroutines are helpers that outlive the call (gemmHelpers):
// after its last unit a helper keeps looking for the next product for
// gemmSpin before it sleeps. A goroutine started per product, or a helper
// woken from sleep, starts only once the runtime has woken a thread for it
// and the OS has run that thread: about 100 µs on this 2-core VM under
// load (median of 300 starts), as long as a whole 256×256 product takes on
// two cores. A product that follows another within gemmSpin (a training
// step's products, the steps of a benchmark) finds its helper running.
func gemmRun(workers, total int, unit func(u int)) {
	workers = min(workers, total)
	if workers <= 1 {
		for u := range total {
			unit(u)
		}
		return
	}
	j := &gemmJob{total: int64(total), unit: unit, seq: gemmJobs.Add(1)}
	j.seats.Store(int32(workers - 1))
	helpers.post(j, workers-1)
	j.work()
	for j.done.Load() < j.total {
		runtime.Gosched() // a unit is a few µs to a few ms
	}
	helpers.job.CompareAndSwap(j, nil)
	if j.panicked {
		panic(j.perr)
	}
}

// gemmSpinFor is how long a helper keeps looking for the next product
// after its last unit before it sleeps.
const gemmSpinFor = 100 * time.Microsecond

// gemmSpin is gemmSpinFor in nanoseconds, which the benchmarks and tests
// change (0: a helper sleeps at once, and every product wakes it) while
// the helpers read it.
var gemmSpin = func() *atomic.Int64 {
	var v atomic.Int64
	v.Store(int64(gemmSpinFor))
	return &v
}()

// helpers are gemmRun's helper goroutines.
var helpers gemmHelpers

// gemmJobs numbers the jobs posted.
var gemmJobs atomic.Uint64

// gemmHelpers is a set of goroutines that take units of the job posted
// last: a helper that finds a job with a free seat works on it, then
// looks for the next one, for gemmSpin, then sleeps until post wakes it.
type gemmHelpers struct {
	job  atomic.Pointer[gemmJob] // the job posted last, nil once it is done
	idle atomic.Int32            // helpers asleep, or about to be
	wake chan struct{}           // a token per helper to wake

	mu      sync.Mutex
	started int
}

// post offers j to want helpers, starting them the first time and waking
// those asleep.
func (h *gemmHelpers) post(j *gemmJob, want int) {
	h.mu.Lock()
	if h.started < want {
		if h.wake == nil {
			h.wake = make(chan struct{}, 256)
		}
		for ; h.started < min(want, cap(h.wake)); h.started++ {
			go h.loop()
		}
	}
	h.mu.Unlock()
	h.job.Store(j)
	// A helper counts itself idle before it looks at h.job one last time
	// and sleeps, so either it sees j or post sees it idle and wakes it.
	for range min(int(h.idle.Load()), want) {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// loop is one helper's life: work on each new job with a free seat, spin
// for gemmSpin when there is none, then sleep until woken.
func (h *gemmHelpers) loop() {
	var last uint64 // the last job seen, by number (a pointer would keep its matrices alive)
	spunSince := time.Now()
	for spins := 0; ; spins++ {
		if j := h.job.Load(); j != nil && j.seq != last {
			last = j.seq
			if j.seats.Add(-1) >= 0 {
				j.work()
			}
			spunSince, spins = time.Now(), 0
			continue
		}
		if spins%64 != 0 || time.Since(spunSince) < time.Duration(gemmSpin.Load()) {
			continue
		}
		h.idle.Add(1)
		if j := h.job.Load(); j == nil || j.seq == last {
			<-h.wake
		}
		h.idle.Add(-1)
		spunSince = time.Now()
	}
}

// A gemmJob is the state of one gemmRun.
type gemmJob struct {
	next, done atomic.Int64 // units taken, units finished
	total      int64
	unit       func(u int)
	seats      atomic.Int32 // helpers that may still join
	seq        uint64       // the job's number, from gemmJobs

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
