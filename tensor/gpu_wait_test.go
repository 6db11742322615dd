package tensor_test

import (
	"math"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// A dispatch that runs longer than wgpu-core 0.17's 5 s fence wait must
// be waited for, not taken as finished: a blocking poll used to return
// after 5 s with the MatMul still running, the stream then freed and
// reused its buffers, the read gave 0 and the next op crashed lavapipe
// (device.pollUntilLocked). One 3072×3072 MatMul runs 6–15 s on lavapipe;
// on a real GPU it is quick and the test only checks the result. It runs
// in a child process, so that a crash fails this test alone.
func TestGPUWaitOutlastsWgpuPollTimeout(t *testing.T) {
	dev := gpuOrSkip(t)
	if testing.Short() {
		t.Skip("-short: one MatMul of several seconds on a software adapter")
	}
	if !inChild(t) {
		return
	}
	const n = 3072
	start := time.Now()
	a := tensor.Ones([]int{n, n}, tensor.On(dev))
	got := a.MatMul(a).Sum().Item()
	took := time.Since(start)
	want := math.Pow(n, 3)
	if math.Abs(got-want) > 1e-6*want {
		t.Fatalf("sum of ones(%d,%d)² = %g after %v, want %g", n, n, got, took, want)
	}
	// The next op must find the device intact.
	if s := a.Narrow(0, 0, 1).Sum().Item(); s != n {
		t.Fatalf("after the long MatMul, a row of ones sums to %g", s)
	}
	t.Logf("one %d×%d MatMul and its readback took %v", n, n, took)
}
