package autograd_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// TestConcurrentBackward runs Backward and Grad on several goroutines at
// once, each in a context of its own on a graph of its own size (the
// engine reuses its walks through a pool: a walk shared by two passes
// would mix their slots), and checks every gradient against the same
// pass run alone. Run under -race it also checks that nothing in the
// engine is shared unguarded.
func TestConcurrentBackward(t *testing.T) {
	// grads returns dy/dx and dy/dw for y = Σ tanh(x·w + x)·x over
	// n×n inputs: x reaches y along three paths, so its gradient is a
	// sum the engine accumulates.
	grads := func(c *tensor.Context, n int, useGrad bool) ([]float32, []float32) {
		var gx, gw []float32
		c.Scope(func() {
			x := tensor.Linspace(-1, 1, n*n, tensor.In(c)).Reshape(n, n).SetRequiresGrad(true)
			w := tensor.Linspace(0.5, -0.5, n*n, tensor.In(c)).Reshape(n, n).SetRequiresGrad(true)
			y := x.MatMul(w).Add(x).Tanh().Mul(x).Sum()
			if useGrad {
				g := autograd.Grad(y, []*tensor.Tensor{x, w})
				gx, gw = g[0].Float32s(), g[1].Float32s()
				return
			}
			autograd.Backward(y)
			gx, gw = x.Grad().Float32s(), w.Grad().Float32s()
		})
		return gx, gw
	}
	const workers = 8
	type want struct{ gx, gw []float32 }
	wants := make([]want, workers)
	for i := range workers {
		wants[i].gx, wants[i].gw = grads(tensor.NewContext(), 3+2*i, i%2 == 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Go(func() {
			c := tensor.NewContext()
			for range 20 {
				gx, gw := grads(c, 3+2*i, i%2 == 1)
				if err := same(gx, wants[i].gx); err != nil {
					errs <- fmt.Errorf("worker %d: dy/dx: %v", i, err)
					return
				}
				if err := same(gw, wants[i].gw); err != nil {
					errs <- fmt.Errorf("worker %d: dy/dw: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// same reports the first element where got and want differ in their
// bits (a pass alone and among others must compute the same sums).
func same(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("element %d is %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}
