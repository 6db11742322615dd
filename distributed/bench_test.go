package distributed

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// BenchmarkAllReduce times a blocking float32 Sum AllReduce of 4 KiB to
// 64 MiB on each device, GPU staging included, and reports the bus
// bandwidth as nccl-tests defines it: algbw = bytes / time, busbw =
// algbw · 2(n-1)/n, the share of the bytes each rank's link carries in a
// ring, comparable across n. In a world of one busbw is 0 and the time is
// that of the checks alone. Every rank must run the same iterations, so
// under mpirun give a fixed count:
//
//	go test -c ./distributed && mpirun -np 2 ./distributed.test -test.run '^$' -test.bench AllReduce -test.benchtime 20x
func BenchmarkAllReduce(b *testing.B) {
	g, err := Init()
	if err != nil {
		b.Fatal(err)
	}
	if f := flag.Lookup("test.benchtime"); g.Size() > 1 && (f == nil || !strings.HasSuffix(f.Value.String(), "x")) {
		b.Fatal("under mpirun every rank must run the same iterations: pass -test.benchtime Nx")
	}
	for _, dev := range devtest.Devices(b) {
		for _, bytes := range []int{4 << 10, 256 << 10, 4 << 20, 64 << 20} {
			b.Run(fmt.Sprintf("dev=%v/bytes=%d", dev, bytes), func(b *testing.B) {
				x := tensor.Ones([]int{bytes / 4}, tensor.On(dev))
				for b.Loop() {
					if err := g.AllReduce(x, Sum); err != nil {
						b.Fatal(err)
					}
				}
				n := float64(g.Size())
				algbw := float64(bytes) * float64(b.N) / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(algbw, "algbw_GB/s")
				b.ReportMetric(algbw*2*(n-1)/n, "busbw_GB/s")
			})
		}
	}
}
