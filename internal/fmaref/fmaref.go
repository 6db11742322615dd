//go:build amd64 && cgo

package fmaref

// #cgo CFLAGS: -O2
// #cgo LDFLAGS: -pthread
// #include "fmaref.h"
import "C"

import "fmt"

// Run runs threads·iters iterations of the reference loop of the given
// width (512 bits: 16 chains of 512-bit FMAs; 256 bits: 12 chains of
// 256-bit FMAs) on threads threads, which take them in chunks as
// cpu.FMAPeak's goroutines do. The width must be one the CPU has
// (cpu.FMABits).
func Run(bits, threads int, iters int64) (Result, error) {
	chains, lanes := 12, 8
	if bits == 512 {
		chains, lanes = 16, 16
	}
	switch {
	case bits != 256 && bits != 512:
		return Result{}, fmt.Errorf("fmaref: %d-bit FMAs, want 256 or 512", bits)
	case threads < 1 || threads > C.FMAREF_MAX_THREADS:
		return Result{}, fmt.Errorf("fmaref: %d threads, want 1 to %d", threads, C.FMAREF_MAX_THREADS)
	case iters < 1:
		return Result{}, fmt.Errorf("fmaref: %d iterations, want at least 1", iters)
	}
	var share C.double
	sec := float64(C.fmaref_run(C.int(bits), C.int(threads), C.long(iters), &share))
	if sec < 0 {
		return Result{}, fmt.Errorf("fmaref: could not start %d threads", threads)
	}
	return Result{Flops: float64(threads) * float64(iters) * float64(chains*lanes*2), Seconds: sec, Share: float64(share)}, nil
}
