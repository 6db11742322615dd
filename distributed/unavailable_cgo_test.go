//go:build cgo && unix

package distributed

import "testing"

// unloadable makes loading MPI fail (a library name that does not
// exist) and returns what the error must say.
func unloadable(t *testing.T) []string {
	was := libName
	libName = "libmpi-absent.so.40"
	t.Cleanup(func() { libName = was })
	return []string{"libmpi-absent.so.40", "does not load"}
}
