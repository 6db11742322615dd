package checkpoint

import (
	"errors"
	"fmt"
)

// Kinds of failure, besides I/O errors and the tensor package's ErrDType
// (a dtype Tessera cannot hold) and ErrArgument (bad input to Save): an
// error wraps one of them, so errors.Is tells what went wrong.
var (
	// ErrFormat: the bytes are not a well-formed safetensors file
	// (truncated, corrupt, or written against another format).
	ErrFormat = errors.New("malformed safetensors file")
	// ErrTruncated: the file is shorter than its header says (a copy or
	// a write cut short). It wraps ErrFormat.
	ErrTruncated = fmt.Errorf("%w: truncated", ErrFormat)
	// ErrChecksum: the file's tensors or header do not match the
	// checksum Save recorded (see MetaChecksum), so the file is damaged.
	// It wraps ErrFormat.
	ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrFormat)
	// ErrMismatch: a checkpoint's tensors do not match the destination
	// (see LoadInto and MismatchError).
	ErrMismatch = errors.New("checkpoint does not match")
	// ErrNoMeta: a metadata key is absent.
	ErrNoMeta = errors.New("no such metadata key")
)

// A FileError reports a checkpoint that could not be written or read:
// the operation, the file, and what is wrong, naming the tensor or
// metadata key concerned. Err is ErrFormat, ErrNoMeta, tensor.ErrDType,
// tensor.ErrArgument, a *tensor.Error, or the error of the file system.
type FileError struct {
	Op     string // "Save", "Load", "Meta"
	Path   string
	Detail string // one line on what is wrong
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("checkpoint.%s %s: %s", e.Op, e.Path, e.Detail)
}

func (e *FileError) Unwrap() error { return e.Err }

// formatErr returns an ErrFormat error with a formatted detail; the
// caller fills in Op and Path.
func formatErr(format string, args ...any) *FileError {
	return &FileError{Detail: fmt.Sprintf(format, args...), Err: ErrFormat}
}

// truncErr returns an ErrTruncated error for a file of have bytes that
// needs want, with a formatted detail on what runs past its end.
func truncErr(want, have int64, format string, args ...any) *FileError {
	return &FileError{Detail: fmt.Sprintf("truncated: want %d bytes, have %d (%s)", want, have, fmt.Sprintf(format, args...)), Err: ErrTruncated}
}

// fileErr fills in e's Op and Path when e is a *FileError still without
// them, or wraps any other error.
func fileErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		if fe.Op == "" {
			fe.Op, fe.Path = op, path
		}
		return fe
	}
	return &FileError{Op: op, Path: path, Detail: err.Error(), Err: err}
}
