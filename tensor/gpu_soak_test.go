package tensor_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// The soak tests train a small MLP on the GPU for many steps and watch
// the caching allocator (DESIGN.md: "Training for many steps holds
// reserved memory flat"; "allocated GPU memory is the same after every
// step"). They share the process-wide GPU and its statistics with every
// other test of the package, so none of them may run in parallel.

// gpuOrSkip returns the test GPU, skipping without one (failing instead
// when TESSERA_REQUIRE_GPU=1, as devtest.GPU does).
func gpuOrSkip(t *testing.T) tensor.Device {
	t.Helper()
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU adapter")
	}
	return dev
}

// gpuRuntime returns the runtime of dev and restores its default batch
// cap and its budget when the test ends, so that what one test sets never
// leaks into the next.
func gpuRuntime(t *testing.T, dev tensor.Device) *device.GPU {
	t.Helper()
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	budget := g.Stats().Budget
	t.Cleanup(func() {
		g.SetBatchCap(0)
		g.SetBudget(budget)
	})
	return g
}

// childEnv names the test that a child process of inChild runs.
const childEnv = "TESSERA_TEST_CHILD"

// inChild runs the calling test in a child process of the test binary and
// reports its outcome: it returns true in the child, which then runs the
// test's body, and false in the parent, after the child exited. Tests
// whose failure mode is a crash of the whole process (a panic inside a
// cgo callback, an abort in wgpu-native) use it, so that a crash fails
// that one test with its output instead of killing the package's run.
func inChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	var keep []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "XDG_RUNTIME_DIR") || strings.TrimSpace(line) == "" {
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) > 60 {
		keep = append(keep[:30], append([]string{"\t..."}, keep[len(keep)-30:]...)...)
	}
	if err != nil {
		t.Errorf("the child process running %s failed (%v):\n%s", t.Name(), err, strings.Join(keep, "\n"))
		return false
	}
	for _, line := range keep {
		if strings.Contains(line, "_test.go:") {
			t.Log("child: " + strings.TrimSpace(line))
		}
	}
	return false
}

// soakSteps is the soak tests' step count: 1000, 300 under -short, or
// TESSERA_SOAK_STEPS (at least the warm-up plus 100). On lavapipe (2 cores) 1000 steps take about 6 s with
// the loss read back every step, so the full count stays the default.
func soakSteps(t *testing.T) int {
	if s := os.Getenv("TESSERA_SOAK_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 {
			t.Fatalf("TESSERA_SOAK_STEPS=%q: want an integer >= 100", s)
		}
		return n
	}
	if testing.Short() {
		return 300
	}
	return 1000
}

// soak is what a soak run measured.
type soak struct {
	steps, warmup int
	elapsed       time.Duration
	first, last   float64         // mean loss over the first pass, and after training
	allocated     []int64         // after each step
	reserved      []int64         // after each step
	start         device.MemStats // before the model exists, the cache emptied
	warm, end     device.MemStats
}

const (
	soakIn, soakHidden, soakClasses = 64, 32, 10
	soakBatch, soakBatches          = 16, 8
)

// trainSoak trains a 64-32-10 MLP with Adam and cross-entropy on dev for
// steps steps, one tensor.Scope per step. It reads the loss back during
// the first pass over the data and, when readback is true, on every step;
// after training it evaluates the loss on every batch.
//
// The warm-up after which nothing may grow is 20 steps when the loss is
// read every step: each step then starts on an empty batch, so every step
// allocates alike. Without readback, submissions happen every
// DefaultBatchCap (64) commands wherever they fall in a step, and blocks
// freed in the open batch are reused only after it is submitted, so the
// allocation pattern repeats only after up to 64 steps: the warm-up is
// then the first pass plus two such periods.
func trainSoak(t *testing.T, dev tensor.Device, g *device.GPU, steps int, readback bool) soak {
	t.Helper()
	// Start from an empty cache, whatever earlier tests left in it, after
	// collecting what they dropped: its cleanups would otherwise free
	// blocks in the middle of the measured steps.
	settle(t)
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	g.EmptyCache()
	g.ResetPeak()
	startStats := g.Stats()
	// A learnable task: the labels of a random linear teacher.
	gen := tensor.NewGenerator(7)
	var xs, ys []*tensor.Tensor
	teacher := tensor.Randn([]int{soakIn, soakClasses}, tensor.WithGenerator(gen))
	for range soakBatches {
		x := tensor.Randn([]int{soakBatch, soakIn}, tensor.WithGenerator(gen))
		y := x.MatMul(teacher).ArgMaxDim(1, false)
		xs = append(xs, x.To(dev).Keep())
		ys = append(ys, y.To(dev).Keep())
	}
	model := nn.NewMLP([]int{soakIn, soakHidden, soakClasses}, (*tensor.Tensor).ReLU,
		tensor.On(dev), tensor.WithGenerator(tensor.NewGenerator(8)))
	opt := optim.NewAdam(nn.Parameters(model), optim.LR(1e-2))
	defer func() {
		for _, p := range nn.Parameters(model) {
			p.Release()
		}
		for i := range xs {
			xs[i].Release()
			ys[i].Release()
		}
	}()

	r := soak{start: startStats, steps: steps, warmup: 20, allocated: make([]int64, steps), reserved: make([]int64, steps)}
	if !readback {
		r.warmup = soakBatches + 2*device.DefaultBatchCap
	}
	if steps < r.warmup+100 {
		t.Fatalf("%d steps leave fewer than 100 after the %d-step warm-up", steps, r.warmup)
	}
	start := time.Now()
	for step := range steps {
		tensor.Scope(func() {
			x, y := xs[step%soakBatches], ys[step%soakBatches]
			loss := nn.CrossEntropy(model.Forward(x), y)
			autograd.Backward(loss)
			opt.Step()
			opt.ZeroGrad()
			if step < soakBatches {
				r.first += loss.Item() / soakBatches
			} else if readback {
				loss.Item()
			}
		})
		s := g.Stats()
		r.allocated[step], r.reserved[step] = s.Allocated, s.Reserved
		if step == r.warmup-1 {
			r.warm = s
		}
	}
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	r.elapsed = time.Since(start)
	r.end = g.Stats()
	tensor.NoGrad(func() {
		for i := range xs {
			tensor.Scope(func() { r.last += nn.CrossEntropy(model.Forward(xs[i]), ys[i]).Item() / soakBatches })
		}
	})
	return r
}

