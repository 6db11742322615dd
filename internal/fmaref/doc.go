// Package fmaref is a hand-written reference for cpu.FMAPeak, for the
// bench's tests: FMA chains in C (fmaref.c), compiled by the C compiler
// from intrinsics and run on POSIX threads outside the Go runtime, so
// that a Go loop or scheduler that falls short of the FMA units' limit
// shows as a gap between the two rates measured in the same run. The C
// loop needs cgo on amd64; elsewhere Run returns ErrUnavailable.
package fmaref

import "errors"

// ErrUnavailable is Run's error in a build without cgo or off amd64.
var ErrUnavailable = errors.New("fmaref: the C reference loop needs cgo on amd64")

// A Result is one run of the reference loop.
type Result struct {
	Flops   float64 // float32 flops done
	Seconds float64 // wall clock, from before the first thread starts to after the last ends
	// Share is the least, over the threads, of a thread's CPU time over
	// the wall time it ran: under 1 when something else had its core for
	// a while, another process or a thread of this one.
	Share float64
}
