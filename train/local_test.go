package train

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// pair is a data-parallel program for the tests of -device lists: a
// linear layer fitted with Adam to a random linear map, 22 examples
// dealt by Run.Shard (a rank's epoch: batches of 3, 3, 3 and 2, as
// batches of 6, 6, 6 and 4 alone). -fail-rank makes that rank's Builder
// fail, and -panic-rank that rank's second step panic with a
// *tensor.Error.
func pair() *Program {
	return &Program{
		Name:     "pair",
		Summary:  "a linear regression, data-parallel",
		Defaults: Defaults{Steps: 6, Batch: 3, LR: 0.05},
		Parallel: true,
		Setup: func(fs *flag.FlagSet) Builder {
			failRank := fs.Int("fail-rank", -1, "the rank whose Builder fails")
			panicRank := fs.Int("panic-rank", -1, "the rank whose second step panics")
			return func(r *Run) (Task, error) {
				if r.Rank == *failRank {
					return nil, errors.New("this rank cannot build its task")
				}
				return newPairTask(r, *panicRank)
			}
		},
	}
}

type pairTask struct {
	r         *Run
	model     *nn.LinearLayer
	opt       optim.Optimizer
	loader    *data.Loader
	panicRank int
}

func newPairTask(r *Run, panicRank int) (*pairTask, error) {
	g := tensor.NewGenerator(5)
	x := tensor.Randn([]int{22, 3}, tensor.WithGenerator(g))
	ds, err := data.FromTensors(x, x.MatMul(tensor.Randn([]int{3, 1}, tensor.WithGenerator(g))))
	if err != nil {
		return nil, err
	}
	l, err := data.NewLoader(ds, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Device: r.Device, Shard: r.Shard(), Context: r.Context})
	if err != nil {
		return nil, err
	}
	t := &pairTask{r: r, loader: l, panicRank: panicRank}
	t.model = nn.NewLinear(3, 1, r.TensorOptions()...)
	t.opt = optim.NewAdam(nn.Parameters(t.model), optim.LR(r.LR))
	return t, nil
}

func (t *pairTask) Step(n int) float64 {
	if n == 1 && t.r.Rank == t.panicRank {
		tensor.Zeros([]int{2}, t.r.TensorOptions()...).MatMul(tensor.Zeros([]int{3}, t.r.TensorOptions()...))
	}
	return t.r.SupervisedStep(t.loader, t.opt, nil, func(b *data.Batch) *tensor.Tensor {
		return nn.MSELoss(t.model.Forward(b.Tensors[0]), b.Tensors[1])
	})
}

func (t *pairTask) Evaluate() []Metric {
	var v float64
	t.r.NoGrad(func() { v = t.model.Weight.Mul(t.model.Weight).Sum().Item() })
	return []Metric{{Name: "weight norm", Value: v}}
}

func (t *pairTask) State() *State {
	return &State{Model: t.model, Optimizer: t.opt, Loader: t.loader}
}

func (t *pairTask) Close() { t.loader.Close() }

// TestParseDevices: -device names one device, or a list of GPUs each
// once or the CPU any number of times; each mistake is one UsageError.
func TestParseDevices(t *testing.T) {
	good := map[string]string{
		"cpu": "cpu", "gpu:1": "gpu:1", "gpu:0,gpu:1": "gpu:0,gpu:1", " gpu:2 , gpu:0 ": "gpu:2,gpu:0",
		"cpu,cpu": "cpu,cpu", "cpu,CPU,cpu": "cpu,cpu,cpu", "gpu,gpu:1": "gpu:0,gpu:1",
	}
	for in, want := range good {
		devs, err := parseDevices(in)
		if err != nil || deviceList(devs) != want {
			t.Errorf("parseDevices(%q) = %v, %v; want %s", in, devs, err, want)
		}
	}
	bad := map[string]string{
		"tpu":             `-device "tpu": want cpu, gpu, gpu:N or default`,
		"gpu:0,tpu":       `-device "gpu:0,tpu": "tpu" is not a device: want a list of devices, one per rank, such as gpu:0,gpu:1`,
		"gpu:0,":          `-device "gpu:0,": "" is not a device`,
		"gpu:0,default":   `-device "gpu:0,default": "default" is not a device`,
		"gpu:01,gpu:1":    `-device "gpu:01,gpu:1": "gpu:01" is not a device`,
		"gpu:1,gpu:1":     `-device "gpu:1,gpu:1": gpu:1 is named twice (as "gpu:1" and "gpu:1"): each GPU serves one rank (TESSERA_LOGICAL_GPUS=2 offers each adapter as two GPUs)`,
		"gpu,gpu:0":       `-device "gpu,gpu:0": gpu:0 is named twice (as "gpu" and "gpu:0")`,
		"gpu:0,cpu":       `-device "gpu:0,cpu" mixes the CPU and GPUs: their optimizer steps round differently, so the ranks would drift apart; list GPUs only, or the CPU only`,
		"cpu,gpu:0,gpu:1": `-device "cpu,gpu:0,gpu:1" mixes the CPU and GPUs`,
	}
	for in, want := range bad {
		_, err := parseDevices(in)
		var u UsageError
		if !errors.As(err, &u) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("parseDevices(%q): %v, want a UsageError starting %q", in, err, want)
		}
	}
}

