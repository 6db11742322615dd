package distributed

import (
	"errors"
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// Causes of an *Error. errors.Is(err, distributed.ErrMismatch) tells
// what went wrong.
var (
	// ErrUnavailable: the process was launched by mpirun, but this build
	// cannot reach MPI (built without cgo, or libmpi.so.40 is not
	// installed). The detail says which, and how to get it.
	ErrUnavailable = errors.New("MPI is not available")

	// ErrLauncher: the process was started by a launcher Tessera does not
	// speak (MPICH's or Intel MPI's mpiexec, srun --mpi=pmix), or Open
	// MPI's launch variables do not parse. Running on as a world of one
	// would train N unrelated copies, so Init refuses.
	ErrLauncher = errors.New("unsupported launch")

	// ErrMismatch: the ranks called a collective with different
	// arguments (shape, dtype, reduce op, root), called different
	// collectives, or another rank's arguments were invalid. Every rank
	// returns an error from the same call; none hangs.
	ErrMismatch = errors.New("ranks disagree")

	// ErrArgument: this rank's arguments cannot be used (a nil or
	// released tensor, a bool tensor, Mean of integers, a root out of
	// range). The other ranks get ErrMismatch from the same call. It is
	// tensor.ErrArgument, the one sentinel of bad arguments that tensor,
	// ddp and data use too.
	ErrArgument = tensor.ErrArgument

	// ErrClosed: the Group was closed, or MPI was finalized and cannot
	// be initialized again in this process.
	ErrClosed = errors.New("group closed")

	// ErrMPI: an MPI call returned an error code; the detail holds MPI's
	// own message.
	ErrMPI = errors.New("MPI call failed")
)

// An Error reports a failed Init or collective: the operation, the rank
// that reports it, the cause (one of the Err values above, or a
// *tensor.Error when reading or writing the tensor failed) and a
// sentence for humans.
//
//	distributed: rank 1: AllReduce: ranks disagree: shapes differ across ranks: this rank has float32 [3 4] (12 elements); ranks hold 12 to 20 elements
type Error struct {
	Op     string // "Init", "AllReduce", "Broadcast", ...
	Rank   int    // the reporting rank (0 in a world of one)
	Err    error  // the cause
	Detail string
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("distributed: rank %d: %s: %v", e.Rank, e.Op, e.Err)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// errorf returns an *Error of op on rank with a formatted detail.
func errorf(op string, rank int, cause error, format string, args ...any) *Error {
	return &Error{Op: op, Rank: rank, Err: cause, Detail: fmt.Sprintf(format, args...)}
}
