package distributed

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tessera-ml/tessera/tensor"
)

// A Group is the set of processes (ranks) that run collectives together:
// every process of an mpirun launch, or this process alone (a world of
// one). Its methods may be called from any goroutine, but the ranks must
// issue collectives in one order (see the package doc).
type Group struct {
	rank, size           int
	localRank, localSize int
	mpi                  bool

	mu     sync.Mutex
	closed bool
	jobs   chan *job  // to the worker, in issue order
	ended  chan error // the worker's finalize result, once

	pool bufPool
}

// A job is one collective's communication, run by the worker.
type job struct {
	run  func(transport) error
	err  error
	done chan struct{} // closed when run has returned
}

// queueDepth bounds the collectives in flight; one more blocks its caller
// until the worker takes the oldest.
const queueDepth = 256

// world is the process's group: MPI can be initialized once per process.
var world struct {
	mu        sync.Mutex
	g         *Group
	finalized bool // a group over MPI was closed: MPI cannot start again
}

// Init returns the group of this process. Under Open MPI's mpirun (which
// sets OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK and
// OMPI_COMM_WORLD_LOCAL_RANK) it loads libmpi.so.40, initializes MPI on
// the group's worker thread and returns every launched process's group;
// with no launcher it returns a world of one, which needs no MPI. Later
// calls return the same group until Close.
//
// Init fails with an *Error wrapping ErrUnavailable when launched by
// mpirun but MPI cannot be loaded (a build without cgo, or Open MPI not
// installed: apt-get install libopenmpi-dev openmpi-bin), ErrLauncher
// for another MPI's launcher, ErrClosed after Close under MPI (MPI starts
// once per process), or ErrMPI.
func Init() (*Group, error) {
	world.mu.Lock()
	defer world.mu.Unlock()
	if world.g != nil {
		return world.g, nil
	}
	l, err := detectLaunch(os.Getenv)
	if err != nil {
		return nil, err
	}
	open := func() (transport, error) { return self{}, nil }
	if l.mpi {
		if world.finalized {
			return nil, errorf("Init", l.rank, ErrClosed, "this process started MPI and closed its group; MPI cannot start twice in one process")
		}
		open = func() (transport, error) { return openMPI(l) }
	}
	g, err := start(l, open)
	if err != nil {
		return nil, err
	}
	world.g = g
	return g, nil
}

// start makes a group and its worker, which opens the transport on its
// own locked OS thread (MPI_THREAD_FUNNELED: every MPI call from the
// thread that initialized MPI) and then serves the queue.
func start(l launch, open func() (transport, error)) (*Group, error) {
	g := &Group{rank: l.rank, size: l.size, localRank: l.localRank, localSize: l.localSize, mpi: l.mpi,
		jobs: make(chan *job, queueDepth), ended: make(chan error, 1)}
	opened := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tr, err := open()
		opened <- err
		if err != nil {
			return
		}
		var last error
		for j := range g.jobs {
			j.err = j.run(tr)
			last = j.err
			close(j.done)
		}
		// The last job is Close's: finalize only when every rank closed.
		if last != nil {
			g.ended <- last
			return
		}
		if err := tr.finalize(); err != nil {
			g.ended <- errorf("Close", g.rank, ErrMPI, "%v", err)
			return
		}
		g.ended <- nil
	}()
	if err := <-opened; err != nil {
		return nil, err
	}
	return g, nil
}

// Rank returns this process's rank, in [0, Size).
func (g *Group) Rank() int { return g.rank }

// Size returns the number of ranks (the world size).
func (g *Group) Size() int { return g.size }

// LocalRank returns this process's rank among the ranks on its machine,
// in [0, LocalSize): the index of the GPU a rank of a multi-GPU machine
// should use.
func (g *Group) LocalRank() int { return g.localRank }

// LocalSize returns the number of ranks on this process's machine.
func (g *Group) LocalSize() int { return g.localSize }

