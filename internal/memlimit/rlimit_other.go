//go:build !(linux || darwin || freebsd)

package memlimit

// rlimit reports no limit: this system has no RLIMIT_AS or RLIMIT_DATA.
func rlimit(string) (int64, bool) { return 0, false }
