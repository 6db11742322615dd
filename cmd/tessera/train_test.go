package main

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestTrainRuns trains for a few steps on the CPU with the real MNIST
// files to check the command end to end: data loading, model, optimizer,
// evaluation.
func TestTrainRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("loads MNIST")
	}
	t.Setenv("TESSERA_DEVICE", "cpu")
	code, stdout, stderr := runArgs("train", "-steps", "5", "-batch", "32", "-hidden", "32")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "loaded MNIST: 60000 training and 10000 test images") ||
		!strings.Contains(stdout, "test accuracy:") {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestTrainEdges trains on the tiny set at the edges of the valid flags:
// one step, a batch of the whole training set, one hidden unit.
func TestTrainEdges(t *testing.T) {
	tinyMNIST(t)
	t.Setenv("TESSERA_DEVICE", "cpu")
	code, stdout, stderr := runArgs("train", "-steps", "1", "-batch", "200", "-hidden", "1", "-lr", "1e-300")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "1 steps in") {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestTrainDiverges trains with a learning rate so large that the loss
// overflows: training stops with one line and exit status 1 instead of
// reporting a NaN loss.
func TestTrainDiverges(t *testing.T) {
	tinyMNIST(t)
	t.Setenv("TESSERA_DEVICE", "cpu")
	code, stdout, stderr := runArgs("train", "-steps", "60", "-batch", "16", "-hidden", "8", "-lr", "1e30")
	if code != 1 {
		t.Errorf("exit status %d, want 1\nstdout:\n%s", code, stdout)
	}
	wantOneLine(t, stderr, "tessera train: training diverged: the loss is ", "at step 50", "smaller -lr than 1e+30")
}

// TestTrainOutOfMemory trains on a GPU whose allocator budget is exactly
// the lower bound that checkSizes accepts: the run passes the checks,
// then runs out of GPU memory inside training, and the typed error is one
// line with exit status 1.
func TestTrainOutOfMemory(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	tinyMNIST(t)
	t.Setenv("TESSERA_DEVICE", dev.String())
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	old := g.Stats().Budget
	defer g.SetBudget(old)
	tensor.EmptyCache()
	const batch, hidden = 16, 8
	budget := int64(trainingBytes(max(batch, 50), hidden))
	g.SetBudget(budget)
	code, stdout, stderr := runArgs("train", "-steps", "3", "-batch", strconv.Itoa(batch), "-hidden", strconv.Itoa(hidden))
	if code != 1 {
		t.Errorf("exit status %d, want 1\nstdout:\n%s", code, stdout)
	}
	t.Logf("budget %d: %s", budget, stderr)
	wantOneLine(t, stderr, "tessera train: ", "GPU out of memory", "TESSERA_GPU_BUDGET")
	// One byte less is refused before training, naming the budget.
	g.SetBudget(budget - 1)
	code, _, stderr = runArgs("train", "-steps", "3", "-batch", strconv.Itoa(batch), "-hidden", strconv.Itoa(hidden))
	if code != 2 {
		t.Errorf("exit status %d with a budget one byte short, want 2", code)
	}
	wantOneLine(t, stderr, "tessera train: -hidden must be between 1 and 7 (what the GPU memory budget of ")
	// A budget below the input of one batch leaves no hidden size.
	g.SetBudget(int64(trainingBytes(200, 0)))
	code, _, stderr = runArgs("train", "-batch", "200")
	if code != 2 {
		t.Errorf("exit status %d with no room for the model, want 2", code)
	}
	wantOneLine(t, stderr, "tessera train: -batch 200 is too large for the device: no -hidden fits (what the GPU memory budget")
}

// TestLimits checks the bounds of -batch and -hidden against the memory
// estimate they come from.
func TestLimits(t *testing.T) {
	gpu := limits{memory: 2 << 30, memoryName: "2 GiB", binding: 128 << 20}
	if n, why := maxBatch(gpu, 60000); n != 42799 || !strings.Contains(why, "storage binding limit") {
		t.Errorf("maxBatch on a 128 MiB binding = %d (%s), want 42799", n, why)
	}
	if n, _ := maxBatch(gpu, 100); n != 100 {
		t.Errorf("maxBatch of 100 images = %d", n)
	}
	for _, l := range []limits{gpu, {memory: 16 << 30, binding: math.Inf(1)}} {
		for _, m := range []int{1, 128, 1000, 40000} {
			n, _ := maxHidden(l, m)
			if n < 1 || trainingBytes(m, n) > l.memory || trainingBytes(m, n+1) <= l.memory && 4*float64(max(m, 784)*(n+1)) <= l.binding {
				t.Errorf("maxHidden(%v, %d) = %d: not the largest size that fits", l, m, n)
			}
		}
	}
	if n, _ := maxHidden(limits{memory: math.Inf(1), binding: math.Inf(1)}, 128); n != math.MaxInt {
		t.Errorf("maxHidden without limits = %d", n)
	}
	if n, _ := maxHidden(limits{memory: 1 << 20, binding: math.Inf(1)}, 1000); n != 0 {
		t.Errorf("maxHidden with 1 MiB for 1000 images = %d, want 0", n)
	}
}
