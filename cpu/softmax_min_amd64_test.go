package cpu

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSoftmaxMin runs softmax over the rows of a (4096, 1024) float32
// matrix with the AVX2 and the AVX-512 kernels, reporting the fastest of
// the b.N runs (ms-min), which holds on a loaded machine.
func BenchmarkSoftmaxMin(b *testing.B) {
	x, d := make([]float32, 4096*1024), make([]float32, 4096*1024)
	randFill(newRand(4), x)
	l := Contiguous(4096, 1024)
	for _, z := range []bool{false, true} {
		b.Run(fmt.Sprintf("avx512=%v", z), func(b *testing.B) {
			defer func(on bool) { expAVX512 = on }(expAVX512)
			expAVX512 = z && cpuAVX512
			Softmax(false, d, l, x, l, 1)
			best := time.Hour
			for b.Loop() {
				t0 := time.Now()
				Softmax(false, d, l, x, l, 1)
				best = min(best, time.Since(t0))
			}
			b.ReportMetric(best.Seconds()*1e3, "ms-min")
		})
	}
}
