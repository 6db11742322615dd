//go:build cgo

package device

import (
	"testing"
	"time"
)

// BenchmarkDispatch measures microseconds per tiny dispatch, recorded into
// batches of the default cap and waited for inside the timed loop (the
// trailing Sync), with a reused bind group; "record" measures recording
// alone.
func BenchmarkDispatch(b *testing.B) {
	g := openTestGPU(b)
	x := mustAlloc(b, g, 256)
	y := mustAlloc(b, g, 256)
	mustWrite(b, g, x, make([]uint32, 64))
	plain := double(x, y)
	withParams := Kernel{Source: wgslAxpb, Bindings: []Binding{{Buf: x, ReadOnly: true}, {Buf: y}}, Params: axpbParams(3, 1, 64), Groups: [3]uint32{1, 1, 1}}
	for _, c := range []struct {
		name string
		k    Kernel
	}{{"plain", plain}, {"params", withParams}} {
		b.Run(c.name, func(b *testing.B) {
			mustRun(b, g, c.k) // compile outside the timing
			if err := g.Sync(); err != nil {
				b.Fatal(err)
			}
			var record time.Duration
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				t0 := time.Now()
				if err := g.Run(c.k); err != nil {
					b.Fatal(err)
				}
				record += time.Since(t0)
			}
			if err := g.Sync(); err != nil {
				b.Fatal(err)
			}
			el := time.Since(start)
			b.ReportMetric(float64(el.Nanoseconds())/1e3/float64(b.N), "µs/dispatch")
			b.ReportMetric(float64(record.Nanoseconds())/1e3/float64(b.N), "µs/Run")
		})
	}
	// Recording cost alone: one batch for the whole loop, so no Run waits
	// for lavapipe (which shares the CPU) to execute earlier batches.
	b.Run("record", func(b *testing.B) {
		g.SetBatchCap(b.N + 1)
		defer g.SetBatchCap(0)
		b.ResetTimer()
		for range b.N {
			if err := g.Run(plain); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/Run")
		if err := g.Sync(); err != nil {
			b.Fatal(err)
		}
	})
}
