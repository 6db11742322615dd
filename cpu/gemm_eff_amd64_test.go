package cpu

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSgemmEfficiency times sgemm on one goroutine against the
// 512-bit FMA loop, interleaved and taking the fastest of many short
// runs of each, so that the ratio holds on a loaded machine.
func BenchmarkSgemmEfficiency(b *testing.B) {
	for _, n := range []int{100, 256, 512, 1024} {
		for _, avx512 := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/avx512=%v", n, avx512), func(b *testing.B) {
				defer func(on bool) { sgemmAVX512 = on }(sgemmAVX512)
				sgemmAVX512 = avx512
				r := newRand(1)
				a, bm, c := gemmMat(r, n, n, gRow, false), gemmMat(r, n, n, gRow, false), gemmMat(r, n, n, gRow, false)
				flops := 2 * float64(n) * float64(n) * float64(n)
				iters := int(flops / (12 * 16 * 2))
				best, bestPeak := time.Hour, time.Hour
				for b.Loop() {
					t0 := time.Now()
					fmaLoopZ(iters)
					bestPeak = min(bestPeak, time.Since(t0))
					t0 = time.Now()
					sgemm(n, n, n, a, bm, c, 1)
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(flops/best.Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(flops/bestPeak.Seconds()/1e9, "peak")
				b.ReportMetric(100*bestPeak.Seconds()/best.Seconds(), "%peak")
			})
		}
	}
}