// check asserts the allocator's plateau and the training's progress.
func (r soak) check(t *testing.T, dev tensor.Device) {
	t.Helper()
	// Reserved plateaus: no step after the warm-up reserves more than the
	// warm-up did, and no block goes back to the driver to be made again.
	maxAfter := int64(0)
	for step := r.warmup; step < r.steps; step++ {
		maxAfter = max(maxAfter, r.reserved[step])
		if r.reserved[step] > r.warm.Reserved {
			t.Errorf("step %d: %d bytes reserved, more than the %d after the %d warm-up steps", step, r.reserved[step], r.warm.Reserved, r.warmup)
			break
		}
	}
	if r.end.Releases != r.warm.Releases {
		t.Errorf("%d blocks released to the driver after the warm-up: the cache churns", r.end.Releases-r.warm.Releases)
	}
	// Allocated after every step returns to one value: the parameters,
	// the optimizer state and the data set.
	for step := r.warmup; step < r.steps; step++ {
		if r.allocated[step] != r.warm.Allocated {
			t.Errorf("step %d: %d bytes allocated after the step, %d after step %d", step, r.allocated[step], r.warm.Allocated, r.warmup-1)
			break
		}
	}
	hits := r.end.CacheHits - r.warm.CacheHits
	misses := r.end.CacheMisses - r.warm.CacheMisses
	rate := float64(hits) / float64(max(hits+misses, 1))
	if hits+misses == 0 || rate <= 0.99 {
		t.Errorf("cache hit rate after the warm-up %.3f%% (%d hits, %d misses), want above 99%%", 100*rate, hits, misses)
	}
	// The loss goes down: the mean over the first pass against the mean
	// over all batches after training.
	if !(r.last < 0.5*r.first) {
		t.Errorf("mean loss %.4f over the first pass, %.4f after %d steps: the MLP did not train", r.first, r.last, r.steps)
	}
	t.Logf("%d steps in %v (%.2f ms/step) on %v; loss %.4f -> %.4f", r.steps, r.elapsed.Round(time.Millisecond),
		float64(r.elapsed.Microseconds())/1000/float64(r.steps), dev, r.first, r.last)
	t.Logf("reserved %s before training, %s after the %d-step warm-up, at most %s after it, %s at the end (peak %s); allocated %s after every step; hit rate after the warm-up %.3f%% (%d hits, %d misses)",
		device.FormatBytes(r.start.Reserved), device.FormatBytes(r.warm.Reserved), r.warmup, device.FormatBytes(maxAfter),
		device.FormatBytes(r.end.Reserved), device.FormatBytes(r.end.PeakReserved),
		device.FormatBytes(r.warm.Allocated), 100*rate, hits, misses)
	if t.Failed() {
		fmt.Fprint(os.Stderr, r.end.String())
	}
}

// TestGPUSoakMLPTraining trains a 64-32-10 MLP (batch 16) with Adam and
// cross-entropy on the GPU for 1000 steps, one tensor.Scope per step,
// reading the loss back every step as a training loop that logs it does.
// After a 20-step warm-up, reserved bytes never grow (the cache holds a
// fixed working set) and no block is released to the driver, allocated
// bytes return to the same value after every step (nothing leaks), more
// than 99% of allocations are cache hits, and the loss goes down. A leak
// of one tensor per step, a Scope that misses a temporary, an allocator
// that does not reuse freed blocks or that gives blocks back and makes
// them again all fail it.
func TestGPUSoakMLPTraining(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	g.SetBatchCap(0) // the default cap, as a user trains
	trainSoak(t, dev, g, soakSteps(t), true).check(t, dev)
}

// TestGPUSoakMLPTrainingWithoutReadback is the soak test for the loop of
// DESIGN.md, which never reads the GPU: after the first pass over the
// data the loss is not read back, so hundreds of batches are submitted at
// the batch cap, retired and their blocks reused without a readback in
// between, while the garbage collector runs with submissions in flight.
// It runs in a child process because the failure it guards against is a
// crash: see TestGPUSubmissionCallbacksSurviveGC.
func TestGPUSoakMLPTrainingWithoutReadback(t *testing.T) {
	dev := gpuOrSkip(t)
	if !inChild(t) {
		return
	}
	g := gpuRuntime(t, dev)
	g.SetBatchCap(0)
	trainSoak(t, dev, g, soakSteps(t), false).check(t, dev)
}
