package data

import (
	"errors"
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// Kinds of file problems a *FileError wraps (besides fs errors such as
// fs.ErrNotExist).
var (
	ErrFormat = errors.New("malformed data")
	ErrEmpty  = errors.New("no data")
)

// A FileError reports a problem with a data file or folder: it could not
// be read (Err is the fs error), its contents are malformed (ErrFormat),
// or it holds no data (ErrEmpty).
type FileError struct {
	Op   string // the function: "ReadCSV"
	Path string // the file or folder
	Line int    // 1-based line of a malformed CSV record; 0 if none
	Err  error  // what went wrong
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("data.%s: %s:%d: %v", e.Op, e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("data.%s: %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// fileErr returns a *FileError whose Err wraps kind with a formatted
// detail.
func fileErr(op, path string, line int, kind error, format string, args ...any) error {
	return &FileError{Op: op, Path: path, Line: line, Err: fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))}
}

// argErr returns a *tensor.Error of kind for op ("data." is prepended).
func argErr(op string, kind error, format string, args ...any) error {
	return &tensor.Error{Op: "data." + op, Err: kind, Detail: fmt.Sprintf(format, args...)}
}
