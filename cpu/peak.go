package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
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

// fmaChunk is the iterations an FMAPeak goroutine takes at a time: tens
// of µs of work, so that the atomic add that hands them out costs under
// 0.5% and the last chunks leave the goroutines idle as briefly.
const fmaChunk = 1 << 13

// FMAPeak runs threads·n iterations of an FMA loop of the widest kind the
// CPU has (FMABits) on threads goroutines and returns the float32 flops
// done: timed, it is the peak against which the GEMM's rate is judged.
// Each iteration is 24 independent 512-bit FMAs (15 at 256 bits, 12 in
// the plain Go loop) with their operands in registers, more chains than
// any current core needs to keep both FMA pipes busy, so that nothing but
// the FMA units limits it. The goroutines take the iterations in chunks
// (fmaChunk), as the GEMM's goroutines take its tiles: on a core that
// another process shares, a fixed n each would leave the other cores
// idle at the end and read below what the GEMM gets from the same cores.
// Give it a goroutine per core and milliseconds of work, or starting the
// goroutines weighs on the rate. With threads or n below 1 it does
// nothing and returns 0 (the assembly loops run at least one iteration).
func FMAPeak(threads, n int) float64 {
	if threads < 1 || n < 1 {
		return 0
	}
	var (
		wg    sync.WaitGroup
		taken atomic.Int64
		flops = make([]float64, threads)
	)
	share := func(t int) {
		runtime.LockOSThread() // one thread for the goroutine's whole share
		defer runtime.UnlockOSThread()
		total, done := int64(threads)*int64(n), 0.0
		for {
			start := taken.Add(fmaChunk) - fmaChunk
			if start >= total {
				flops[t] = done
				return
			}
			done += fmaLoop(int(min(fmaChunk, total-start)))
		}
	}
	for t := 1; t < threads; t++ {
		wg.Go(func() { share(t) })
	}
	// The calling goroutine takes chunks too: it is on a core already,
	// where a new goroutine would wait to be picked up.
	share(0)
	wg.Wait()
	var sum float64
	for _, f := range flops {
		sum += f
	}
	return sum
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
