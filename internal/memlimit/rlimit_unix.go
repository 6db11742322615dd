//go:build linux || darwin || freebsd

package memlimit

import (
	"math"
	"syscall"
)

// rlimit returns the soft limit of RLIMIT_AS ("AS") or RLIMIT_DATA
// ("DATA"), and whether there is one.
func rlimit(resource string) (int64, bool) {
	res := syscall.RLIMIT_AS
	if resource == "DATA" {
		res = syscall.RLIMIT_DATA
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(res, &r); err != nil || r.Cur >= math.MaxInt64 { // RLIM_INFINITY is all ones
		return 0, false
	}
	return int64(r.Cur), true
}
