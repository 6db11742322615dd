//go:build amd64 && cgo

package fmaref

// #cgo CFLAGS: -O2
// #cgo LDFLAGS: -pthread
// #include "fmaref.h"
import "C"

import "fmt"

// Run runs iters iterations of the reference loop of the given width
// (512 bits: 16 chains of 512-bit FMAs; 256 bits: 12 chains of 256-bit
// FMAs) on each of threads threads and returns the float32 flops done
// and the wall-clock seconds, from before the first thread starts to
// after the last ends. The width must be one the CPU has (cpu.FMABits).
func Run(bits, threads int, iters int64) (flops, seconds float64, err error) {
	chains, lanes := 12, 8
	if bits == 512 {
		chains, lanes = 16, 16
	}
	switch {
	case bits != 256 && bits != 512:
		return 0, 0, fmt.Errorf("fmaref: %d-bit FMAs, want 256 or 512", bits)
	case threads < 1 || threads > C.FMAREF_MAX_THREADS:
		return 0, 0, fmt.Errorf("fmaref: %d threads, want 1 to %d", threads, C.FMAREF_MAX_THREADS)
	case iters < 1:
		return 0, 0, fmt.Errorf("fmaref: %d iterations, want at least 1", iters)
	}
	sec := float64(C.fmaref_run(C.int(bits), C.int(threads), C.long(iters)))
	if sec < 0 {
		return 0, 0, fmt.Errorf("fmaref: could not start %d threads", threads)
	}
	return float64(threads) * float64(iters) * float64(chains*lanes*2), sec, nil
}