// MPI reports whether the group runs over MPI (false: a world of one).
func (g *Group) MPI() bool { return g.mpi }

// String describes the group: "rank 1 of 2 (local 1 of 2, Open MPI)".
func (g *Group) String() string {
	if !g.mpi {
		return "rank 0 of 1 (no launcher)"
	}
	return fmt.Sprintf("rank %d of %d (local %d of %d, Open MPI)", g.rank, g.size, g.localRank, g.localSize)
}

// Close waits for the collectives in flight, then ends the group: it is
// a collective, which every rank must call last. When every rank has
// called it, Close finalizes MPI and returns nil, or ErrMPI; later calls
// return nil, collectives after it fail with ErrClosed, and Init under
// MPI fails with ErrClosed (MPI starts once per process).
//
// Close meets the other ranks as the collectives do, so a rank that
// closes while another still issues collectives (it stopped early) gets
// ErrMismatch naming that collective, and so does the other rank from
// its collective, instead of both waiting for ever. Close then returns
// without finalizing: when this process exits, mpirun ends the whole job
// as a failure. A rank that exits without Close fails the job the same
// way.
func (g *Group) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	c := g.newCall(opClose, 0, nil)
	d := c.descriptor()
	j := &job{done: make(chan struct{}), run: func(tr transport) error {
		if g.size > 1 {
			return c.agree(tr, d)
		}
		return nil
	}}
	g.jobs <- j
	g.closed = true
	close(g.jobs)
	g.mu.Unlock()
	err := <-g.ended
	world.mu.Lock()
	if world.g == g {
		world.g = nil
		world.finalized = world.finalized || g.mpi
	}
	world.mu.Unlock()
	return err
}

// Abort ends every rank's process with exit code code (MPI_Abort), for a
// rank that cannot go on and must not leave the others waiting in a
// collective. In a world of one it is os.Exit(code). It does not return.
func (g *Group) Abort(code int) {
	if g.mpi {
		abortMPI(code)
	}
	os.Exit(code)
}

// submit queues run for the worker and returns its job, or a job that has
// already failed with ErrClosed.
func (g *Group) submit(op string, run func(transport) error) *job {
	j := &job{run: run, done: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		j.err = errorf(op, g.rank, ErrClosed, "the group was closed")
		close(j.done)
		return j
	}
	g.jobs <- j
	return j
}

// A Work is a collective in flight, from the Async methods. Its
// communication runs on the group's worker while the caller goes on;
// Wait ends it and writes its result.
type Work struct {
	job    *job
	finish func() error // on success: write the result, on the waiting goroutine
	out    *tensor.Tensor

	once sync.Once
	err  error
	ok   atomic.Bool // Wait returned nil
}

// Wait blocks until the collective's communication has finished, then
// writes the result into the tensor it was issued on (AllReduce,
// Broadcast) or makes the result tensor (AllGather, ReduceScatter; see
// Result), and returns the collective's error. Call it from the goroutine
// that owns the tensor (its Context's, see tensor.Context): the write is
// a tensor op. Later calls return the same error without writing again.
func (w *Work) Wait() error {
	<-w.job.done
	w.once.Do(func() {
		w.err = w.job.err
		if w.err == nil && w.finish != nil {
			w.err = w.finish()
		}
		w.finish = nil
		w.ok.Store(w.err == nil)
	})
	return w.err
}

// Done reports whether the communication has finished, so that Wait
// will not block on other ranks.
func (w *Work) Done() bool {
	select {
	case <-w.job.done:
		return true
	default:
		return false
	}
}

// Result returns the collective's result tensor after a Wait that
// returned nil: the tensor that AllReduce or Broadcast wrote into, the
// new tensor of AllGather or ReduceScatter. Before Wait, or after a
// failed one, it returns nil.
func (w *Work) Result() *tensor.Tensor {
	if !w.ok.Load() {
		return nil
	}
	return w.out
}
