package checkpoint

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// sgdHyper is the optimizer state the resume test keeps: SGD without
// momentum has no per-parameter state.
type sgdHyper struct{ LR float64 }

// toyLoader returns a shuffling loader over 37 examples of 5 features
// and a class out of 3, in batches of 8 (5 per epoch, the last short).
func toyLoader(t *testing.T, seed uint64) *data.Loader {
	g := tensor.NewGenerator(11)
	x := tensor.Randn([]int{37, 5}, tensor.WithGenerator(g)).Float32s()
	y := tensor.RandInt(0, 3, []int{37}, tensor.WithGenerator(g)).Int32s()
	ds, err := data.NewInMemory(data.Col(x, 37, 5), data.Col(y, 37))
	if err != nil {
		t.Fatal(err)
	}
	l, err := data.NewLoader(ds, data.Config{BatchSize: 8, Shuffle: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// trainSteps runs steps of SGD on m from l and returns the losses.
func trainSteps(m *nn.Sequential, opt optim.Optimizer, l *data.Loader, steps int) []float64 {
	var losses []float64
	for range steps {
		tensor.Scope(func() {
			b, ok := l.Next()
			if !ok { // the end of an epoch
				b, _ = l.Next()
			}
			loss := nn.CrossEntropy(m.Forward(b.Tensors[0]), b.Tensors[1])
			autograd.Backward(loss)
			opt.Step()
			opt.ZeroGrad()
			losses = append(losses, loss.Item())
		})
	}
	return losses
}

// TestResumeIsBitwiseIdentical trains 8 steps without stopping, then 3
// steps, a checkpoint of the weights, step, loader position and
// hyper-parameters, a fresh model, optimizer and loader (other seeds)
// restored from it, and 5 more steps; the losses must agree bit for bit.
// It crosses an epoch after the checkpoint, so the restored shuffle
// order is checked too.
func TestResumeIsBitwiseIdentical(t *testing.T) {
	const lr = 0.3
	m := newMLP(1, tensor.CPU)
	l := toyLoader(t, 5)
	defer l.Close()
	want := trainSteps(m, optim.NewSGD(nn.Parameters(m), optim.LR(lr)), l, 8)

	m = newMLP(1, tensor.CPU)
	l2 := toyLoader(t, 5)
	defer l2.Close()
	got := trainSteps(m, optim.NewSGD(nn.Parameters(m), optim.LR(lr)), l2, 3)
	meta := map[string]string{}
	for k, v := range map[string]any{MetaStep: 3, MetaLoader: LoaderState(l2.State()), MetaOptimizer: sgdHyper{lr}} {
		if err := SetMeta(meta, k, v); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := Save(p, nn.StateDict(m), meta); err != nil {
		t.Fatal(err)
	}

	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var (
		step   int
		st     LoaderState
		hyper  sgdHyper
		resume = newMLP(2, tensor.CPU)
		l3     = toyLoader(t, 99)
	)
	defer l3.Close()
	for k, v := range map[string]any{MetaStep: &step, MetaLoader: &st, MetaOptimizer: &hyper} {
		if err := f.GetMeta(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadInto(f, nn.StateDict(resume), true); err != nil {
		t.Fatal(err)
	}
	if err := l3.Restore(data.State(st)); err != nil {
		t.Fatal(err)
	}
	got = append(got, trainSteps(resume, optim.NewSGD(nn.Parameters(resume), optim.LR(hyper.LR)), l3, 8-step)...)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("step %d: loss %v after resuming, %v without stopping (all: %v vs %v)", i, got[i], want[i], got, want)
		}
	}
}
