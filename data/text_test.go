package data

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// writeTree writes files (path → content) under a new folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadCorpusWalksInLexicalOrder(t *testing.T) {
	root := writeTree(t, map[string]string{
		"b.go": "B", "a.go": "A", "notes.txt": "N", "z/c.go": "C", "a/d.go": "D", "a/e.go.orig": "X",
	})
	c, err := ReadCorpus(root, "*.go")
	if err != nil {
		t.Fatal(err)
	}
	// WalkDir visits a folder's entries in lexical order: a/, a.go, b.go, z/.
	if got := string(c.Bytes); got != "DABC" {
		t.Fatalf("corpus %q, want %q", got, "DABC")
	}
	var rel []string
	for _, f := range c.Files {
		r, _ := filepath.Rel(root, f)
		rel = append(rel, filepath.ToSlash(r))
	}
	if want := []string{"a/d.go", "a.go", "b.go", "z/c.go"}; !slices.Equal(rel, want) {
		t.Fatalf("files %v, want %v", rel, want)
	}
	all, err := ReadCorpus(root, "")
	if err != nil || len(all.Files) != 6 {
		t.Fatalf("pattern \"\": %v, %d files, want all 6", err, len(all.Files))
	}
	one, err := ReadCorpus(filepath.Join(root, "notes.txt"), "*.go")
	if err != nil || string(one.Bytes) != "N" {
		t.Fatalf("a single file: %v, %q", err, one.Bytes)
	}
}

func TestReadCorpusErrors(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "x", "empty.go": ""})
	for _, tc := range []struct {
		path, pattern string
		kind          error
	}{
		{filepath.Join(root, "missing"), "*.go", fs.ErrNotExist},
		{root, "*.rs", ErrEmpty},
		{root, "*.go", ErrEmpty}, // one file, no bytes
		{root, "[", ErrFormat},
	} {
		_, err := ReadCorpus(tc.path, tc.pattern)
		var fe *FileError
		if !errors.As(err, &fe) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("ReadCorpus(%s, %q) = %v, want a *FileError naming the path, wrapping %v", tc.path, tc.pattern, err, tc.kind)
		}
	}
}

// The Go sources of one standard package, as charrnn reads GOROOT/src.
func TestReadCorpusGoSources(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCorpus(filepath.Join(strings.TrimSpace(string(goroot)), "src", "unicode", "utf8"), "*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) < 2 || !strings.Contains(string(c.Bytes), "package utf8") {
		t.Fatalf("%d files, %d bytes", len(c.Files), len(c.Bytes))
	}
	train, val := c.Split(0.9)
	if len(train) != int(0.9*float64(len(c.Bytes))) || len(train)+len(val) != len(c.Bytes) || &val[0] != &c.Bytes[len(train)] {
		t.Fatalf("split %d + %d of %d bytes", len(train), len(val), len(c.Bytes))
	}
	if cap(train) != len(train) {
		t.Error("appending to the training split would overwrite the validation split")
	}
	for _, frac := range []float64{0, 1, -0.5, 2} {
		if err := tensor.Catch(func() { c.Split(frac) }); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("Split(%v): %v, want ErrArgument", frac, err)
		}
	}
}

func TestTextWindows(t *testing.T) {
	seq := []byte("abcdefghij") // 10 bytes
	for _, tc := range []struct {
		length, stride, count int
	}{{3, 3, 3}, {3, 1, 7}, {9, 1, 1}, {4, 5, 2}} {
		w, err := NewTextWindows(seq, tc.length, tc.stride)
		if err != nil {
			t.Fatal(err)
		}
		if w.Len() != tc.count {
			t.Errorf("length %d stride %d: %d windows, want %d", tc.length, tc.stride, w.Len(), tc.count)
		}
		last := w.Len() - 1
		in, out := make([]int32, tc.length), make([]int32, tc.length)
		w.Gather(0, []int{last}, in)
		w.Gather(1, []int{last}, out)
		for j := range tc.length {
			if in[j] != int32(seq[last*tc.stride+j]) || out[j] != int32(seq[last*tc.stride+j+1]) {
				t.Fatalf("length %d stride %d: last window %v → %v", tc.length, tc.stride, in, out)
			}
		}
	}
	l := newLoader(t, mustWindows(t, seq, 4, 2), Config{BatchSize: 2})
	b, _ := l.Next()
	defer b.Release()
	if got := b.Tensors[0].Int32s(); !slices.Equal(got, []int32{'a', 'b', 'c', 'd', 'c', 'd', 'e', 'f'}) {
		t.Errorf("inputs %q", got)
	}
	if got := b.Tensors[1].Int32s(); !slices.Equal(got, []int32{'b', 'c', 'd', 'e', 'd', 'e', 'f', 'g'}) {
		t.Errorf("targets %q", got)
	}
	for _, bad := range [][2]int{{0, 1}, {3, 0}, {10, 1}} {
		if _, err := NewTextWindows(seq, bad[0], bad[1]); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("NewTextWindows(10 bytes, %d, %d) = %v, want ErrArgument", bad[0], bad[1], err)
		}
	}
}

func mustWindows(t *testing.T, seq []byte, length, stride int) *TextWindows {
	t.Helper()
	w, err := NewTextWindows(seq, length, stride)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
