//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive flock on f without waiting. It reports false
// when another open file holds one, and an error when the file system
// cannot lock.
func lock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// hold returns a second descriptor of f's open file, which keeps f's
// lock while it is open, after f is closed.
func hold(f *os.File) (*os.File, error) {
	syscall.ForkLock.RLock() // no child may inherit fd before it is close-on-exec
	fd, err := syscall.Dup(int(f.Fd()))
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
