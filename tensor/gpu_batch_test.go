package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// Failed GPU batches (package device, "A failed batch never loses work
// silently"): valid work never fails validation, and when a kernel does,
// only what depends on it is lost, loudly.

// TestGPUReductionAfterVec4InOneBatch is the regression test of a batch
// that wgpu rejected on valid input: Ones(n).Exp().Sum() records a vec4
// elementwise kernel and then the two reduction stages in one compute
// pass; the second stage reads a 12-byte scratch buffer that the vec4
// kernel's 16-byte binding expectation, kept by wgpu across pipelines of
// the same layout, rejected ("Buffer is bound with size 12 where the
// shader expects 16").
func TestGPUReductionAfterVec4InOneBatch(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	replays := g.ReplayCount()
	for _, n := range []int{8192, 16384, 20000, 24576, 32768} {
		ok(t, fmt.Sprintf("Ones(%d).Exp().Sum()", n), func() {
			tensor.Scope(func() {
				got := tensor.Ones([]int{n}, tensor.On(dev)).Exp().Sum().Item()
				if want := float64(n) * math.E; math.Abs(got-want) > 1e-5*want {
					t.Errorf("Ones(%d).Exp().Sum() = %v, want %v", n, got, want)
				}
			})
		})
	}
	ok(t, "x.Sub(y).Square().Mean() on 128×128", func() {
		tensor.Scope(func() {
			x := tensor.Ones([]int{128, 128}, tensor.On(dev))
			y := tensor.Zeros([]int{128, 128}, tensor.On(dev))
			if got := x.Sub(y).Square().Mean().Item(); got != 1 {
				t.Errorf("mean = %v, want 1", got)
			}
		})
	})
	if d := g.ReplayCount() - replays; d != 0 {
		t.Errorf("valid work needed %d replays of a failed batch", d)
	}
}

// expectFailed checks that err is the *tensor.Error of using a tensor
// whose contents a failed batch could not produce: errors.As finds the
// device's CommandFailedError, errors.Is the original wgpu error (the
// injected invalid dispatch of Exp).
func expectFailed(t *testing.T, what string, err error, tainted bool) {
	t.Helper()
	var te *tensor.Error
	var fe *device.CommandFailedError
	if !errors.As(err, &te) || !errors.As(err, &fe) || !errors.Is(err, device.ErrCommandFailed) {
		t.Errorf("%s: err = %v, want a *tensor.Error wrapping a *device.CommandFailedError", what, err)
		return
	}
	if fe.Failed != "Exp" || fe.Tainted != tainted || fe.Err == nil || !errors.Is(err, fe.Err) {
		t.Errorf("%s: %+v, want Exp's failure (tainted %v)", what, fe, tainted)
	}
}

// TestGPUFailedBatchKeepsOtherWork records, in one batch, an in-place
// parameter update, ops of another goroutine, a kernel that wgpu rejects
// (device.GPU.InjectFaultForTesting), an op reading its output, and more
// ops of both goroutines. The batch is replayed: the update and every
// other op take effect, and reading or using the failed outputs panics
// with a *tensor.Error that says why.
func TestGPUFailedBatchKeepsOtherWork(t *testing.T) {
	eagerOnly(t)
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	t.Cleanup(func() { g.InjectFaultForTesting(nil) })
	const n = 33
	host := randFloats(41, n)
	// other runs f on another goroutine and waits for it; that goroutine
	// computes in a Context of its own, as any goroutine beside a loop on
	// the default context must.
	oc := tensor.NewContext()
	other := func(f func()) {
		done := make(chan error)
		go func() { done <- tensor.Catch(f) }()
		if err := <-done; err != nil {
			t.Errorf("the other goroutine's ops: %v", err)
		}
	}
	var before, after *tensor.Tensor
	defer func() { before.Release(); after.Release() }()
	ok(t, "the failed batch", func() {
		tensor.Scope(func() {
			param := tensor.New(host).To(dev)
			x := tensor.New(host).To(dev)
			xo := tensor.From(host, []int{n}, tensor.On(dev), tensor.In(oc))
			grad := tensor.Full([]int{n}, 0.5, tensor.On(dev))
			if err := tensor.Sync(dev); err != nil {
				t.Fatal(err)
			}
			g.SetBatchCap(1 << 20)
			replays, subs := g.ReplayCount(), g.SubmitCount()
			other(func() { before = xo.MulScalar(3).AddScalar(1) })
			param.AddInPlace(grad, -0.1)
			g.InjectFaultForTesting(func(k device.Kernel) bool { return k.Label == "Exp" })
			bad := x.Exp()
			g.InjectFaultForTesting(nil)
			tainted := bad.AddScalar(1)
			other(func() { after = xo.Neg().MulScalar(2) })
			later := x.Square()
			if g.SubmitCount() != subs {
				t.Fatalf("the batch was submitted before the read")
			}
			want := func(f func(v float32) float32) []float32 {
				out := make([]float32, n)
				for i, v := range host {
					out[i] = f(v)
				}
				return out
			}
			approx.CheckAny(t, "the parameter updated in place before the failure", param.Float32s(), want(func(v float32) float32 { return v - 0.05 }), approx.Rel1(1e-6))
			if d := g.ReplayCount() - replays; d != 1 {
				t.Fatalf("%d replays, want 1", d)
			}
			approx.CheckAny(t, "the other goroutine's op before the failure", before.Float32s(), want(func(v float32) float32 { return 3*v + 1 }), approx.Rel1(1e-6))
			approx.CheckAny(t, "the other goroutine's op after the failure", after.Float32s(), want(func(v float32) float32 { return -2 * v }), approx.Rel1(0))
			approx.CheckAny(t, "an op after the failure", later.Float32s(), want(func(v float32) float32 { return v * v }), approx.Rel1(0))
			expectFailed(t, "reading the failed output", tensor.Catch(func() { bad.Float32s() }), false)
			expectFailed(t, "reading an op's output that read it", tensor.Catch(func() { tainted.Float32s() }), true)
			expectFailed(t, "using the failed output", tensor.Catch(func() { bad.Add(x) }), false)
			if err := tensor.Sync(dev); err != nil {
				t.Errorf("Sync after the replay: %v", err)
			}
			bad.Release()
			tainted.Release()
			approx.CheckAny(t, "Exp once the fault is gone", x.Exp().Float32s(), tensor.New(host).Exp().Float32s(), approx.Rel1(1e-6))
		})
	})
}
