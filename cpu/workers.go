package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runUnits calls unit(u) for every u in [0, total) on up to workers
// goroutines, the calling one included, each taking the next unit that no
// other has taken until none is left. It returns once every unit has
// finished, without waiting for goroutines that got none. A panic in a
// unit is re-raised here once every unit has finished. Every parallel
// kernel runs through it: the GEMM's blocks and, through parallelFor, the
// elementwise, reduction and indexing kernels.
//
// The other goroutines are helpers that outlive the call (workerPool):
// after its last unit a helper keeps looking for the next job for
// workerSpin before it sleeps, and the caller waits for the units it did
// not take by yielding, never by parking. On this 2-core VM a goroutine
// that parks, or a helper woken from sleep, runs again only once the
// runtime has woken a thread and the OS has run it: about 100 µs under
// load (median of 300 starts), as long as a whole 256×256 product takes
// on two cores; a 10 µs time.Sleep before a 512×512 product made the pair
// take 619 µs on average against 423 µs without (300 pairs each, one run).
// A kernel that follows another within workerSpin (a training step's
// products and elementwise ops) finds its helper running, and one that
// finds it asleep loses nothing but the helper's share: the caller takes
// the units the helper has not.
func runUnits(workers, total int, unit func(u int)) {
	workers = min(workers, total)
	if workers <= 1 {
		for u := range total {
			unit(u)
		}
		return
	}
	j := &unitJob{total: int64(total), unit: unit, seq: unitJobs.Add(1)}
	j.seats.Store(int32(workers - 1))
	pool.post(j, workers-1)
	j.work()
	for j.done.Load() < j.total {
		runtime.Gosched() // a unit is a few µs to a few ms
	}
	pool.job.CompareAndSwap(j, nil)
	if j.panicked {
		panic(j.perr)
	}
}

// workerSpinFor is how long a helper keeps looking for the next job after
// its last unit before it sleeps: longer than the serial stretches of a
// training step (a small-K product, the loss's small ops, the
// optimizer's bookkeeping), so that the step's next parallel kernel finds
// its helper running. With 100 µs, the helper of the MLP step (784-512-
// 512-10, batch 256) was asleep before one of its large products often
// enough to start it 26 µs late on average, and it took only two thirds
// of the second unit of the small jobs; with 1 ms, 3 µs and 98-99 % of
// them (one instrumented run of 200 steps each).
// The step against 100 µs, interleaved in one process (80 rounds of 40
// steps, median of the per-round ratios, four runs): 1.009, 1.022, 1.026,
// 1.035. LLVM's OpenMP runtime spins for 200 ms by default (KMP_BLOCKTIME).
const workerSpinFor = time.Millisecond

// workerSpin is workerSpinFor in nanoseconds, which the benchmarks and tests
// change (0: a helper sleeps at once, and every job wakes it) while the
// helpers read it.
var workerSpin = func() *atomic.Int64 {
	var v atomic.Int64
	v.Store(int64(workerSpinFor))
	return &v
}()

// pool holds runUnits's helper goroutines.
var pool workerPool

// unitJobs numbers the jobs posted.
var unitJobs atomic.Uint64

// workerPool is a set of goroutines that take units of the job posted
// last: a helper that finds a job with a free seat works on it, then
// looks for the next one, for workerSpin, then sleeps until post wakes it.
type workerPool struct {
	job  atomic.Pointer[unitJob] // the job posted last, nil once it is done
	idle atomic.Int32            // helpers asleep, or about to be
	wake chan struct{}           // a token per helper to wake

	mu      sync.Mutex
	started int
}

// post offers j to want helpers, starting them the first time and waking
// those asleep.
func (h *workerPool) post(j *unitJob, want int) {
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
// for workerSpin when there is none, then sleep until woken.
func (h *workerPool) loop() {
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
		if spins%64 != 0 || time.Since(spunSince) < time.Duration(workerSpin.Load()) {
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

// A unitJob is the state of one runUnits.
type unitJob struct {
	next, done atomic.Int64 // units taken, units finished
	total      int64
	unit       func(u int)
	seats      atomic.Int32 // helpers that may still join
	seq        uint64       // the job's number, from unitJobs

	mu       sync.Mutex
	panicked bool
	perr     any
}

// work runs units until none is left.
func (j *unitJob) work() {
	for {
		u := j.next.Add(1) - 1
		if u >= j.total {
			return
		}
		j.run(int(u))
	}
}

// run runs one unit and counts it finished, even when it panics.
func (j *unitJob) run(u int) {
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
