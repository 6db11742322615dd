package cpu

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkKernelZProbe times the 6×64 AVX-512 kernel alone on panels
// that stay in cache (one A panel, or sixteen walked in turn against one
// B panel, as the macro-kernel does) against the 512-bit FMA loop, the
// fastest of the b.N runs of each: the kernel's share of the peak
// (%peak), apart from packing and memory.
func BenchmarkKernelZProbe(b *testing.B) {
	for _, kc := range []int{64, 128, 256, 512} {
		for _, panels := range []int{1, 16} {
			b.Run(fmt.Sprintf("kc=%d/apanels=%d", kc, panels), func(b *testing.B) {
				ap := make([]float32, 6*kc*panels+16)
				bp := make([]float32, 64*kc+16)
				c := make([]float32, 6*64*panels)
				for i := range ap {
					ap[i] = 1e-3
				}
				for i := range bp {
					bp[i] = 1e-3
				}
				const reps = 20
				flops := float64(reps*panels) * 6 * 64 * float64(kc) * 2
				iters := int(flops / (12 * 16 * 2))
				best, bestPeak := time.Hour, time.Hour
				for b.Loop() {
					t0 := time.Now()
					fmaLoopZ(iters)
					bestPeak = min(bestPeak, time.Since(t0))
					t0 = time.Now()
					for range reps {
						for p := range panels {
							sgemmKernelZ6x64(kc, &ap[p*6*kc], 1, 6, &bp[0], 16*kc, 16, &c[p*6*64], 64, 1, 6, 0xFFFF)
						}
					}
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(100*bestPeak.Seconds()/best.Seconds(), "%peak")
			})
		}
	}
}
