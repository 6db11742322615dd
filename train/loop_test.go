package train

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// toy is a program for the loop's tests: a linear layer fitted to a
// random linear map with SGD, momentum and a step schedule, batches from
// a shuffling loader (10 per epoch), dropout from a generator of its
// own, an extra tensor (a running mean of the inputs) and an extra JSON
// value (a counter): every kind of state a checkpoint holds.
func toy(epochal bool) *Program {
	return &Program{
		Name:     "toy",
		Summary:  "a linear regression",
		Defaults: Defaults{Steps: 6, Batch: 5, LR: 0.05, EvalEvery: 2},
		Setup: func(fs *flag.FlagSet) Builder {
			width := fs.Int("width", 3, "inputs")
			return func(r *Run) (Task, error) {
				if *width < 1 {
					return nil, UsageError("-width must be at least 1")
				}
				return newToyTask(r, *width, epochal)
			}
		},
	}
}

type toyTask struct {
	model   *nn.LinearLayer
	opt     optim.Optimizer
	sched   optim.Scheduler
	loader  *data.Loader
	gen     *tensor.Generator
	mean    *tensor.Tensor
	count   *struct{ N int }
	epochal bool
}

func newToyTask(r *Run, width int, epochal bool) (*toyTask, error) {
	g := tensor.NewGenerator(7)
	x := tensor.Randn([]int{50, width}, tensor.WithGenerator(g))
	y := x.MatMul(tensor.Randn([]int{width, 1}, tensor.WithGenerator(g)))
	ds, err := data.FromTensors(x, y)
	if err != nil {
		return nil, err
	}
	l, err := data.NewLoader(ds, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Device: r.Device})
	if err != nil {
		return nil, err
	}
	t := &toyTask{loader: l, gen: tensor.NewGenerator(r.Seed + 1), count: &struct{ N int }{}, epochal: epochal}
	t.model = nn.NewLinear(width, 1, tensor.On(r.Device))
	t.opt = optim.NewSGD(nn.Parameters(t.model), optim.LR(r.LR), optim.Momentum(0.9))
	t.sched = optim.NewStepLR(t.opt, 3, 0.5)
	t.mean = tensor.Zeros([]int{width}, tensor.On(r.Device)).Keep()
	return t, nil
}

func (t *toyTask) Step(int) float64 {
	var loss float64
	tensor.Scope(func() {
		b := NextBatch(t.loader)
		x := nn.Dropout(b.Tensors[0], 0.2, true, t.gen)
		l := nn.MSELoss(t.model.Forward(x), b.Tensors[1])
		autograd.Backward(l)
		t.opt.Step()
		t.opt.ZeroGrad()
		t.sched.Step()
		loss = l.Item()
		tensor.NoGrad(func() {
			m := t.mean.MulScalar(0.5).Add(b.Tensors[0].Mean(0).MulScalar(0.5))
			t.mean.Release()
			t.mean = m.Keep()
		})
	})
	t.count.N++
	return loss + t.mean.Sum().Item()*1e-3 + float64(t.count.N)*1e-6
}

func (t *toyTask) Evaluate() []Metric {
	return []Metric{{Name: "weight norm", Value: t.model.Weight.Mul(t.model.Weight).Sum().Item()}, {Name: "steps", Value: float64(t.count.N), WithCurve: true}}
}

func (t *toyTask) State() *State {
	return &State{Model: t.model, Optimizer: t.opt, Schedule: t.sched, Loader: t.loader,
		Generators: map[string]*tensor.Generator{"dropout": t.gen}, Tensors: map[string]**tensor.Tensor{"mean": &t.mean}, Extra: t.count}
}

func (t *toyTask) Close() { t.loader.Close() }

// toyEpochal adds StepsPerEpoch.
type toyEpochal struct{ *toyTask }

func (t toyEpochal) StepsPerEpoch() int { return t.loader.BatchesPerEpoch() }

func epochalToy() *Program {
	p := toy(true)
	setup := p.Setup
	p.Setup = func(fs *flag.FlagSet) Builder {
		b := setup(fs)
		return func(r *Run) (Task, error) {
			t, err := b(r)
			if err != nil {
				return nil, err
			}
			return toyEpochal{t.(*toyTask)}, nil
		}
	}
	return p
}

func mustRun(t *testing.T, p *Program, args []string, o Options) *Result {
	t.Helper()
	var out bytes.Buffer
	o.Stdout = &out
	res, err := Main(p, append([]string{"-device", "cpu"}, args...), o)
	if err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out.String())
	}
	return res
}

