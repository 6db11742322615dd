package cpu

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkMatMul times MatMul on n×n float32 matrices against calling
// gonum's blas32.Gemm (Sgemm) directly (gonum): MatMul with row-major
// operands (tessera) and with a transposed a (tessera-aT), both through
// the assembly GEMM where the CPU has AVX2 and FMA, and MatMul forced onto
// its gonum path (tessera-gonum, what runs without AVX2; it copies a
// transposed a first).
func BenchmarkMatMul(b *testing.B) {
	for _, n := range []int{256, 512, 1024} {
		a, bm, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		r := newRand(1)
		randFill(r, a)
		randFill(r, bm)
		flops := 2 * float64(n) * float64(n) * float64(n)
		report := func(b *testing.B) {
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		l := Contiguous(1, n, n)
		MatMul(c, l, a, l, bm, l) // fault c's pages in before timing
		b.Run(fmt.Sprintf("n=%d/tessera", n), func(b *testing.B) {
			for b.Loop() {
				MatMul(c, l, a, l, bm, l)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("n=%d/tessera-avx2", n), func(b *testing.B) {
			defer func(on bool) { sgemmAVX512 = on }(sgemmAVX512)
			sgemmAVX512 = false
			for b.Loop() {
				MatMul(c, l, a, l, bm, l)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("n=%d/tessera-aT", n), func(b *testing.B) {
			at := Layout{Shape: []int{1, n, n}, Strides: []int{n * n, 1, n}}
			for b.Loop() {
				MatMul(c, l, a, at, bm, l)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("n=%d/tessera-gonum", n), func(b *testing.B) {
			defer func(on bool) { sgemmAsm = on }(sgemmAsm)
			sgemmAsm = false
			for b.Loop() {
				MatMul(c, l, a, l, bm, l)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("n=%d/gonum", n), func(b *testing.B) {
			g := func(s []float32) blas32.General { return blas32.General{Rows: n, Cols: n, Stride: n, Data: s} }
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, g(a), g(bm), 0, g(c))
			}
			report(b)
		})
	}
}

const n16M = 1 << 24

// BenchmarkReduceSum16M sums 16M contiguous float32 into one value.
func BenchmarkReduceSum16M(b *testing.B) {
	x := make([]float32, n16M)
	randFill(newRand(2), x)
	d := []float32{0}
	for b.Loop() {
		reduceBy("sum", d, Contiguous(1), x, Contiguous(n16M))
	}
	b.ReportMetric(4*n16M*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkReduceSumRows16M sums a (4096, 4096) float32 matrix over each
// dim: rows (inner) and columns (side by side).
func BenchmarkReduceSumRows16M(b *testing.B) {
	x := make([]float32, n16M)
	randFill(newRand(3), x)
	d := make([]float32, 4096)
	for _, dim := range []int{1, 0} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			dl := Contiguous(4096, 1)
			if dim == 0 {
				dl = Contiguous(1, 4096)
			}
			for b.Loop() {
				reduceBy("sum", d, dl, x, Contiguous(4096, 4096))
			}
			b.ReportMetric(4*n16M*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkReduceSumCols sums a (256, 512) float32 matrix over its rows:
// the bias gradient of a linear layer of width 512 on a batch of 256.
func BenchmarkReduceSumCols(b *testing.B) {
	x := make([]float32, 256*512)
	randFill(newRand(3), x)
	d := make([]float32, 512)
	for b.Loop() {
		reduceBy("sum", d, Contiguous(1, 512), x, Contiguous(256, 512))
	}
	b.ReportMetric(4*256*512*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkAdd16M adds two contiguous 16M float32 vectors (12 bytes moved
// per element).
func BenchmarkAdd16M(b *testing.B) {
	x, y, d := make([]float32, n16M), make([]float32, n16M), make([]float32, n16M)
	l := Contiguous(n16M)
	add := Fn2[float32, float32]{F: func(x, y float32) float32 { return x + y }, Vec: AddVec[float32]}
	Binary(add, d, l, x, l, y, l) // fault the pages in before timing
	for b.Loop() {
		Binary(add, d, l, x, l, y, l)
	}
	b.ReportMetric(12*n16M*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkSoftmax runs softmax over the rows of a (4096, 1024) float32
// matrix.
func BenchmarkSoftmax(b *testing.B) {
	x, d := make([]float32, 4096*1024), make([]float32, 4096*1024)
	randFill(newRand(4), x)
	l := Contiguous(4096, 1024)
	Softmax(false, d, l, x, l, 1)
	for b.Loop() {
		Softmax(false, d, l, x, l, 1)
	}
	b.ReportMetric(8*4096*1024*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkNormal16M fills 16M float32 normals.
func BenchmarkNormal16M(b *testing.B) {
	d := make([]float32, n16M)
	Normal(d, 1, 0, 0, 1)
	for b.Loop() {
		Normal(d, 1, 0, 0, 1)
	}
	b.ReportMetric(n16M*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
}

// BenchmarkMatMulF64 times float64 MatMul on n×n matrices through the
// package's dgemm (tessera, where the CPU has AVX-512) and through gonum's
// Dgemm (gonum); GFLOP/s-best is the fastest run's rate, which holds on a
// loaded machine.
func BenchmarkMatMulF64(b *testing.B) {
	for _, n := range []int{100, 256, 512, 1024} {
		a, bm, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
		r := newRand(1)
		randFill(r, a)
		randFill(r, bm)
		flops := 2 * float64(n) * float64(n) * float64(n)
		l := Contiguous(1, n, n)
		for _, impl := range []string{"tessera", "gonum"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl), func(b *testing.B) {
				defer func(on bool) { dgemmAsm = on }(dgemmAsm)
				dgemmAsm = dgemmAsm && impl == "tessera"
				MatMul(c, l, a, l, bm, l)
				best := time.Hour
				for b.Loop() {
					t0 := time.Now()
					MatMul(c, l, a, l, bm, l)
					best = min(best, time.Since(t0))
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(flops/best.Seconds()/1e9, "GFLOP/s-best")
			})
		}
	}
}
