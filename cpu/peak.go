package cpu

import (
	"runtime"
	"sync"
)

// The FMA loops' independent chains, one accumulator register each (see
// peak_amd64.s for why these many; the plain Go loop has 12).
const (
	fmaChainsY = 15 // Y1–Y15: all the YMM registers AVX2 has but the operand
	fmaChainsZ = 24 // Z8–Z31
)

// fmaFlopsY, fmaFlopsZ and goFMAFlops are the float32 flops of one
// iteration of fmaLoopY, fmaLoopZ and goFMALoop: a multiply and an add
// per lane per chain.
const (
	fmaFlopsY  = fmaChainsY * 8 * 2
	fmaFlopsZ  = fmaChainsZ * 16 * 2
	goFMAFlops = 12 * 2
)

// FMAPeak runs n iterations of an FMA loop of the widest kind the CPU has
// (FMABits) on each of threads goroutines and returns the float32 flops
// done: timed, it is the peak against which the GEMM's rate is judged.
// Each iteration is 24 independent 512-bit FMAs (15 at 256 bits, 12 in
// the plain Go loop) with their operands in registers, more chains than
// any current core needs to keep both FMA pipes busy, so that nothing but
// the FMA units limits it. Give it at least one goroutine per core and
// enough iterations for milliseconds of work, or starting the goroutines
// weighs on the rate. With threads or n below 1 it does nothing and
// returns 0 (the assembly loops run at least one iteration).
func FMAPeak(threads, n int) float64 {
	if threads < 1 || n < 1 {
		return 0
	}
	var wg sync.WaitGroup
	for range threads - 1 {
		wg.Go(func() { lockedFMALoop(n) })
	}
	// The calling goroutine runs the last share: it is on a core already,
	// where a new goroutine would wait to be picked up.
	flops := lockedFMALoop(n)
	wg.Wait()
	return float64(threads) * flops
}

// lockedFMALoop runs fmaLoop(n) locked to the goroutine's OS thread: one
// thread for the share's whole run (the assembly loops, which have no
// preemption point, would not be moved either).
func lockedFMALoop(n int) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fmaLoop(n)
}

// goFMALoop is fmaLoop's plain Go version, for CPUs without the assembly
// kernels.
func goFMALoop(n int) float64 {
	var acc [12]float32
	x, y := float32(1e-7), float32(0.999)
	for range n {
		for i := range acc {
			acc[i] = acc[i]*y + x
		}
	}
	// acc stays finite (it tends to x/(1-y)); adding 0·acc keeps the loop
	// from being dropped as dead code.
	return float64(n)*goFMAFlops + 0*float64(acc[0])
}
