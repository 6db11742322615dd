package ddp

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of failure. An *Error wraps one of them (or tensor.ErrArgument
// for misuse), so errors.Is(err, ddp.ErrMismatch) tells what went wrong.
var (
	// ErrMismatch: the ranks hold different models (parameter or buffer
	// names, shapes, dtypes or requires-grad flags differ).
	ErrMismatch = errors.New("the ranks hold different models")
	// ErrUnusedParameter: a parameter that requires grad received no
	// gradient in a synchronised backward pass, and
	// Options.FindUnusedParameters is off.
	ErrUnusedParameter = errors.New("a parameter received no gradient")
	// ErrCollective: the ranks called a collective differently (another
	// kind, reduction, root, shape or dtype), or a collective failed.
	ErrCollective = errors.New("the ranks called a collective differently")
	// ErrTimeout: a rank did not join a collective in time.
	ErrTimeout = errors.New("a rank did not join a collective in time")
	// ErrAborted: a rank of a LocalGroup's world failed and aborted it
	// (LocalGroup.Abort, RunLocal).
	ErrAborted = errors.New("the world was aborted")
)

// An Error reports a failure of data-parallel training: the operation,
// the rank and the parameter at fault when there is one, and what went
// wrong.
type Error struct {
	Op     string // "New", "Backward", "AllReduce", ...
	Rank   int    // the rank at fault, or -1
	Param  string // the parameter or buffer concerned (dotted name), or ""
	Err    error  // ErrMismatch, ErrUnusedParameter, ErrCollective, ErrTimeout, ErrAborted or tensor.ErrArgument
	Detail string // a sentence on what is wrong
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ddp.%s: %v", e.Op, e.Err)
	if e.Rank >= 0 {
		fmt.Fprintf(&b, ": rank %d", e.Rank)
	}
	if e.Param != "" {
		fmt.Fprintf(&b, ", %q", e.Param)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// Unwrap returns the kind of failure.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// errorf returns an *Error of op and kind with no rank or parameter.
func errorf(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Rank: -1, Err: kind, Detail: fmt.Sprintf(format, args...)}
}
