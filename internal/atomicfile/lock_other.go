//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// errNoLock: this system has no flock, so temporary files are written
// unlocked and removeStale cannot tell a killed write's leftover from a
// live one: it removes none.
var errNoLock = errors.New("atomicfile: no file locks on this system")

// lock reports that f cannot be locked here.
func lock(*os.File) (bool, error) { return false, errNoLock }

// hold reports that f's lock cannot be held here.
func hold(*os.File) (*os.File, error) { return nil, errNoLock }
