package cpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSgemmEfficiency times sgemm on one goroutine against the
// 512-bit FMA loop, interleaved and taking the fastest of many short
// runs of each, so that the ratio holds on a loaded machine.
func BenchmarkSgemmEfficiency(b *testing.B) {
	kcs, mcs := []int{gemmKCZ}, []int{gemmMCZ}
	if s := os.Getenv("GEMM_KC"); s != "" {
		kcs = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			kcs = append(kcs, v)
		}
	}
	if s := os.Getenv("GEMM_MC"); s != "" {
		mcs = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			mcs = append(mcs, v)
		}
	}
	for _, n := range []int{100, 256, 512, 1024} {
		for _, cfg := range [][3]int{{0, 0, 0}} {
			_ = cfg
		}
		for _, kc := range kcs {
			for _, mc := range mcs {
				for _, avx512 := range []bool{false, true} {
					b.Run(fmt.Sprintf("n=%d/kc=%d/mc=%d/avx512=%v", n, kc, mc, avx512), func(b *testing.B) {
						defer func(on bool, kc, mc int) { sgemmAVX512, gemmKCZ, gemmMCZ = on, kc, mc }(sgemmAVX512, gemmKCZ, gemmMCZ)
						sgemmAVX512, gemmKCZ, gemmMCZ = avx512, kc, mc
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
	}
}
