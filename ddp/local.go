package ddp

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// DefaultTimeout is how long a LocalGroup collective waits for the other
// ranks when NewLocalGroups is given no timeout.
const DefaultTimeout = 60 * time.Second

// A LocalGroup is one rank of a world whose ranks are goroutines of this
// process, each training its own replica on its own device (tensor.CPU,
// tensor.GPU(i)) in its own tensor.Context. Collectives pass through
// host memory: each rank reads its tensor out when it calls the
// collective, the last rank to arrive reduces the values in float64 in
// rank order (so every rank gets the same bits), and each rank writes
// the result back into its own tensor, on its own goroutine, in Wait.
//
// Each LocalGroup is used by one goroutine at a time, the loop of its
// rank. A collective that another rank does not join within the timeout
// fails with ErrTimeout naming the missing ranks, never hangs; one that
// the ranks call with different kinds, reductions, roots, shapes or
// dtypes fails on every rank with ErrCollective.
type LocalGroup struct {
	w    *localWorld
	rank int
	seq  int // collectives this rank has called
}

type localWorld struct {
	size    int
	timeout time.Duration
	mu      sync.Mutex
	ops     map[int]*localOp // by sequence number, while some rank has not taken the result

	abort    sync.Once
	aborted  chan struct{} // closed by Abort
	abortErr Error         // what Abort said, once aborted is closed
}

// A localOp is one collective: the call of the first rank to arrive, the
// ranks' values, and the result once all have arrived.
type localOp struct {
	seq      int
	call     localCall
	in       [][]float64 // by rank; for Broadcast only the root's
	joined   []bool
	arrived  int
	taken    int
	done     chan struct{}
	out      []float64
	err      *Error
	mismatch string // the first call that differs, for err
}

// localCall describes a collective call, to check that the ranks agree.
type localCall struct {
	kind  string // "AllReduce" or "Broadcast"
	op    ReduceOp
	root  int
	shape []int
	dtype tensor.DType
	bad   string // why this rank's tensor cannot be read, or ""
}

func (c localCall) String() string {
	arg := "op " + c.op.String()
	if c.kind == "Broadcast" {
		arg = fmt.Sprintf("root %d", c.root)
	}
	return fmt.Sprintf("%s(%v %v, %s)", c.kind, c.shape, c.dtype, arg)
}

func (c localCall) equal(d localCall) bool {
	return c.kind == d.kind && c.op == d.op && c.root == d.root && c.dtype == d.dtype && slices.Equal(c.shape, d.shape)
}

