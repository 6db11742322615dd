// Package atomicfile replaces a file so that a reader, or the machine
// after a crash, sees either the old contents or the new, never a mix.
//
// A write goes to a temporary file named like ".base.tmp123456" in the
// same folder, locked (flock) while it is written, then renamed over the
// file. A process killed in the middle (SIGKILL, a crash) leaves its
// temporary file behind, and the lock goes with the process; the next
// Write of the same file removes such unlocked leftovers first, so that
// a job killed again and again does not fill the disk with them. A
// temporary file is never read, so a leftover is harmless until then.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// A Stage is a point of Write at which Hook is called.
type Stage int

const (
	StageCreated Stage = iota // the temporary file exists, locked and empty
	StageWrote                // bytes reached the temporary file (n: how many so far)
	StageSynced               // the temporary file is complete, synced and closed, not yet renamed
	StageRenamed              // the new file is in place; the folder is not yet synced
)

// Hook, when not nil, is called by Write at each Stage with the number
// of bytes written to the temporary file so far. Tests set it to crash
// the process at a chosen point of a write (a child process that sends
// itself SIGKILL there); it is nil otherwise.
var Hook func(s Stage, n int64)

// Write replaces the file at path by what write writes: the bytes go
// through a buffer to a temporary file in path's folder, which is
// flushed, synced, closed and renamed over path; then the folder is
// synced so the rename lasts (best effort: some systems cannot sync a
// folder). On any error, write's included, the temporary file is removed
// and the file at path, if there was one, is left as it was. The new
// file keeps the permission bits of the one it replaces, or gets 0666
// less the umask, as os.Create gives. Before it starts, Write removes
// the temporary files of earlier writes of path that were killed (see
// the package doc).
//
// The writer passed to write is also an io.WriterAt: WriteAt flushes the
// buffer and writes at an offset of the temporary file, so that write
// can fill in a checksum in a header once the data after it is written.
func Write(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm, keepMode := fs.FileMode(0o666), false
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		perm, keepMode = st.Mode().Perm(), true
	}
	removeStale(dir, base)
	tmp, held, err := create(dir, base, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		if held != nil {
			held.Close() // drops the lock, after the rename or the removal
		}
	}()
	if keepMode { // the umask may have cut the bits at creation
		if err = tmp.Chmod(perm); err != nil {
			return err
		}
	}
	hook(StageCreated, 0)
	w := &writer{f: tmp}
	w.buf = bufio.NewWriterSize(fileWriter{w}, 1<<16)
	if err = write(w); err != nil {
		return err
	}
	if err = w.buf.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	hook(StageSynced, w.n)
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	hook(StageRenamed, w.n)
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func hook(s Stage, n int64) {
	if Hook != nil {
		Hook(s, n)
	}
}

// A writer is what Write's function writes to: a buffer in front of the
// temporary file.
type writer struct {
	f   *os.File
	buf *bufio.Writer
	n   int64 // bytes that reached f at its end
}

func (w *writer) Write(p []byte) (int, error) { return w.buf.Write(p) }

// WriteAt flushes the buffer, then writes p at offset off of the file.
func (w *writer) WriteAt(p []byte, off int64) (int, error) {
	if err := w.buf.Flush(); err != nil {
		return 0, err
	}
	return w.f.WriteAt(p, off)
}

// A fileWriter writes under a writer's buffer to its file, counting the
// bytes and calling Hook.
type fileWriter struct{ w *writer }

func (fw fileWriter) Write(p []byte) (int, error) {
	k, err := fw.w.f.Write(p)
	fw.w.n += int64(k)
	hook(StageWrote, fw.w.n)
	return k, err
}

// tmpName returns the prefix of the temporary files of base.
func tmpName(base string) string { return "." + base + ".tmp" }

// create opens a new file named like ".base.tmp123456" in dir, with
// perm less the umask, and locks it. It returns the file and a second
// descriptor of it that holds the lock until it is closed, so that the
// lock lasts from the creation until after the rename, though the file
// itself is closed before (held is nil where the file system cannot
// lock).
func create(dir, base string, perm fs.FileMode) (f, held *os.File, err error) {
	for range 1000 {
		name := filepath.Join(dir, fmt.Sprintf("%s%d", tmpName(base), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		locked, err := lock(f)
		switch {
		case err != nil: // no locks here: write unlocked, and removeStale removes nothing
			return f, nil, nil
		case locked && same(f, name):
			held, err := hold(f)
			if err != nil {
				held = nil // the lock ends when f is closed, before the rename
			}
			return f, held, nil
		}
		// removeStale of another Write took the file before the lock did,
		// and removes it: try another name.
		f.Close()
	}
	return nil, nil, fmt.Errorf("atomicfile: no unused temporary name for %s in %s", base, dir)
}

// removeStale removes the temporary files of base in dir that no Write
// holds locked: those of processes killed while writing. It does its
// best and reports nothing; a leftover it cannot remove stays harmless.
func removeStale(dir, base string) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tmpName(base)
	for _, e := range es {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) || !isDigits(e.Name()[len(prefix):]) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if locked, err := lock(f); err == nil && locked && same(f, name) {
			os.Remove(name) // under the lock: no Write can take it now
		}
		f.Close()
	}
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// same reports whether the open file f is still the file at name.
func same(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}
