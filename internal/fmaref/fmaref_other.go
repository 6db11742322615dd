//go:build !amd64 || !cgo

package fmaref

// Run returns ErrUnavailable: this build has no C reference loop.
func Run(bits, threads int, iters int64) (Result, error) {
	return Result{}, ErrUnavailable
}
