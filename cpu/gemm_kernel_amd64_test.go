package cpu

import (
	"fmt"
	"runtime"
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
				iters := int(flops / fmaFlopsZ)
				best, bestPeak := time.Hour, time.Hour
				for b.Loop() {
					t0 := time.Now()
					fmaLoopZ(iters)
					bestPeak = min(bestPeak, time.Since(t0))
					t0 = time.Now()
					for range reps {
						for p := range panels {
							sgemmKernelZ6x64(kc, &ap[p*6*kc], 1, 6, &bp[0], 16*kc, 16, &c[p*6*64], 64, 1, 6, 0xFFFF, nil, 0)
						}
					}
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(100*bestPeak.Seconds()/best.Seconds(), "%peak")
			})
		}
	}
}

// TestGemmCacheKeepsShared hands back the sets of a product on every
// core in the order gemmRows does (the blocks' first, the shared
// operand's last) and checks that the next product gets every one back,
// the shared operand's first, on 16 cores as on this machine.
func TestGemmCacheKeepsShared(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	var c gemmCache[float32]
	shared := c.get()
	blocks := make([]*gemmBufs[float32], runtime.GOMAXPROCS(0)) // one a goroutine
	for i := range blocks {
		blocks[i] = c.get()
	}
	for _, b := range blocks {
		c.put(b)
	}
	c.put(shared)
	if got := c.get(); got != shared {
		t.Fatalf("the next product's first set is not the shared operand's")
	}
	kept := map[*gemmBufs[float32]]bool{}
	for range blocks {
		kept[c.get()] = true
	}
	for i, b := range blocks {
		if !kept[b] {
			t.Errorf("block set %d of %d was not kept", i, len(blocks))
		}
	}
}
