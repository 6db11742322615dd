// Package atomicfile replaces a file so that a reader, or the machine
// after a crash, sees either the old contents or the new, never a mix.
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
)

// Write replaces the file at path by what write writes: the bytes go
// through a buffer to a temporary file in path's folder, which is
// flushed, synced, closed and renamed over path; then the folder is
// synced so the rename lasts (best effort: some systems cannot sync a
// folder). On any error, write's included, the temporary file is removed
// and the file at path, if there was one, is left as it was. The new
// file keeps the permission bits of the one it replaces, or gets 0666
// less the umask, as os.Create gives.
func Write(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm, keepMode := fs.FileMode(0o666), false
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		perm, keepMode = st.Mode().Perm(), true
	}
	tmp, err := create(dir, base, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if keepMode { // the umask may have cut the bits at creation
		if err = tmp.Chmod(perm); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// create opens a new file named like ".base.tmp123456" in dir, with
// perm less the umask.
func create(dir, base string, perm fs.FileMode) (*os.File, error) {
	for range 1000 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.tmp%d", base, rand.Uint32()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("atomicfile: no unused temporary name for %s in %s", base, dir)
}
