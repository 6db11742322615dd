package device

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of these where
// one applies, so callers test them with errors.Is.
var (
	// ErrNotCompiled is returned by Open and Adapters in a build without cgo.
	ErrNotCompiled = errors.New("tessera: GPU support was not compiled in (built with CGO_ENABLED=0)")
	// ErrNoAdapter means no adapter matches the request.
	ErrNoAdapter = errors.New("tessera: no usable GPU adapter")
	// ErrOutOfMemory means an allocation does not fit the memory budget even
	// after reclaiming unreachable buffers and emptying the cache. It is
	// the out-of-memory error of every device: package tensor's CPU budget
	// reports it too (tensor.ErrOutOfMemory is this value), so its text
	// names no device; the error that wraps it does.
	ErrOutOfMemory = errors.New("tessera: out of memory")
	// ErrDeviceLost means the driver reported the device lost; the GPU must
	// be closed and opened again.
	ErrDeviceLost = errors.New("tessera: GPU device lost")
	// ErrTimeout means submitted work did not finish within Options.Timeout.
	ErrTimeout = errors.New("tessera: GPU operation timed out")
	// ErrBindingTooLarge means a kernel binding is larger than the device's
	// maxStorageBufferBindingSize; bind ranges of the buffer instead.
	ErrBindingTooLarge = errors.New("tessera: buffer binding larger than the device's storage binding limit")
	// ErrClosed is returned by methods of a GPU after Close.
	ErrClosed = errors.New("tessera: GPU is closed")
	// ErrCommandFailed means a buffer holds the output of a recorded
	// command that wgpu rejected when its batch was validated, or of one
	// skipped because it read such an output; see CommandFailedError.
	ErrCommandFailed = errors.New("tessera: GPU command failed validation")
)

// BudgetEnv is the environment variable that sets the allocator's budget.
const BudgetEnv = "TESSERA_GPU_BUDGET"

// OOMError is the typed out-of-memory error of the caching allocator. It
// wraps ErrOutOfMemory.
type OOMError struct {
	Requested int64 // bytes asked for
	Block     int64 // bytes of the size-class block that would be created
	Allocated int64 // bytes in blocks handed out to callers
	Reserved  int64 // bytes in all blocks held from the driver
	Budget    int64 // the allocator's budget
}

// Error describes the failed request and names TESSERA_GPU_BUDGET.
func (e *OOMError) Error() string {
	return fmt.Sprintf("tessera: GPU out of memory: tried to allocate %s (block %s) with %s allocated and %s reserved of a %s budget; "+
		"free tensors sooner or raise the budget with %s (e.g. %s=8GiB) if the device has more memory",
		FormatBytes(e.Requested), FormatBytes(e.Block), FormatBytes(e.Allocated), FormatBytes(e.Reserved),
		FormatBytes(e.Budget), BudgetEnv, BudgetEnv)
}

// Unwrap returns ErrOutOfMemory.
func (e *OOMError) Unwrap() error { return ErrOutOfMemory }

// BindingTooLargeError reports a kernel binding above the device's
// maxStorageBufferBindingSize. It wraps ErrBindingTooLarge.
type BindingTooLargeError struct {
	Binding int   // index of the binding in Kernel.Bindings
	Size    int64 // bytes the binding would cover
	Limit   int64 // Caps.MaxStorageBindingSize
}

// Error names the size and the limit.
func (e *BindingTooLargeError) Error() string {
	return fmt.Sprintf("tessera: binding %d covers %s (%d bytes), above the device's storage binding limit of %s (%d bytes); bind ranges of the buffer instead",
		e.Binding, FormatBytes(e.Size), e.Size, FormatBytes(e.Limit), e.Limit)
}

// Unwrap returns ErrBindingTooLarge.
func (e *BindingTooLargeError) Unwrap() error { return ErrBindingTooLarge }

// CommandFailedError is what a failed batch leaves on the buffers its
// failed commands would have written (see GPU.Flush): Run, Read, Write,
// Fill and Copy on such a buffer return an error wrapping it. It wraps
// ErrCommandFailed and the original wgpu validation error, so errors.Is
// finds either.
type CommandFailedError struct {
	Command string // the command that wrote the buffer: a Kernel.Label, or "copy", "clear", "upload", "readback"
	Failed  string // the command that wgpu rejected (Command itself unless Tainted)
	Tainted bool   // Command was valid but skipped: it read an output of Failed
	Err     error  // wgpu's validation error for Failed
}

// Error names the command, the one that failed and wgpu's message. It has
// no "tessera:" prefix: the package returns it wrapped in an error naming
// the call (such as "tessera: Read: ...").
func (e *CommandFailedError) Error() string {
	if e.Tainted {
		return fmt.Sprintf("GPU command %s was skipped because it reads the output of GPU command %s, which failed validation: %v", e.Command, e.Failed, e.Err)
	}
	return fmt.Sprintf("GPU command %s failed validation and did not run; what it would have written is invalid: %v", e.Command, e.Err)
}

// Unwrap returns ErrCommandFailed and the wgpu error.
func (e *CommandFailedError) Unwrap() []error { return []error{ErrCommandFailed, e.Err} }

// errOverBudget is the allocator's internal signal that a new block would
// exceed the budget; GPU.Alloc turns it into an *OOMError after reclaiming.
var errOverBudget = errors.New("over budget")

// FormatBytes renders n bytes with a binary unit, such as "1.50 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= unit
		if f < unit && f > -unit || u == "PiB" {
			return fmt.Sprintf("%.2f %s", f, u)
		}
	}
	return fmt.Sprintf("%d B", n)
}
