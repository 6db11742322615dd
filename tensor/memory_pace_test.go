package tensor_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// paceDropped is the memory of the tensors that the loops of
// TestUnscopedLoopMemoryFollowsUse drop: at least 3 GiB, as issue 20
// asks.
const paceDropped = 3 << 30

// paceLoop runs a loop that keeps four 16 MiB tensors, like a model's
// parameters, and each step makes a 16 MiB update for one of them (an
// outer product) and adds it in, until paceDropped bytes of updates were
// dropped; inside a Scope per step, or, with scoped false, with nothing
// released by hand, as a PyTorch user writes it. It returns the peak of
// peakOf sampled after every step.
func paceLoop(dev tensor.Device, scoped bool, peakOf func() int64) int64 {
	const rows, cols = 4096, 1024
	g := tensor.NewGenerator(5)
	var params [4]*tensor.Tensor
	for i := range params {
		params[i] = tensor.Zeros([]int{rows, cols}, tensor.On(dev))
	}
	a := tensor.Rand([]int{rows, 1}, tensor.WithGenerator(g), tensor.On(dev))
	b := tensor.Rand([]int{1, cols}, tensor.WithGenerator(g), tensor.On(dev))
	var peak int64
	for i := range paceDropped / (rows * cols * 4) {
		step := func() { params[i%len(params)].AddInPlace(a.MatMul(b), 1e-3) }
		if scoped {
			tensor.Scope(step)
		} else {
			step()
		}
		if err := tensor.Sync(dev); err != nil {
			panic(err)
		}
		peak = max(peak, peakOf())
	}
	runtime.KeepAlive(params)
	return peak
}

// heapObjects returns the bytes of heap objects, live or not yet swept.
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestUnscopedLoopMemoryFollowsUse runs the same loop with a Scope per
// step and with nothing released, and checks that without the Scope the
// memory peaks at most twice as high: on the CPU the Go heap, on a GPU
// the allocator's reserved bytes. The pool and the allocator pace
// collections themselves (package gcpace): Go's collector alone, blind
// to GPU memory and a cycle late for pooled buffers, let such a loop
// hold many times what it uses.
func TestUnscopedLoopMemoryFollowsUse(t *testing.T) {
	if testing.Short() {
		t.Skip("drops 3 GiB of tensors on each device")
	}
	t.Run("cpu", func(t *testing.T) {
		measure := func(scoped bool) int64 {
			runtime.GC()
			tensor.EmptyCache()
			runtime.GC()
			base := heapObjects()
			return paceLoop(tensor.CPU, scoped, heapObjects) - base
		}
		scoped := measure(true)
		before := tensor.CPUMemory().Collections
		unscoped := measure(false)
		if n := tensor.CPUMemory().Collections - before; n == 0 {
			t.Error("the unscoped loop ran no paced collection (CPUMemory().Collections did not grow)")
		} else {
			t.Logf("the unscoped loop ran %d paced collections", n)
		}
		comparePeaks(t, "Go heap", scoped, unscoped)
	})
	t.Run("gpu", func(t *testing.T) {
		dev := devtest.MustGPU(t)
		g, err := tensor.GPUDevice(dev)
		if err != nil {
			t.Fatal(err)
		}
		reserved := func() int64 { return g.Stats().Reserved }
		measure := func(scoped bool) int64 {
			runtime.GC()
			tensor.EmptyCache()
			g.ResetPeak()
			base := g.Stats().Reserved
			paceLoop(dev, scoped, reserved)
			return g.Stats().PeakReserved - base
		}
		comparePeaks(t, "GPU allocator reserved", measure(true), measure(false))
	})
}

func comparePeaks(t *testing.T, what string, scoped, unscoped int64) {
	t.Helper()
	t.Logf("%s peak over %d MiB dropped: %d MiB with a Scope per step, %d MiB without (%.2f×)",
		what, paceDropped>>20, scoped>>20, unscoped>>20, float64(unscoped)/float64(scoped))
	if scoped <= 0 || unscoped > 2*scoped {
		t.Errorf("%s", fmt.Sprintf("%s peak without a Scope %d MiB, want at most twice the %d MiB with one", what, unscoped>>20, scoped>>20))
	}
}
