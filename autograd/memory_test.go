package autograd_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// heapInuse returns the bytes in in-use heap spans after collecting
// garbage and giving the cleanups it queues time to run.
func heapInuse() uint64 {
	var m runtime.MemStats
	for range 4 {
		runtime.GC()
		time.Sleep(time.Millisecond) // the cleanup goroutine runs
	}
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestTrainingMemoryFlat runs 200 steps of a small MLP, each forward,
// backward and SGD update under tensor.Scope, and checks that the Go heap
// does not grow: backward frees what it saved, the Scope releases the
// step's tensors, and nothing the graph or the engine keeps survives the
// step.
func TestTrainingMemoryFlat(t *testing.T) {
	seed(3, 3)
	const batch, in, hidden, classes = 16, 4, 16, 3
	w1, b1 := leaf(-0.5, 0.5, in, hidden), leaf(-0.1, 0.1, hidden)
	w2, b2 := leaf(-0.5, 0.5, hidden, classes), leaf(-0.1, 0.1, classes)
	params := []*tensor.Tensor{w1, b1, w2, b2}
	x := tensor.New(uniform(batch*in, -1, 1), batch, in)
	labels := make([]int, batch)
	for i := range labels {
		labels[i] = i % classes
	}
	y := index(labels, batch, 1)

	var loss float64
	step := func() {
		tensor.Scope(func() {
			h := x.MatMul(w1).Add(b1).Tanh()
			l := h.MatMul(w2).Add(b2).LogSoftmax(1).Gather(1, y).Mean().Neg()
			autograd.Backward(l)
			loss = l.Item()
			tensor.NoGrad(func() {
				for _, p := range params {
					p.AddInPlace(p.Grad(), -0.5)
					p.SetGrad(nil)
				}
			})
		})
	}
	for range 20 { // warm up the buffer pool and the runtime
		step()
	}
	first := loss
	before := heapInuse()
	for range 200 {
		step()
	}
	after := heapInuse()
	t.Logf("heap in use: %d KiB after warm-up, %d KiB after 200 more steps; loss %.4f → %.4f",
		before>>10, after>>10, first, loss)
	if !(loss < first) {
		t.Errorf("loss did not decrease: %g → %g", first, loss)
	}
	// A step allocates tens of KiB of tensors and graph records; keeping
	// even one small object per step would show over 200 steps.
	const margin = 256 << 10
	if after > before+margin {
		t.Errorf("heap grew by %d KiB over 200 steps (more than %d KiB)", (after-before)>>10, margin>>10)
	}
}

// TestKeptLossReleasesActivations: keeping the loss after backward (to
// log it, say) keeps its small graph records but not the activations
// they were computed from: backward made the nodes forget their inputs,
// so the garbage collector's cleanups release them.
func TestKeptLossReleasesActivations(t *testing.T) {
	seed(3, 4)
	w1, w2 := leaf(-0.5, 0.5, 32, 128), leaf(-0.5, 0.5, 128, 3)
	x := tensor.New(uniform(64*32, -1, 1), 64, 32)
	var losses []*tensor.Tensor
	heapInuse()
	tensor.EmptyCache()
	before := heapInuse()
	for range 50 {
		l := x.MatMul(w1).Tanh().MatMul(w2).Square().Mean()
		autograd.Backward(l)
		losses = append(losses, l)
	}
	heapInuse() // run the cleanups, which return buffers to the pool,
	tensor.EmptyCache()
	after := heapInuse() // then empty the pool
	runtime.KeepAlive(losses)
	t.Logf("heap in use: %d KiB before, %d KiB after 50 kept losses", before>>10, after>>10)
	// Each step computes two 64×128 float64 activations (128 KiB);
	// keeping them would add over 6 MiB.
	if after > before+1<<20 {
		t.Errorf("heap grew by %d KiB with 50 losses kept", (after-before)>>10)
	}
}
