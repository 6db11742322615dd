package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// devices returns the devices to benchmark: the CPU, and the GPU when
// TESSERA_DEVICE names one.
func devices(b *testing.B) []tensor.Device {
	devs := []tensor.Device{tensor.CPU}
	if d, _, err := tensor.DefaultDevice(); err == nil && d != tensor.CPU {
		devs = append(devs, d)
	}
	return devs
}

func randn(dev tensor.Device, shape ...int) *tensor.Tensor {
	return tensor.Randn(shape, tensor.On(dev))
}

func wait(b *testing.B, dev tensor.Device) {
	if err := tensor.Sync(dev); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGEMM times n×n float32 matrix products, Tessera's MatMul
// against calling gonum's blas32.Gemm directly. 2n³ flops per product.
func BenchmarkGEMM(b *testing.B) {
	for _, n := range []int{256, 512, 1024} {
		for _, dev := range devices(b) {
			b.Run(fmt.Sprintf("impl=tessera/dev=%v/n=%d", dev, n), func(b *testing.B) {
				x, y := randn(dev, n, n), randn(dev, n, n)
				for b.Loop() {
					tensor.Scope(func() { x.MatMul(y) })
					wait(b, dev)
				}
				b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		b.Run(fmt.Sprintf("impl=gonum/n=%d", n), func(b *testing.B) {
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
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

const n16M = 16 << 20

// BenchmarkAdd16M times an elementwise add of two 16M-element float32
// tensors: 12 bytes move per element (two reads, one write).
func BenchmarkAdd16M(b *testing.B) {
	for _, dev := range devices(b) {
		b.Run(fmt.Sprintf("dev=%v", dev), func(b *testing.B) {
			x, y := randn(dev, n16M), randn(dev, n16M)
			b.SetBytes(12 * n16M)
			for b.Loop() {
				tensor.Scope(func() { x.Add(y) })
				wait(b, dev)
			}
		})
	}
	b.Run("impl=go-loop", func(b *testing.B) { // the plain Go loop Tessera's kernel should match
		x, y, z := make([]float32, n16M), make([]float32, n16M), make([]float32, n16M)
		b.SetBytes(12 * n16M)
		for b.Loop() {
			for i := range z {
				z[i] = x[i] + y[i]
			}
		}
	})
}

// BenchmarkSum16M times a whole-tensor sum of 16M float32 elements (4
// bytes read per element).
func BenchmarkSum16M(b *testing.B) {
	for _, dev := range devices(b) {
		b.Run(fmt.Sprintf("dev=%v", dev), func(b *testing.B) {
			x := randn(dev, n16M)
			b.SetBytes(4 * n16M)
			for b.Loop() {
				tensor.Scope(func() { x.Sum() })
				wait(b, dev)
			}
		})
	}
}

// BenchmarkSoftmax times softmax over the rows of a 4096×1024 float32
// matrix (4 bytes read and 4 written per element at least).
func BenchmarkSoftmax(b *testing.B) {
	for _, dev := range devices(b) {
		b.Run(fmt.Sprintf("dev=%v/shape=4096x1024", dev), func(b *testing.B) {
			x := randn(dev, 4096, 1024)
			b.SetBytes(8 * 4096 * 1024)
			for b.Loop() {
				tensor.Scope(func() { x.Softmax(-1) })
				wait(b, dev)
			}
		})
	}
}

// BenchmarkMLPStep times one training step of a 784-512-512-10 ReLU MLP
// with cross-entropy on a batch of 256: forward, backward and an SGD
// update. About 3 × 2 × 256 × (784·512 + 512·512 + 512·10) ≈ 1.03 GFLOP
// per step.
func BenchmarkMLPStep(b *testing.B) {
	for _, dev := range devices(b) {
		b.Run(fmt.Sprintf("dev=%v/batch=256", dev), func(b *testing.B) {
			sizes := []int{784, 512, 512, 10}
			var params []*tensor.Tensor
			for i := 0; i+1 < len(sizes); i++ {
				w := tensor.Randn([]int{sizes[i], sizes[i+1]}, tensor.On(dev)).MulScalar(0.05)
				params = append(params, w.SetRequiresGrad(true), tensor.Zeros([]int{sizes[i+1]}, tensor.On(dev)).SetRequiresGrad(true))
			}
			x := randn(dev, 256, 784)
			y := tensor.RandInt(0, 10, []int{256}, tensor.On(dev))
			step := func() {
				tensor.Scope(func() {
					h := x
					for i := 0; i < len(params); i += 2 {
						h = h.MatMul(params[i]).Add(params[i+1])
						if i+2 < len(params) {
							h = h.ReLU()
						}
					}
					loss := h.LogSoftmax(1).Gather(1, y.Unsqueeze(1)).Mean().Neg()
					autograd.Backward(loss)
					tensor.NoGrad(func() {
						for _, p := range params {
							p.AddInPlace(p.Grad(), -0.01)
							p.SetGrad(nil)
						}
					})
				})
				wait(b, dev)
			}
			step() // warm up caches and pools
			for b.Loop() {
				step()
			}
			flops := 3 * 2 * 256 * float64(784*512+512*512+512*10)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkTinyOp times the per-op overhead: an AddScalar on 64
// elements, 256 ops recorded back to back and then waited for, so on the
// GPU it measures recording plus batched execution per dispatch.
func BenchmarkTinyOp(b *testing.B) {
	for _, dev := range devices(b) {
		b.Run(fmt.Sprintf("dev=%v", dev), func(b *testing.B) {
			x := randn(dev, 64)
			const ops = 256
			for b.Loop() {
				tensor.Scope(func() {
					y := x
					for range ops {
						y = y.AddScalar(1)
					}
				})
				wait(b, dev)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*ops), "µs/op")
		})
	}
}
