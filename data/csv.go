package data

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"strconv"

	"github.com/tessera-ml/tessera/internal/atomicfile"
	"github.com/tessera-ml/tessera/tensor"
)

// A Frame is a table of named float columns, what a CSV file of numbers
// holds: Columns[j][i] is row i of the column named Names[j].
type Frame struct {
	Names   []string
	Columns [][]float64
}

// Rows returns the number of rows (0 for a frame with no column).
func (f *Frame) Rows() int {
	if len(f.Columns) == 0 {
		return 0
	}
	return len(f.Columns[0])
}

// Column returns the column named name, or nil.
func (f *Frame) Column(name string) []float64 {
	for j, n := range f.Names {
		if n == name {
			return f.Columns[j]
		}
	}
	return nil
}

// check returns an error unless f has one name per column, at least one
// column, and columns of one length.
func (f *Frame) check(op string) error {
	switch {
	case len(f.Columns) == 0:
		return argErr(op, tensor.ErrArgument, "the frame has no column")
	case len(f.Names) != len(f.Columns):
		return argErr(op, tensor.ErrShape, "%d names for %d columns", len(f.Names), len(f.Columns))
	}
	for j, c := range f.Columns {
		if len(c) != len(f.Columns[0]) {
			return argErr(op, tensor.ErrShape, "mismatched lengths: column %q has %d rows but column %q has %d", f.Names[j], len(c), f.Names[0], len(f.Columns[0]))
		}
	}
	return nil
}

// WriteCSV writes f to path as CSV: a header of the names, then one
// record per row, each number in the shortest form that reads back to the
// same float64 (strconv 'g', -1). It writes atomically: to a temporary
// file in path's folder, synced to disk and then renamed over path, so
// path holds either its old content or all of the new, never part. It
// returns a *tensor.Error for a malformed frame (see Frame) and a
// *FileError when writing fails.
func WriteCSV(path string, f *Frame) error {
	if err := f.check("WriteCSV"); err != nil {
		return err
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(f.Names); err != nil {
			return err
		}
		rec := make([]string, len(f.Columns))
		for i := range f.Rows() {
			for j, c := range f.Columns {
				rec[j] = strconv.FormatFloat(c[i], 'g', -1, 64)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return &FileError{Op: "WriteCSV", Path: path, Err: err}
	}
	return nil
}

// ReadCSV reads a CSV file of numbers: a header naming the columns, then
// records of as many fields, each a number strconv.ParseFloat reads
// (NaN and ±Inf included). Errors are *FileError values: the file cannot
// be read (wrapping the fs error), it has no header (ErrEmpty), or a
// record is malformed, ragged or holds a field that is not a number
// (ErrFormat, with its line).
func ReadCSV(path string) (*Frame, error) {
	const op = "ReadCSV"
	file, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Op: op, Path: path, Err: err}
	}
	defer file.Close()
	r := csv.NewReader(bufio.NewReader(file))
	r.ReuseRecord = true
	head, err := r.Read()
	if err == io.EOF {
		return nil, fileErr(op, path, 0, ErrEmpty, "no header")
	}
	if err != nil {
		return nil, csvErr(op, path, err)
	}
	f := &Frame{Names: append([]string(nil), head...), Columns: make([][]float64, len(head))}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return nil, csvErr(op, path, err)
		}
		line, _ := r.FieldPos(0)
		for j, s := range rec {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fileErr(op, path, line, ErrFormat, "field %d (%q) of column %q is not a number", j+1, s, f.Names[j])
			}
			f.Columns[j] = append(f.Columns[j], v)
		}
	}
}

// csvErr turns an encoding/csv error into a *FileError with its line.
func csvErr(op, path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fileErr(op, path, pe.Line, ErrFormat, "%v", pe.Err)
	}
	return &FileError{Op: op, Path: path, Err: err}
}
