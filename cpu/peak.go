package cpu

import "sync"

// FMAPeak runs n iterations of twelve independent fused multiply-adds of
// the widest kind the CPU has (FMABits) on each of threads goroutines and
// returns the float32 flops done: timed, it is the peak against which
// the GEMM's rate is judged. The operands stay in registers, so nothing
// but the FMA units limits it. With threads or n below 1 it does nothing
// and returns 0 (the assembly loops run at least one iteration).
func FMAPeak(threads, n int) float64 {
	if threads < 1 || n < 1 {
		return 0
	}
	var wg sync.WaitGroup
	flops := make([]float64, threads)
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flops[t] = fmaLoop(n)
		}()
	}
	wg.Wait()
	var s float64
	for _, f := range flops {
		s += f
	}
	return s
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
	return float64(n)*12*2 + 0*float64(acc[0])
}
