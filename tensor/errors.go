package tensor

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/device"
)

// Kinds of misuse. An *Error wraps one of them, so errors.Is(err,
// tensor.ErrShape) tells what went wrong.
var (
	ErrShape    = errors.New("shape mismatch")
	ErrDType    = errors.New("dtype mismatch")
	ErrDevice   = errors.New("device mismatch")
	ErrIndex    = errors.New("index out of range")
	ErrArgument = errors.New("invalid argument")
	ErrReleased = errors.New("use of a released tensor")
	ErrAutograd = errors.New("autograd error")
	ErrInPlace  = errors.New("invalid in-place operation")
	ErrContext  = errors.New("the default context is in use by another goroutine") // see Context

	// ErrOutOfMemory is the one out-of-memory error of every device: a
	// CPU request beyond TESSERA_CPU_BUDGET (an *OOMError) and a GPU
	// allocation beyond TESSERA_GPU_BUDGET (a *device.OOMError) both wrap
	// it. It is device.ErrOutOfMemory.
	ErrOutOfMemory = device.ErrOutOfMemory
)

// An Error reports misuse of a tensor op: the op, what went wrong, and
// the shapes, dtypes and devices of its operands. Ops panic with an
// *Error; Catch turns the panic into an error value.
type Error struct {
	Op      string   // the op, as a method name: "MatMul", "Add"
	Err     error    // one of ErrShape, ErrDType, ...
	Detail  string   // a sentence on what is wrong
	Shapes  [][]int  // operand shapes, in argument order
	DTypes  []DType  // operand dtypes
	Devices []Device // operand devices
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tensor.%s: %v", e.Op, e.Err)
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if len(e.Shapes) > 0 {
		b.WriteString(" (operands")
		for i, s := range e.Shapes {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %v", s)
			if i < len(e.DTypes) {
				fmt.Fprintf(&b, " %v", e.DTypes[i])
			}
			if i < len(e.Devices) {
				fmt.Fprintf(&b, " on %v", e.Devices[i])
			}
		}
		b.WriteString(")")
	} else if len(e.Devices) > 0 {
		fmt.Fprintf(&b, " (on %v)", e.Devices[0])
	}
	return b.String()
}

func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Catch runs f and returns the *Error it panicked with, or nil (an
// *Error wrapping ErrArgument for a nil f). Panics that are not an
// *Error (bugs) propagate.
//
//	err := tensor.Catch(func() { y = a.MatMul(b) })
func Catch(f func()) (err error) {
	if f == nil {
		return &Error{Op: "Catch", Err: ErrArgument, Detail: "the function argument is nil"}
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// fail panics with an *Error describing the operands ts.
func fail(op string, kind error, detail string, ts ...*Tensor) {
	panic(NewError(op, kind, detail, ts...))
}

// NewError returns the *Error of op, wrapping kind (ErrShape, ...), with
// detail and the shapes, dtypes and devices of the operands ts that are
// not nil: the error that packages built on tensor (nn, nested, ...)
// panic with for misuse, as tensor's own ops do. It reads only the
// operands' metadata, so a released operand is fine.
func NewError(op string, kind error, detail string, ts ...*Tensor) *Error {
	e := &Error{Op: op, Err: kind, Detail: detail}
	for _, t := range ts {
		if t == nil {
			continue
		}
		e.Shapes = append(e.Shapes, t.shape)
		e.DTypes = append(e.DTypes, t.dtype)
		e.Devices = append(e.Devices, t.Device())
	}
	return e
}

// failf is fail with a formatted detail.
func failf(op string, kind error, ts []*Tensor, format string, args ...any) {
	fail(op, kind, fmt.Sprintf(format, args...), ts...)
}

// nonNil panics with ErrArgument when the receiver x of method op, or
// one of its tensor arguments, is nil; args sit at argument positions
// first, first+1, ... (1-based, as the call is written). Ops call it on
// entry; it only compares pointers.
// receiver returns t after checking, for op, that it is not nil.
func (t *Tensor) receiver(op string) *Tensor {
	t.nonNil(op, 0)
	return t
}

func (x *Tensor) nonNil(op string, first int, args ...*Tensor) {
	if x == nil {
		nilArgument(op, 0)
	}
	argsNonNil(op, first, args...)
}

// argsNonNil is nonNil for a function: args sit at positions first,
// first+1, ...
func argsNonNil(op string, first int, args ...*Tensor) {
	for i, t := range args {
		if t == nil {
			nilArgument(op, first+i)
		}
	}
}

// operands checks the tensor arguments of a function op of several
// operands: none nil (positions from 1), each with live storage, all on
// one device (else ErrDevice).
func operands(op string, ts ...*Tensor) {
	argsNonNil(op, 1, ts...)
	for _, t := range ts {
		t.storage(op)
	}
	for _, t := range ts[1:] {
		if t.Device() != ts[0].Device() {
			fail(op, ErrDevice, "operands are on different devices", ts...)
		}
	}
}

// nilArgument is the failure of nonNil, out of line.
func nilArgument(op string, pos int) {
	what := "the receiver"
	if pos > 0 {
		what = fmt.Sprintf("argument %d", pos)
	}
	failf(op, ErrArgument, nil, "%s is a nil *Tensor", what)
}

// listNonNil panics with ErrArgument when a tensor of the list argument
// of op is nil.
func listNonNil(op string, ts []*Tensor) {
	for i, t := range ts {
		if t == nil {
			failf(op, ErrArgument, nil, "tensor %d of the list is a nil *Tensor", i)
		}
	}
}

// checkGrad validates g as the gradient SetGrad assigns to t: it must
// have t's shape, dtype and device (PyTorch: "assigned grad has data of
// a different size / type / located on a different device").
func checkGrad(t, g *Tensor) {
	t.nonNil("SetGrad", 1)
	switch {
	case g == nil:
	case !slices.Equal(g.shape, t.shape):
		fail("SetGrad", ErrShape, "the gradient must have the tensor's shape", t, g)
	case g.dtype != t.dtype:
		fail("SetGrad", ErrDType, "the gradient must have the tensor's dtype", t, g)
	case g.Device() != t.Device():
		fail("SetGrad", ErrDevice, "the gradient must be on the tensor's device", t, g)
	}
}
