package data

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

func TestCSVRoundTrip(t *testing.T) {
	f := &Frame{
		Names:   []string{"x", "y, quoted \"name\""},
		Columns: [][]float64{{1, -0.1, 1e-310, math.MaxFloat64, math.Inf(1)}, {math.Pi, 0, math.Copysign(0, -1), math.NaN(), -7}},
	}
	path := filepath.Join(t.TempDir(), "series.csv")
	if err := WriteCSV(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Names, f.Names) || g.Rows() != 5 {
		t.Fatalf("read back names %q, %d rows", g.Names, g.Rows())
	}
	for j := range f.Columns {
		for i, v := range f.Columns[j] {
			if w := g.Columns[j][i]; math.Float64bits(w) != math.Float64bits(v) && !(math.IsNaN(v) && math.IsNaN(w)) {
				t.Errorf("column %d row %d: wrote %v, read %v", j, i, v, w)
			}
		}
	}
	if g.Column("x") == nil || g.Column("z") != nil {
		t.Error("Column by name")
	}
}

// WriteCSV replaces files through internal/atomicfile (whose tests cover
// a failed write leaving the old file whole); a folder that does not
// exist is a *FileError.
func TestCSVWriteErrors(t *testing.T) {
	dir := t.TempDir()
	old := &Frame{Names: []string{"a"}, Columns: [][]float64{{1, 2, 3}}}
	// Writing into a folder that does not exist is a *FileError.
	missing := filepath.Join(dir, "no", "x.csv")
	var fe *FileError
	if err := WriteCSV(missing, old); !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteCSV into a missing folder: %v", err)
	}
}

func TestCSVWriteRejectsBadFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	for _, f := range []*Frame{
		{},
		{Names: []string{"a"}, Columns: [][]float64{{1}, {2}}},
		{Names: []string{"a", "b"}, Columns: [][]float64{{1, 2}, {3}}},
	} {
		if err := WriteCSV(path, f); !errors.Is(err, tensor.ErrArgument) && !errors.Is(err, tensor.ErrShape) {
			t.Errorf("WriteCSV(%+v) = %v, want ErrArgument or ErrShape", f, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a rejected frame was written")
	}
}

func TestReadCSVErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		kind    error
		line    int
		says    string
	}{
		{"", ErrEmpty, 0, "no header"},
		{"a,b\n1,2\n3\n", ErrFormat, 3, "wrong number of fields"},
		{"a,b\n1,2\n3,four\n", ErrFormat, 3, `field 2 ("four") of column "b" is not a number`},
		{"a\n\"1\n", ErrFormat, 2, "quote"},
	} {
		path := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadCSV(path)
		var fe *FileError
		if !errors.As(err, &fe) || !errors.Is(err, tc.kind) || fe.Line != tc.line || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadCSV(%q) = %v, want a *FileError at line %d wrapping %v that says %q", tc.content, err, tc.line, tc.kind, tc.says)
		}
	}
	if _, err := ReadCSV(filepath.Join(dir, "missing.csv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	path := filepath.Join(dir, "header.csv")
	os.WriteFile(path, []byte("a,b\n"), 0o600)
	if f, err := ReadCSV(path); err != nil || f.Rows() != 0 || len(f.Columns) != 2 {
		t.Errorf("a header alone: %v, %+v", err, f)
	}
}
