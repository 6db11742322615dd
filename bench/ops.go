package bench

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// square returns the size of an n×n problem.
func square(n int) Size { return Size{Label: fmt.Sprintf("%d", n), X: float64(n), Dims: []int{n}} }

// elements returns the size of an n-element problem, labelled in K or M.
func elements(n int) Size {
	label := fmt.Sprint(n)
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		label = fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		label = fmt.Sprintf("%dK", n>>10)
	}
	return Size{Label: label, X: float64(n), Dims: []int{n}}
}

// rows returns the size of an r×c row-wise problem.
func rows(r, c int) Size {
	return Size{Label: fmt.Sprintf("%d×%d", r, c), X: float64(r * c), Dims: []int{r, c}}
}

// released returns a Release that frees ts.
func released(ts ...*tensor.Tensor) func() {
	return func() {
		for _, t := range ts {
			t.Release()
		}
	}
}

// scoped runs f in a tensor.Scope, so a step frees what it made. Steps
// realize (tensor.Realize) the result they measure: with fusion on, an
// unread result may stay pending, and a released pending result is never
// computed.
func scoped(f func()) func() { return func() { tensor.Scope(f) } }

var gemm = Workload{
	Name: "gemm", Family: "GEMM", Unit: GFLOPs,
	Sizes: []Size{square(256), square(512), square(1024), square(2048)},
	Quick: []Size{square(64), square(128), square(256)},
	Peers: []string{"torch"},
	Doc:   "gemm: n×n float32 product, 2n³ flops",
	Work:  func(s Size) float64 { n := float64(s.Dims[0]); return 2 * n * n * n },
	Setup: func(dev tensor.Device, s Size) Case {
		n := s.Dims[0]
		a, b := tensor.Randn([]int{n, n}, tensor.On(dev)), tensor.Randn([]int{n, n}, tensor.On(dev))
		return Case{Step: scoped(func() { tensor.Realize(a.MatMul(b)) }), Release: released(a, b)}
	},
}

var mulAdd = Workload{
	Name: "mul_add", Family: "Elementwise a·b+a", Unit: GBs,
	Sizes: []Size{elements(1 << 20), elements(4 << 20), elements(16 << 20)},
	Quick: []Size{elements(64 << 10), elements(256 << 10)},
	Peers: []string{"torch", "numpy"},
	Doc:   "mul_add: a.Mul(b).Add(a) into a fresh float32 tensor (realized, when fusion defers it), 12 bytes per element (read a and b, write the result once)",
	Work:  func(s Size) float64 { return 12 * float64(s.Dims[0]) },
	Setup: func(dev tensor.Device, s Size) Case {
		n := s.Dims[0]
		a, b := tensor.Randn([]int{n}, tensor.On(dev)), tensor.Randn([]int{n}, tensor.On(dev))
		return Case{Step: scoped(func() { tensor.Realize(a.Mul(b).Add(a)) }), Release: released(a, b)}
	},
}

var sum = Workload{
	Name: "sum", Family: "Sum", Unit: GBs,
	Sizes: []Size{elements(1 << 20), elements(4 << 20), elements(16 << 20)},
	Quick: []Size{elements(64 << 10), elements(256 << 10)},
	Peers: []string{"torch"},
	Doc:   "sum: whole-tensor float32 sum, 4 bytes read per element",
	Work:  func(s Size) float64 { return 4 * float64(s.Dims[0]) },
	Setup: func(dev tensor.Device, s Size) Case {
		n := s.Dims[0]
		a := tensor.Randn([]int{n}, tensor.On(dev))
		return Case{Step: scoped(func() { tensor.Realize(a.Sum()) }), Release: released(a)}
	},
}

var softmax = Workload{
	Name: "softmax", Family: "Row softmax", Unit: GBs,
	Sizes: []Size{rows(4096, 1024)},
	Quick: []Size{rows(256, 1024)},
	Peers: []string{"torch"},
	Doc:   "softmax: softmax over the rows of a float32 matrix, 8 bytes per element (read once, write once)",
	Work:  func(s Size) float64 { return 8 * float64(s.Dims[0]*s.Dims[1]) },
	Setup: func(dev tensor.Device, s Size) Case {
		r, c := s.Dims[0], s.Dims[1]
		a := tensor.Randn([]int{r, c}, tensor.On(dev))
		return Case{Step: scoped(func() { tensor.Realize(a.Softmax(-1)) }), Release: released(a)}
	},
}

// tinySize is ops chained elementwise ops on n elements, then one wait.
func tinySize(n, ops int) Size {
	return Size{Label: fmt.Sprintf("%d elements, %d ops", n, ops), X: float64(n), Dims: []int{n, ops}}
}

var tinyOp = Workload{
	Name: "tiny_op", Family: "Per-op overhead", Unit: MicrosOp,
	Sizes: []Size{tinySize(64, 256)},
	Quick: []Size{tinySize(64, 256)},
	Peers: []string{"torch"},
	Doc:   "tiny_op: chained AddScalar(1) on a few float32 elements, then one wait; µs per op (on a GPU: recording plus batched execution)",
	Work:  func(s Size) float64 { return float64(s.Dims[1]) },
	Setup: func(dev tensor.Device, s Size) Case {
		x := tensor.Randn([]int{s.Dims[0]}, tensor.On(dev))
		return Case{Step: scoped(func() {
			y := x
			for range s.Dims[1] {
				y = y.AddScalar(1)
			}
			tensor.Realize(y) // computed even when fusion defers it
		}), Release: released(x)}
	},
}
