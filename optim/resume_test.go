package optim_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// trainer is a model trained as a GPT is: AdamW with weight decay on
// the weights only (a second parameter group for the biases), a linear
// warm-up, then cosine decay, and gradient clipping.
type trainer struct {
	model *nn.Sequential
	opt   optim.Optimizer
	sched optim.Scheduler
}

func newTrainer(seed uint64) *trainer {
	m := nn.NewMLP([]int{6, 16, 3}, (*tensor.Tensor).Tanh, tensor.WithGenerator(tensor.NewGenerator(seed)))
	var decay, noDecay []*tensor.Tensor
	for name, p := range nn.NamedParameters(m) {
		if strings.HasSuffix(name, "bias") {
			noDecay = append(noDecay, p)
		} else {
			decay = append(decay, p)
		}
	}
	opt := optim.NewAdamW(decay, optim.LR(0.02), optim.WeightDecay(0.1))
	opt.AddParamGroup(noDecay, optim.WeightDecay(0))
	warm := optim.NewLinearLR(opt, 0.1, 1, 3)
	cos := optim.NewCosineAnnealingLR(opt, 9, 1e-4)
	return &trainer{m, opt, optim.NewSequentialLR(opt, []optim.Scheduler{warm, cos}, []int{3})}
}

// steps trains from step from to step to and returns the losses; each
// step's batch depends on the step alone.
func (r *trainer) steps(from, to int) []float64 {
	var losses []float64
	for step := from; step < to; step++ {
		tensor.Scope(func() {
			g := tensor.NewGenerator(uint64(1000 + step))
			x := tensor.Randn([]int{8, 6}, tensor.WithGenerator(g))
			y := tensor.RandInt(0, 3, []int{8}, tensor.WithGenerator(g))
			loss := nn.CrossEntropy(r.model.Forward(x), y)
			autograd.Backward(loss)
			nn.ClipGradNorm(nn.Parameters(r.model), 0.5, 2)
			r.opt.Step()
			r.opt.ZeroGrad()
			r.sched.Step()
			losses = append(losses, loss.Item())
		})
	}
	return losses
}

// save writes the model's state dict, the optimizer's state tensors
// under "optimizer.", and the step, optimizer and schedule state as
// metadata.
func (r *trainer) save(t *testing.T, path string, step int) {
	state := nn.StateDict(r.model)
	tensors, st := r.opt.StateDict()
	for name, v := range tensors {
		state["optimizer."+name] = v
	}
	meta := map[string]string{}
	for key, v := range map[string]any{checkpoint.MetaStep: step, checkpoint.MetaOptimizer: st, checkpoint.MetaSchedule: r.sched.State()} {
		if err := checkpoint.SetMeta(meta, key, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkpoint.Save(path, state, meta); err != nil {
		t.Fatal(err)
	}
}

// load restores what save wrote and returns the step: the model
// strictly, through nn.StateDict; the optimizer and the schedule from
// their states.
func (r *trainer) load(t *testing.T, path string) int {
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	model := &checkpoint.File{Path: f.Path, Tensors: map[string]*tensor.Tensor{}, Meta: f.Meta}
	opt := map[string]*tensor.Tensor{}
	for name, v := range f.Tensors {
		if rest, ok := strings.CutPrefix(name, "optimizer."); ok {
			opt[rest] = v
		} else {
			model.Tensors[name] = v
		}
	}
	if _, err := checkpoint.LoadInto(model, nn.StateDict(r.model), true); err != nil {
		t.Fatal(err)
	}
	var (
		step int
		st   optim.State
		ss   optim.ScheduleState
	)
	for key, v := range map[string]any{checkpoint.MetaStep: &step, checkpoint.MetaOptimizer: &st, checkpoint.MetaSchedule: &ss} {
		if err := f.GetMeta(key, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.opt.LoadStateDict(opt, st); err != nil {
		t.Fatal(err)
	}
	if err := r.sched.LoadState(ss); err != nil {
		t.Fatal(err)
	}
	return step
}

// TestResumeFromCheckpoint trains 12 steps without stopping; then 5
// steps, a checkpoint file, a fresh model (another seed), optimizer and
// schedule loaded from it, and the remaining steps, across the end of
// the warm-up. The losses agree bit for bit on the CPU.
func TestResumeFromCheckpoint(t *testing.T) {
	const total, stop = 12, 5
	want := newTrainer(1).steps(0, total)
	first := newTrainer(1)
	got := first.steps(0, stop)
	path := filepath.Join(t.TempDir(), "run.safetensors")
	first.save(t, path, stop)
	resumed := newTrainer(2)
	step := resumed.load(t, path)
	got = append(got, resumed.steps(step, total)...)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("step %d: loss %v after resuming at %d, %v without stopping\n%v\n%v", i, got[i], stop, want[i], got, want)
		}
	}
	if want[total-1] >= want[0] {
		t.Errorf("the loss did not fall: %v", want)
	}
}