// TestLocalRanks trains pair on the CPU named twice: one Result of a
// world of 2 on both devices, each line of output once (rank 1 writes
// nothing), the ranks' values equal and within a few roundings of one
// process with their union batch, each rank's Watch on its own
// goroutine, AfterStep on rank 0 alone.
func TestLocalRanks(t *testing.T) {
	var buf strings.Builder
	var watched [2][]float64
	var after []int
	res, err := Main(pair(), []string{"-device", "cpu,cpu"}, Options{Stdout: &buf,
		Watch:     func(rank, _ int, v float64, _ Task) { watched[rank] = append(watched[rank], v) },
		AfterStep: func(step int, _ float64) { after = append(after, step) }})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if res.World != 2 || deviceList(res.Devices) != "cpu,cpu" || res.Steps != 6 || len(after) != 6 {
		t.Errorf("world %d on %v, %d steps, AfterStep %v", res.World, res.Devices, res.Steps, after)
	}
	for _, line := range []string{"tessera train pair: training on cpu,cpu, one rank each", "data-parallel over 2 ranks: -batch 3 each, 6 examples a step",
		"pair: 6 steps on cpu,cpu (6 this run)", "  data-parallel over 2 ranks: 6 examples a step"} {
		if strings.Count(out, line) != 1 {
			t.Errorf("the output has %d lines %q, want 1:\n%s", strings.Count(out, line), line, out)
		}
	}
	alone := mustRun(t, pair(), []string{"-device", "cpu", "-batch", "6"}, Options{})
	for i, want := range alone.Values {
		if watched[0][i] != res.Values[i] || watched[1][i] != res.Values[i] {
			t.Errorf("step %d: the ranks watched %v and %v, the result has %v", i, watched[0][i], watched[1][i], res.Values[i])
		}
		if tol := approx.Float32(16); !tol.Equal(res.Values[i], want) {
			t.Errorf("step %d: the ranks' loss %.17g, one process with batch 6 %.17g", i, res.Values[i], want)
		}
	}
}

// TestLocalRankFails: a rank whose Builder fails ends the run at once
// with its error, naming it; the other rank, waiting for it in ddp.New,
// is aborted rather than left to time out.
func TestLocalRankFails(t *testing.T) {
	start := time.Now()
	_, err := Main(pair(), []string{"-device", "cpu,cpu", "-fail-rank", "1"}, Options{})
	if err == nil || err.Error() != "rank 1 on cpu: this rank cannot build its task" {
		t.Errorf("Main: %v, want rank 1's error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v to end", d)
	}
}

// TestLocalRankPanics: a rank's panic with a *tensor.Error (a bad shape
// at its second step) stops the other rank, then Main raises it on the
// caller's goroutine, as a process of one rank does.
func TestLocalRankPanics(t *testing.T) {
	defer func() {
		e, ok := recover().(*tensor.Error)
		if !ok || !errors.Is(e, tensor.ErrShape) {
			t.Errorf("Main raised %v, want the rank's *tensor.Error of a bad shape", e)
		}
	}()
	Main(pair(), []string{"-device", "cpu,cpu", "-panic-rank", "1"}, Options{})
	t.Error("Main returned")
}

// TestLocalInterruptResumesAlone: two ranks stopped after step 2 (by
// the context, from rank 0's AfterStep) save rank 0's checkpoint, which
// one process with the union batch resumes to the values of an
// uninterrupted run alone.
func TestLocalInterruptResumesAlone(t *testing.T) {
	path := t.TempDir() + "/pair.safetensors"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := Main(pair(), []string{"-device", "cpu,cpu", "-checkpoint", path}, Options{Context: ctx, AfterStep: func(step int, _ float64) {
		if step == 2 {
			cancel()
		}
	}})
	if err != nil || !first.Interrupted || first.Steps != 3 || first.Saved != path {
		t.Fatalf("interrupted run: %v, %+v", err, first)
	}
	rest := mustRun(t, pair(), []string{"-device", "cpu", "-batch", "6", "-resume", path}, Options{})
	whole := mustRun(t, pair(), []string{"-device", "cpu", "-batch", "6"}, Options{})
	got := append(append([]float64{}, first.Values...), rest.Values...)
	if len(got) != len(whole.Values) {
		t.Fatalf("%d values, %d uninterrupted", len(got), len(whole.Values))
	}
	for i, want := range whole.Values {
		if tol := approx.Float32(16); !tol.Equal(got[i], want) {
			t.Errorf("step %d: %.17g interrupted and resumed alone, %.17g uninterrupted", i, got[i], want)
		}
	}
}

// TestLocalUnderMPI: -device lists devices for the ranks of this
// process, which a world of several processes already has: one
// UsageError.
func TestLocalUnderMPI(t *testing.T) {
	g := ddp.NewLocalGroups(2, time.Second)
	_, err := Main(pair(), []string{"-device", "cpu,cpu"}, Options{Group: g[0]})
	var u UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), `-device "cpu,cpu" names 2 devices, one per rank of this process, but mpirun started 2 ranks already`) {
		t.Errorf("Main: %v", err)
	}
}
