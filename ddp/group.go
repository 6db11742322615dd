package ddp

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// A Group is the set of ranks that train one model together, as seen by
// one of them: the collectives a Replica needs. NewLocalGroups makes the
// ranks of one process (goroutines, one device each); an adapter over
// package distributed makes the processes of an MPI launch.
//
// A Replica passes a Group only contiguous CPU tensors that do not
// require grad, of the dtypes of the model's parameters and buffers
// (Bool travels as Int32) and Float64 (its own bookkeeping), and calls
// the collectives in the same order on every rank, as MPI requires. An implementation must give
// every rank bitwise-equal results (reduce in a fixed order), and report
// a collective that the ranks called with different shapes or dtypes as
// an error wrapping ErrCollective rather than hang.
type Group interface {
	// Rank returns this rank's number, 0 ≤ Rank < Size.
	Rank() int
	// Size returns the number of ranks.
	Size() int
	// AllReduce starts reducing t, of the same shape and dtype on every
	// rank, by op across the ranks, and returns at once; when Wait
	// returns nil, t holds the result on every rank.
	AllReduce(t *tensor.Tensor, op ReduceOp) Work
	// Broadcast copies t of rank root into t of every other rank; it
	// returns when this rank's t holds root's values.
	Broadcast(t *tensor.Tensor, root int) error
}

// A Work is a collective in flight.
type Work interface {
	// Wait blocks until the collective is done and returns its error.
	// It may be called once.
	Wait() error
}

// A ReduceOp is how AllReduce combines the ranks' values, elementwise.
type ReduceOp uint8

// The reductions. A Replica averages gradients as a ReduceSum divided
// by the world size, so that the division happens once, on the host.
const (
	ReduceSum ReduceOp = iota
	ReduceMax
)

func (op ReduceOp) String() string {
	switch op {
	case ReduceSum:
		return "sum"
	case ReduceMax:
		return "max"
	}
	return fmt.Sprintf("ReduceOp(%d)", uint8(op))
}

// doneWork is a Work that finished when it was made.
type doneWork struct{ err error }

func (w doneWork) Wait() error { return w.err }
