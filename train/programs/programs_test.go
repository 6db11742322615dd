package programs

import (
	"context"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

// small gives each program's arguments for a run of a few seconds: tiny
// models, tiny data, a few steps.
func small(t *testing.T, name string) []string {
	dir := t.TempDir()
	switch name {
	case "mnist-mlp":
		return []string{"-data", tinyMNIST(t), "-hidden", "9", "-layers", "1", "-batch", "16", "-steps", "4"}
	case "charrnn":
		_, file, _, _ := runtime.Caller(0)
		text := filepath.Join(filepath.Dir(file), "..", "..", "examples", "minchar", "input.txt")
		return []string{"-data", text, "-hidden", "7", "-seq", "5", "-sample-every", "2", "-sample-len", "5", "-steps", "4"}
	case "lstm":
		return []string{"-hidden", "7", "-sequences", "40", "-batch", "8", "-length", "9", "-delay", "2", "-steps", "4"}
	case "pong":
		return []string{"-hidden", "7", "-batch", "2", "-max-frames", "90", "-steps", "3"}
	case "mnist-cnn":
		return []string{"-data", tinyMNIST(t), "-width", "3", "-batch", "16", "-steps", "4"}
	case "gpt":
		_, file, _, _ := runtime.Caller(0)
		text := filepath.Join(filepath.Dir(file), "..", "..", "examples", "minchar", "input.txt")
		return []string{"-data", text, "-context", "9", "-width", "8", "-heads", "2", "-layers", "1", "-warmup", "2", "-batch", "4", "-sample-every", "3", "-sample-len", "3", "-steps", "4"}
	case "timeseries":
		return []string{"-csv", filepath.Join(dir, "ramp.csv"), "-hidden", "7", "-window", "5", "-batch", "16", "-steps", "4"}
	}
	t.Fatalf("no small arguments for program %q", name)
	return nil
}

// tinyMNIST writes 200 training and 50 test images in MNIST's format (a
// stripe whose height is the label) and returns their folder.
func tinyMNIST(t *testing.T) string {
	dir := t.TempDir()
	if err := mnist.WriteDir(dir, mnist.Stripes(200), mnist.Stripes(50)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runProgram runs p with args on dev and fails the test on an error.
func runProgram(t testing.TB, p *train.Program, dev tensor.Device, args []string, o train.Options) *train.Result {
	t.Helper()
	args = append([]string{"-device", dev.String()}, args...)
	var out strings.Builder
	o.Stdout = &out
	res, err := train.Main(p, args, o)
	if err != nil {
		t.Fatalf("%s %q: %v\noutput:\n%s", p.Name, args, err, out.String())
	}
	return res
}

// TestProgramsListed checks that every program the package doc names is
// registered.
func TestProgramsListed(t *testing.T) {
	var names []string
	for _, p := range train.Programs() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "charrnn gpt lstm mnist-cnn mnist-mlp pong timeseries" {
		t.Fatalf("programs %q", got)
	}
}

// TestProgramsCPUvsGPU runs each program's first steps on the CPU twice
// (the same seed must give the same values bit for bit) and on the GPU,
// whose training values and final weights must agree with the CPU's
// within 1e-3 relative. Variants run a program again with a flag that
// changes its computation (lstm -ragged and gpt -ragged: packed batches).
func TestProgramsCPUvsGPU(t *testing.T) {
	gpu, haveGPU := devtest.GPU(t)
	type run struct {
		name  string
		p     *train.Program
		extra []string
	}
	var runs []run
	for _, p := range train.Programs() {
		runs = append(runs, run{p.Name, p, nil})
		switch p.Name {
		case "lstm":
			runs = append(runs, run{"lstm-ragged", p, []string{"-ragged"}})
		case "gpt":
			runs = append(runs, run{"gpt-ragged", p, []string{"-ragged"}})
		}
	}
	for _, r := range runs {
		p := r.p
		t.Run(r.name, func(t *testing.T) {
			args := append(small(t, p.Name), r.extra...)
			dir := t.TempDir()
			ckpt := func(name string) []string {
				return append(append([]string{}, args...), "-checkpoint", filepath.Join(dir, name))
			}
			start := time.Now()
			cpu := runProgram(t, p, tensor.CPU, ckpt("cpu.safetensors"), train.Options{})
			t.Logf("cpu: %d steps in %v, values %v", len(cpu.Values), time.Since(start).Round(time.Millisecond), cpu.Values)
			again := runProgram(t, p, tensor.CPU, args, train.Options{})
			for i := range cpu.Values {
				if math.Float64bits(again.Values[i]) != math.Float64bits(cpu.Values[i]) {
					t.Fatalf("step %d: %v, then %v with the same seed", i, cpu.Values[i], again.Values[i])
				}
			}
			if !haveGPU {
				return
			}
			start = time.Now()
			g := runProgram(t, p, gpu, ckpt("gpu.safetensors"), train.Options{})
			t.Logf("gpu: %d steps in %v (%.2f steps/s), values %v", len(g.Values), time.Since(start).Round(time.Millisecond), g.StepsPerSec, g.Values)
			for i := range cpu.Values {
				if d := math.Abs(g.Values[i] - cpu.Values[i]); d > 1e-3*math.Max(math.Abs(cpu.Values[i]), 1e-3) {
					t.Errorf("step %d: %v on the GPU, %v on the CPU", i, g.Values[i], cpu.Values[i])
				}
			}
			compareWeights(t, filepath.Join(dir, "cpu.safetensors"), filepath.Join(dir, "gpu.safetensors"))
		})
	}
}

// compareWeights compares the model tensors of two checkpoints within
// 1e-3 of the largest magnitude of each.
func compareWeights(t *testing.T, a, b string) {
	t.Helper()
	fa, err := checkpoint.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := checkpoint.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := fa.Sub("model."), fb.Sub("model.")
	if len(ma.Tensors) == 0 || len(ma.Tensors) != len(mb.Tensors) {
		t.Fatalf("%d model tensors on the CPU, %d on the GPU", len(ma.Tensors), len(mb.Tensors))
	}
	for name, x := range ma.Tensors {
		y := mb.Tensors[name]
		xs, ys := x.Float64s(), y.Float64s()
		scale, worst := 0.0, 0.0
		for i := range xs {
			scale = math.Max(scale, math.Abs(xs[i]))
			worst = math.Max(worst, math.Abs(xs[i]-ys[i]))
		}
		if worst > 1e-3*math.Max(scale, 1e-6) {
			t.Errorf("weights %s differ by %g (largest magnitude %g)", name, worst, scale)
		}
	}
}

// TestProgramsResume interrupts each program after its second step (as
// Ctrl-C does, through the context), which saves a checkpoint, then
// resumes from it: the values must be those of an uninterrupted run bit
// for bit.
func TestProgramsResume(t *testing.T) {
	for _, p := range train.Programs() {
		t.Run(p.Name, func(t *testing.T) {
			args := small(t, p.Name)
			want := runProgram(t, p, tensor.CPU, args, train.Options{})
			path := filepath.Join(t.TempDir(), "stop.safetensors")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := func(step int, _ float64) {
				if step == 1 {
					cancel()
				}
			}
			first := runProgram(t, p, tensor.CPU, append(append([]string{}, args...), "-checkpoint", path), train.Options{Context: ctx, AfterStep: stop})
			if !first.Interrupted || first.Saved != path || first.Steps != 2 {
				t.Fatalf("interrupted %v after %d steps, saved %q", first.Interrupted, first.Steps, first.Saved)
			}
			rest := runProgram(t, p, tensor.CPU, append(append([]string{}, args...), "-resume", path), train.Options{})
			if rest.First != 2 {
				t.Fatalf("resumed at step %d, want 2", rest.First)
			}
			got := append(append([]float64{}, first.Values...), rest.Values...)
			if len(got) != len(want.Values) {
				t.Fatalf("%d values after resuming, %d without stopping", len(got), len(want.Values))
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want.Values[i]) {
					t.Fatalf("step %d: %v after resuming, %v without stopping (%v vs %v)", i, got[i], want.Values[i], got, want.Values)
				}
			}
		})
	}
}
