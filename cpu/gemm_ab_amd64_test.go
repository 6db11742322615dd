package cpu

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A gemmVariant is one setting of the GEMM's knobs for abGemm: set
// applies it and returns the function that restores the previous one;
// parts, when not 0, is the goroutines sgemm is given in place of
// abGemm's threads (set may then be nil).
type gemmVariant struct {
	name  string
	set   func() (restore func())
	parts int
}

// abGemm times sgemm (m×n×k, operands of the given kinds, on threads
// goroutines) under each variant in turn, round after round, reps
// products a round back to back as a benchmark's steps run, each right
// after the FMA loop on as many goroutines for as many flops, so that a
// loaded machine weighs on every variant alike; on one goroutine, the
// times are the thread's CPU time. It reports each
// variant's median GFLOP/s and its median and best share of the FMA peak
// measured next to it (%pk).
func abGemm(b *testing.B, threads, m, n, k int, ak, bk string, variants []gemmVariant) {
	r := newRand(1)
	a, bm, c := gemmMat(r, m, k, ak, false), gemmMat(r, k, n, bk, false), gemmMat(r, m, n, gRow, false)
	flops := 2 * float64(m) * float64(n) * float64(k)
	reps := max(1, int(2e8/flops))
	iters := int(flops * float64(reps) / fmaFlopsZ / float64(threads))
	times := make([][]float64, len(variants))
	shares := make([][]float64, len(variants))
	if threads == 1 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	for b.Loop() {
		for i, v := range variants {
			restore, parts := func() {}, threads
			if v.set != nil {
				restore = v.set()
			}
			if v.parts != 0 {
				parts = v.parts
			}
			sgemm(m, n, k, a, bm, c, parts) // warm the buffers
			t0 := clock(threads)
			if threads == 1 {
				fmaLoop(iters)
			} else {
				FMAPeak(threads, iters)
			}
			peak := clock(threads) - t0
			t0 = clock(threads)
			for range reps {
				sgemm(m, n, k, a, bm, c, parts)
			}
			t := clock(threads) - t0
			times[i] = append(times[i], t/float64(reps))
			shares[i] = append(shares[i], 100*peak/t)
			restore()
		}
	}
	for i, v := range variants {
		slices.Sort(times[i])
		slices.Sort(shares[i])
		b.ReportMetric(flops/times[i][len(times[i])/2]/1e9, v.name+"-GFLOP/s")
		b.ReportMetric(shares[i][len(shares[i])/2], v.name+"-%pk")
		b.ReportMetric(shares[i][len(shares[i])-1], v.name+"-%pk-best")
	}
}

// clock returns the seconds of the calling thread's CPU time when
// threads is 1 (so that the time the OS runs other processes on a loaded
// machine is left out), else of the wall clock.
func clock(threads int) float64 {
	if threads == 1 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err == nil {
			return float64(ts.Sec) + float64(ts.Nsec)*1e-9
		}
	}
	return float64(time.Now().UnixNano()) * 1e-9
}

// setVar returns a gemmVariant's set for the package variable *p.
func setVar[T any](p *T, v T) func() func() {
	return func() func() {
		old := *p
		*p = v
		return func() { *p = old }
	}
}

// setSpin returns a gemmVariant's set for workerSpin.
func setSpin(d time.Duration) func() func() {
	return func() func() {
		old := workerSpin.Swap(int64(d))
		return func() { workerSpin.Store(old) }
	}
}

// BenchmarkGemmSpin compares runUnits's helpers spinning between products
// with their sleeping at once, at the bench's GEMM sizes.
func BenchmarkGemmSpin(b *testing.B) {
	for _, n := range []int{256, 512, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			abGemm(b, 2, n, n, n, gRow, gRow, []gemmVariant{
				{name: "sleep", set: setSpin(0)},
				{name: "spin", set: setSpin(workerSpinFor)},
			})
		})
	}
}

// BenchmarkGemmDirect compares A read in place with A packed, on one
// goroutine (GEMM_N: the sizes, 2048 by default).
func BenchmarkGemmDirect(b *testing.B) {
	for _, n := range envInts("GEMM_N", 2048) {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			abGemm(b, envInts("GEMM_THREADS", 1)[0], n, n, n, gRow, gRow, []gemmVariant{
				{name: "packed", set: setVar(&gemmDirectA, false)},
				{name: "direct", set: setVar(&gemmDirectA, true)},
			})
		})
	}
}

// BenchmarkGemmDirectB compares a row-major B read in place with B
// packed, on two goroutines: the MLP step's products whose B is
// row-major (784-512-512-10, batch 256: the weight gradients dyᵀ·h and
// the input gradient dy·W), squares, and the shapes that inPlaceB leaves
// packed (4 KiB row strides, panels spanning more than 1 MiB), whose two
// variants run the same code: their difference is the rounds' noise.
func BenchmarkGemmDirectB(b *testing.B) {
	for _, s := range []struct {
		m, n, k int
		ak, bk  string
	}{
		{512, 512, 256, gCol, gRow}, {256, 512, 512, gRow, gRow}, {512, 784, 256, gCol, gRow},
		{256, 256, 256, gRow, gRow}, {512, 512, 512, gRow, gRow}, {768, 768, 768, gRow, gRow},
		{1024, 1024, 1024, gRow, gRow}, {1024, 1024, 1024, gRow, gPad}, {512, 1024, 256, gRow, gRow},
	} {
		b.Run(fmt.Sprintf("%dx%dx%d-%s", s.m, s.n, s.k, s.bk), func(b *testing.B) {
			abGemm(b, 2, s.m, s.n, s.k, s.ak, s.bk, []gemmVariant{
				{name: "packed", set: setVar(&gemmDirectB, false)},
				{name: "direct", set: setVar(&gemmDirectB, true)},
			})
		})
	}
}
