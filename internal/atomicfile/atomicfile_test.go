//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// leftovers returns the names in dir other than keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
next:
	for _, e := range es {
		for _, k := range keep {
			if e.Name() == k {
				continue next
			}
		}
		out = append(out, e.Name())
	}
	return out
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestWriteReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, writeString("one")); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0)
	syscall.Umask(old)
	st, _ := os.Stat(p)
	if want := os.FileMode(0o666) &^ os.FileMode(old); st.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v (0666 less the umask %03o)", st.Mode().Perm(), want, old)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, writeString("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ = os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o640 {
		t.Errorf("after replace: %q mode %v, want \"two\" mode -rw-r-----", b, st.Mode().Perm())
	}
	if l := leftovers(t, dir, "f"); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestFailedWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := Write(p, writeString("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := Write(p, func(w io.Writer) error {
		// More than the buffer holds, so part of it reaches the temporary file.
		if _, err := w.Write(make([]byte, 1<<17)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write returned %v, want the writer's error", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("old file now holds %d bytes, want \"old\"", len(b))
	}
	if l := leftovers(t, dir, "f"); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestFailedRenameRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, writeString("data")); err == nil {
		t.Fatal("renaming over a non-empty folder succeeded")
	}
	if l := leftovers(t, dir, "d"); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
	if err := Write(filepath.Join(dir, "missing", "f"), writeString("x")); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
}
