package cpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envInts reads a comma-separated list of ints from the environment
// variable name, or returns def when it is unset.
func envInts(name string, def int) []int {
	s := os.Getenv(name)
	if s == "" {
		return []int{def}
	}
	var vs []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(f)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", name, err))
		}
		vs = append(vs, v)
	}
	return vs
}

// againstPeak times run (flops of work) and FMAPeak on threads goroutines
// for as many float32 flops as peakFlops (twice flops for float64, whose
// peak is half), alternately, and reports run's rate and its share of the
// peak from the fastest of the b.N runs of each.
func againstPeak(b *testing.B, threads int, flops, peakFlops float64, run func()) {
	iters := int(peakFlops / fmaFlopsZ / float64(threads))
	best, bestPeak := time.Hour, time.Hour
	for b.Loop() {
		t0 := time.Now()
		FMAPeak(threads, iters)
		bestPeak = min(bestPeak, time.Since(t0))
		t0 = time.Now()
		run()
		best = min(best, time.Since(t0))
	}
	b.ReportMetric(flops/best.Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(100*bestPeak.Seconds()/best.Seconds(), "%peak")
}

// BenchmarkSgemmEfficiency times sgemm on one goroutine against the
// 512-bit FMA loop, interleaved, taking the fastest of the b.N runs of
// each, so that the ratio (%peak) holds on a loaded machine. GEMM_N
// lists the sizes (none: the benchmark does nothing), GEMM_THREADS the
// goroutines (1), GEMM_KC and GEMM_MC the AVX-512 kernels' cache blocks.
func BenchmarkSgemmEfficiency(b *testing.B) {
	threads := envInts("GEMM_THREADS", 1)[0]
	for _, n := range envInts("GEMM_N", 0) {
		if n == 0 {
			continue
		}
		for _, kc := range envInts("GEMM_KC", gemmKCZ) {
			for _, mc := range envInts("GEMM_MC", gemmMCZ) {
				for _, cfg := range []struct{ avx512, direct bool }{{false, false}, {true, false}, {true, true}} {
					name := fmt.Sprintf("n=%d/kc=%d/mc=%d/avx512=%v/direct=%v", n, kc, mc, cfg.avx512, cfg.direct)
					b.Run(name, func(b *testing.B) {
						defer func(on, direct bool, kc, mc int) {
							sgemmAVX512, gemmDirectA, gemmKCZ, gemmMCZ = on, direct, kc, mc
						}(sgemmAVX512, gemmDirectA, gemmKCZ, gemmMCZ)
						sgemmAVX512, gemmDirectA, gemmKCZ, gemmMCZ = cfg.avx512 && cpuAVX512, cfg.direct, kc, mc
						r := newRand(1)
						a, bm, c := gemmMat(r, n, n, gRow, false), gemmMat(r, n, n, gRow, false), gemmMat(r, n, n, gRow, false)
						flops := 2 * float64(n) * float64(n) * float64(n)
						againstPeak(b, threads, flops, flops, func() { sgemm(n, n, n, a, bm, c, threads) })
					})
				}
			}
		}
	}
}

// BenchmarkGemmShapes times sgemm on the small and skinny products of the
// training workloads (the char-RNN's hidden 100, the MLP's backward
// products with a transposed operand), the fastest of the b.N runs.
func BenchmarkGemmShapes(b *testing.B) {
	for _, s := range []struct {
		m, n, k int
		ak, bk  string
	}{
		{100, 100, 100, gRow, gRow}, {1, 100, 100, gRow, gRow}, {100, 1, 100, gRow, gRow},
		{25, 100, 100, gRow, gCol}, {100, 65, 25, gCol, gRow},
		{256, 512, 784, gRow, gCol}, {512, 784, 256, gCol, gRow}, {256, 784, 512, gRow, gRow},
		{256, 10, 512, gRow, gCol}, {10, 512, 256, gCol, gRow},
	} {
		b.Run(fmt.Sprintf("%dx%dx%d/a=%s/b=%s", s.m, s.n, s.k, s.ak, s.bk), func(b *testing.B) {
			r := newRand(1)
			a, bm, c := gemmMat(r, s.m, s.k, s.ak, false), gemmMat(r, s.k, s.n, s.bk, false), gemmMat(r, s.m, s.n, gRow, false)
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
			parts := 1
			if s.m*s.n*s.k >= gemmParallelWork {
				parts = 2
			}
			best := time.Hour
			for b.Loop() {
				t0 := time.Now()
				sgemm(s.m, s.n, s.k, a, bm, c, parts)
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(flops/best.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(best.Seconds()*1e6, "µs-min")
		})
	}
}

// BenchmarkDgemmEfficiency is BenchmarkSgemmEfficiency for float64 (the
// FMA peak in float64 flops is half the float32 one), with DGEMM_KC and
// DGEMM_MC for the cache blocks.
func BenchmarkDgemmEfficiency(b *testing.B) {
	if !dgemmAsm {
		b.Skip("no AVX-512")
	}
	threads := envInts("GEMM_THREADS", 1)[0]
	for _, n := range envInts("GEMM_N", 0) {
		for _, kc := range envInts("DGEMM_KC", dgemmKC) {
			for _, mc := range envInts("DGEMM_MC", dgemmMC) {
				b.Run(fmt.Sprintf("n=%d/kc=%d/mc=%d", n, kc, mc), func(b *testing.B) {
					defer func(kc, mc int) { dgemmKC, dgemmMC = kc, mc }(dgemmKC, dgemmMC)
					dgemmKC, dgemmMC = kc, mc
					r := newRand(1)
					a, bm, c := gemmMatT[float64](r, n, n, gRow, false), gemmMatT[float64](r, n, n, gRow, false), gemmMatT[float64](r, n, n, gRow, false)
					flops := 2 * float64(n) * float64(n) * float64(n)
					againstPeak(b, threads, flops, 2*flops, func() { dgemm(n, n, n, a, bm, c, threads) })
				})
			}
		}
	}
}