// NewLocalGroups returns the n ranks of one in-process world, rank i at
// index i; a collective waits at most timeout for the other ranks (0:
// DefaultTimeout). It panics with a *tensor.Error wrapping
// tensor.ErrArgument when n < 1 or timeout < 0.
func NewLocalGroups(n int, timeout time.Duration) []*LocalGroup {
	if n < 1 || timeout < 0 {
		panic(tensor.NewError("ddp.NewLocalGroups", tensor.ErrArgument,
			fmt.Sprintf("a world of %d ranks with timeout %v: want at least one rank and a timeout ≥ 0", n, timeout)))
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	w := &localWorld{size: n, timeout: timeout, ops: map[int]*localOp{}, aborted: make(chan struct{})}
	gs := make([]*LocalGroup, n)
	for i := range gs {
		gs[i] = &LocalGroup{w: w, rank: i}
	}
	return gs
}

// Abort ends g's world: every collective of every rank that has not
// completed, and every later one, fails at once with an *Error wrapping
// ErrAborted that names g's rank and says cause, instead of waiting for
// a rank that will not come. RunLocal calls it for a rank that fails.
// Only the first Abort of a world counts.
func (g *LocalGroup) Abort(cause error) {
	w := g.w
	w.abort.Do(func() {
		detail := "it left the world"
		if cause != nil {
			detail += ": " + cause.Error()
		}
		w.abortErr = Error{Op: "Abort", Rank: g.rank, Err: ErrAborted, Detail: detail}
		close(w.aborted)
	})
}

// Rank returns g's rank.
func (g *LocalGroup) Rank() int { return g.rank }

// Size returns the number of ranks of g's world.
func (g *LocalGroup) Size() int { return g.w.size }

// AllReduce reduces t across the ranks by op, in place. It reads t now;
// Wait writes the result into t. Sums are taken in float64 in rank order
// and rounded once to t's dtype; a NaN anywhere makes the maximum NaN.
func (g *LocalGroup) AllReduce(t *tensor.Tensor, op ReduceOp) Work {
	if t == nil || (op != ReduceSum && op != ReduceMax) {
		return doneWork{errorf("AllReduce", tensor.ErrArgument, "a nil tensor or an unknown reduction %v", op)}
	}
	c := localCall{kind: "AllReduce", op: op, shape: t.Shape(), dtype: t.DType()}
	return &localWork{g: g, o: g.join(c, read(t, &c)), t: t}
}

// Broadcast copies root's t into every rank's t, and returns when this
// rank's t holds it.
func (g *LocalGroup) Broadcast(t *tensor.Tensor, root int) error {
	if t == nil || root < 0 || root >= g.w.size {
		return errorf("Broadcast", tensor.ErrArgument, "a nil tensor or root %d outside a world of %d", root, g.w.size)
	}
	c := localCall{kind: "Broadcast", root: root, shape: t.Shape(), dtype: t.DType()}
	var data []float64
	if g.rank == root {
		data = read(t, &c)
	}
	w := &localWork{g: g, o: g.join(c, data), t: t}
	if g.rank == root {
		w.t = nil // its values are the result already
	}
	return w.Wait()
}

// read returns t's values, or records in c why they cannot be read (a
// released tensor, say), so that every rank's collective fails instead
// of waiting for this one.
func read(t *tensor.Tensor, c *localCall) []float64 {
	var data []float64
	if err := tensor.Catch(func() { data = t.Float64s() }); err != nil {
		c.bad = err.Error()
	}
	return data
}

// join adds this rank's call and values to its next collective; the last
// rank to arrive computes the result.
func (g *LocalGroup) join(c localCall, data []float64) *localOp {
	w := g.w
	w.mu.Lock()
	defer w.mu.Unlock()
	seq := g.seq
	g.seq++
	o := w.ops[seq]
	if o == nil {
		o = &localOp{seq: seq, call: c, in: make([][]float64, w.size), joined: make([]bool, w.size), done: make(chan struct{})}
		w.ops[seq] = o
	} else if !o.call.equal(c) && o.mismatch == "" {
		first := slices.Index(o.joined, true)
		o.mismatch = fmt.Sprintf("rank %d called %v where rank %d called %v", g.rank, c, first, o.call)
	}
	if c.bad != "" && o.mismatch == "" {
		o.mismatch = fmt.Sprintf("rank %d cannot read its tensor: %s", g.rank, c.bad)
	}
	o.in[g.rank] = data
	o.joined[g.rank] = true
	if o.arrived++; o.arrived == w.size {
		if o.mismatch != "" {
			o.err = errorf(o.call.kind, ErrCollective, "collective #%d: %s", seq, o.mismatch)
		} else {
			o.out = o.reduce()
		}
		close(o.done)
	}
	return o
}

// reduce combines the ranks' values in rank order.
func (o *localOp) reduce() []float64 {
	if o.call.kind == "Broadcast" {
		return o.in[o.call.root]
	}
	out := slices.Clone(o.in[0])
	for _, in := range o.in[1:] {
		for i, v := range in {
			switch {
			case o.call.op == ReduceSum:
				out[i] += v
			case math.IsNaN(out[i]): // NaN stays
			case math.IsNaN(v) || v > out[i]:
				out[i] = v
			}
		}
	}
	return out
}

// A localWork is one rank's part of a localOp in flight.
type localWork struct {
	g    *LocalGroup
	o    *localOp
	t    *tensor.Tensor // where the result goes, or nil
	done bool
}

// Wait waits for the other ranks, then writes the result into t.
func (w *localWork) Wait() error {
	if w.done {
		return errorf(w.o.call.kind, tensor.ErrArgument, "Wait called twice on collective #%d", w.o.seq)
	}
	w.done = true
	timer := time.NewTimer(w.g.w.timeout)
	defer timer.Stop()
	select {
	case <-w.o.done:
	case <-w.g.w.aborted:
		select {
		case <-w.o.done: // done all the same
		default:
			e := w.g.w.abortErr
			e.Op = w.o.call.kind
			return &e
		}
	case <-timer.C:
		return w.timedOut()
	}
	defer w.take()
	if w.o.err != nil {
		e := *w.o.err // each rank's own copy, to add to
		return &e
	}
	if w.t != nil {
		return tensor.Catch(func() { write(w.t, w.o.out) })
	}
	return nil
}

// timedOut returns the ErrTimeout of w, naming the ranks that have not
// joined.
func (w *localWork) timedOut() error {
	w.g.w.mu.Lock()
	defer w.g.w.mu.Unlock()
	var missing []int
	for r, ok := range w.o.joined {
		if !ok {
			missing = append(missing, r)
		}
	}
	e := errorf(w.o.call.kind, ErrTimeout, "collective #%d (%v): ranks %v did not join within %v", w.o.seq, w.o.call, missing, w.g.w.timeout)
	if len(missing) > 0 {
		e.Rank = missing[0]
	}
	return e
}

// take records that this rank has the result; the last one forgets op.
func (w *localWork) take() {
	w.g.w.mu.Lock()
	defer w.g.w.mu.Unlock()
	if w.o.taken++; w.o.taken == w.g.w.size {
		delete(w.g.w.ops, w.o.seq)
	}
}

// write copies values into t, in t's dtype, on t's device, in place.
func write(t *tensor.Tensor, values []float64) {
	src := tensor.From(values, t.Shape(), tensor.Of(t.DType()), tensor.On(t.Device()), tensor.In(t.Context()))
	t.Context().NoGrad(func() { t.CopyFrom(src) })
	src.Release()
}
