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
