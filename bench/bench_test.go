package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/tessera-ml/tessera/tensor"
)

// devices returns the devices to benchmark: the CPU, and the GPU when
// TESSERA_DEVICE names one.
func devices() []tensor.Device {
	devs := []tensor.Device{tensor.CPU}
	if d, _, err := tensor.DefaultDevice(); err == nil && d != tensor.CPU {
		devs = append(devs, d)
	}
	return devs
}

// BenchmarkWorkloads runs every registered workload at its full sizes
// through testing.B, reporting the workload's unit:
//
//	TESSERA_DEVICE=gpu go test ./bench -run '^$' -bench Workloads/gemm
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range Workloads() {
		for _, s := range w.Sizes {
			for _, dev := range devices() {
				b.Run(fmt.Sprintf("%s/%s/dev=%v", w.Name, s.Label, dev), func(b *testing.B) {
					c := w.Setup(dev, s)
					defer c.Release()
					c.Step() // warm up pipelines, pools and optimizer state
					if err := tensor.Sync(dev); err != nil {
						b.Fatal(err)
					}
					for b.Loop() {
						c.Step()
						if err := tensor.Sync(dev); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(w.Unit.Value(w.Work(s)*float64(b.N), b.Elapsed().Seconds()), w.Unit.Name)
				})
			}
		}
	}
}

// BenchmarkGEMMGonum calls gonum's blas32.Gemm directly at the GEMM
// workload's sizes, the pure-Go baseline for Tessera's CPU kernel.
func BenchmarkGEMMGonum(b *testing.B) {
	for _, s := range gemm.Sizes {
		n := s.Dims[0]
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			mat := func() blas32.General {
				d := make([]float32, n*n)
				for i := range d {
					d[i] = float32(rand.NormFloat64())
				}
				return blas32.General{Rows: n, Cols: n, Stride: n, Data: d}
			}
			x, y, z := mat(), mat(), mat()
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, x, y, 0, z)
			}
			b.ReportMetric(GFLOPs.Value(gemm.Work(s)*float64(b.N), b.Elapsed().Seconds()), GFLOPs.Name)
		})
	}
}