// TestUsageErrors checks each bad flag value: a UsageError of one line
// that names the flag, before any training.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-steps", "0"}, "-steps must be at least 1"},
		{[]string{"-epochs", "-1"}, "-epochs must be at least 1"},
		{[]string{"-steps", "3", "-epochs", "1"}, "-steps and -epochs exclude each other"},
		{[]string{"-epochs", "2"}, "-epochs: toy has no epochs"},
		{[]string{"-batch", "0"}, "-batch must be at least 1"},
		{[]string{"-lr", "0"}, "-lr must be a positive finite number"},
		{[]string{"-lr", "NaN"}, "-lr must be a positive finite number"},
		{[]string{"-lr", "+Inf"}, "-lr must be a positive finite number"},
		{[]string{"-eval-every", "-1"}, "-eval-every must be 0 or more"},
		{[]string{"-checkpoint-every", "-1"}, "-checkpoint-every must be 0 or more"},
		{[]string{"-checkpoint-every", "5"}, "-checkpoint-every needs -checkpoint"},
		{[]string{"-max-time", "-1s"}, "-max-time must not be negative"},
		{[]string{"-device", "tpu"}, `-device "tpu": want cpu, gpu, gpu:N or default`},
		{[]string{"-plot", filepath.Join(dir, "curves.svg")}, "must name a .png file"},
		{[]string{"-plot", filepath.Join(dir, "no", "c.png")}, "does not exist"},
		{[]string{"-checkpoint", filepath.Join(dir, "no", "c.safetensors")}, "does not exist"},
		{[]string{"-resume", filepath.Join(dir, "absent.safetensors")}, "no such checkpoint file"},
		{[]string{"-width", "0"}, "-width must be at least 1"},
		{[]string{"-seed", "-1"}, "invalid value"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := Main(toy(false), c.args, Options{})
		var u UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want a one-line UsageError containing %q", c.args, err, c.want)
		}
	}
	var help bytes.Buffer
	if _, err := Main(toy(false), []string{"-h"}, Options{Stdout: &help}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "-width") {
		t.Errorf("-h: %v\n%s", err, help.String())
	}
}

// TestEpochsAndEvaluation checks that -epochs sets the steps from the
// loader, that evaluation runs every -eval-every steps and after the
// last, and that the summary names the metrics.
func TestEpochsAndEvaluation(t *testing.T) {
	var out bytes.Buffer
	res, err := Main(epochalToy(), []string{"-device", "cpu", "-epochs", "2", "-eval-every", "7"}, Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 20 || len(res.Values) != 20 || res.StepsPerSec <= 0 || res.PeakMemory <= 0 {
		t.Fatalf("%d steps (%d values), %v steps/s, peak %d", res.Steps, len(res.Values), res.StepsPerSec, res.PeakMemory)
	}
	if m, ok := Find(res.Metrics, "steps"); !ok || m.Value != 20 {
		t.Errorf("last evaluation %v, want it after step 20", res.Metrics)
	}
	for _, want := range []string{"toy: 20 steps on cpu", "steps/s, peak memory", "weight norm:", "final training loss:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestResumeIsBitwiseIdentical interrupts the toy program through its
// context after 4 of 9 steps (a checkpoint), resumes it, and compares
// the values with an uninterrupted run bit for bit; resuming a
// checkpoint under another program's name is an error.
func TestResumeIsBitwiseIdentical(t *testing.T) {
	args := []string{"-steps", "9"}
	want := mustRun(t, toy(false), args, Options{}).Values
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := mustRun(t, toy(false), append(args, "-checkpoint", path), Options{Context: ctx, AfterStep: func(step int, _ float64) {
		if step == 3 {
			cancel()
		}
	}})
	rest := mustRun(t, toy(false), append(args, "-resume", path, "-seed", "99"), Options{})
	got := append(first.Values, rest.Values...)
	if len(got) != len(want) || first.Steps != 4 || rest.First != 4 {
		t.Fatalf("%d+%d values, want %d", len(first.Values), len(rest.Values), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("step %d: %v after resuming, %v without stopping", i, got[i], want[i])
		}
	}
	other := toy(false)
	other.Name = "other"
	if _, err := Main(other, []string{"-device", "cpu", "-resume", path}, Options{}); err == nil || !strings.Contains(err.Error(), "is a checkpoint of toy, not of other") {
		t.Errorf("resuming another program's checkpoint: %v", err)
	}
	if _, err := Main(toy(false), []string{"-device", "cpu", "-resume", path, "-steps", "3"}, Options{}); err == nil || !strings.Contains(err.Error(), "past the 3 steps") {
		t.Errorf("resuming past the end: %v", err)
	}
}

// TestCtrlC sends the process SIGINT during training: the loop stops
// after the step, saves the checkpoint and returns without an error.
func TestCtrlC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "int.safetensors")
	var out bytes.Buffer
	// The signal arrives asynchronously: wait until the runtime has passed
	// it on (to this channel and to the loop's), and let the loop's
	// goroutine cancel, so that 50 quick steps do not end first.
	seen := make(chan os.Signal, 1)
	signal.Notify(seen, syscall.SIGINT)
	defer signal.Stop(seen)
	res, err := Main(toy(false), []string{"-device", "cpu", "-steps", "50", "-checkpoint", path}, Options{Stdout: &out, Signals: true,
		AfterStep: func(step int, _ float64) {
			if step == 2 {
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				<-seen
				time.Sleep(50 * time.Millisecond)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Saved != path || res.Steps >= 50 || !strings.Contains(out.String(), "continue with -resume "+path) {
		t.Fatalf("interrupted %v at step %d, saved %q\n%s", res.Interrupted, res.Steps, res.Saved, out.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestPlotAndMaxTime draws the curves of a run and stops one by time.
func TestPlotAndMaxTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	mustRun(t, toy(false), []string{"-plot", path}, Options{})
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s: %v, %d bytes", path, err, len(b))
	}
	res := mustRun(t, toy(false), []string{"-steps", "1000000", "-max-time", "1ns"}, Options{})
	if res.Steps != 0 || res.Interrupted {
		t.Fatalf("-max-time 1ns: %d steps, interrupted %v", res.Steps, res.Interrupted)
	}
}

// TestDiverges stops a run whose loss overflows with an error.
func TestDiverges(t *testing.T) {
	_, err := Main(toy(false), []string{"-device", "cpu", "-lr", "1e30", "-steps", "50"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "training diverged") {
		t.Fatalf("error %v", err)
	}
}
