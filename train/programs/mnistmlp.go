package programs

import (
	"flag"
	"fmt"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "mnist-mlp",
		Summary:  "a ReLU MLP on MNIST with Adam and cosine decay (≥ 98% test accuracy on the CPU)",
		Defaults: train.Defaults{Epochs: 8, Batch: 128, LR: 1e-3, EvalEvery: 469},
		Parallel: true,
		Setup: func(fs *flag.FlagSet) train.Builder {
			hidden := fs.Int("hidden", 512, "units in each hidden layer")
			layers := fs.Int("layers", 2, "hidden layers")
			mnistDir := fs.String("data", "", "folder with the four MNIST .gz files (default: the GoMNIST module's)")
			return func(r *train.Run) (train.Task, error) {
				if *hidden < 1 || *layers < 1 {
					return nil, train.UsageError("-hidden and -layers must be at least 1")
				}
				return newMNISTMLP(r, *hidden, *layers, *mnistDir)
			}
		},
	})
}

// mnistMLP trains nn.NewMLP on MNIST's training set and evaluates on its
// test set.
type mnistMLP struct {
	r      *train.Run
	model  *nn.Sequential
	opt    optim.Optimizer
	sched  optim.Scheduler
	loader *data.Loader
	test   *data.InMemory
}

func newMNISTMLP(r *train.Run, hidden, layers int, dir string) (*mnistMLP, error) {
	trainSet, testSet, err := data.LoadMNIST(dir)
	if err != nil {
		return nil, err
	}
	if n := r.Shard().Len(trainSet.Len()); r.Batch > n {
		if r.World > 1 {
			return nil, train.UsageError(fmt.Sprintf("-batch %d is more than each of %d ranks' share of the training set's %d images, %d", r.Batch, r.World, trainSet.Len(), n))
		}
		return nil, train.UsageError("-batch must be at most the training set's 60000 images")
	}
	loader, err := data.NewLoader(trainSet, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Device: r.Device, Shard: r.Shard(), Context: r.Context})
	if err != nil {
		return nil, err
	}
	sizes := []int{784}
	for range layers {
		sizes = append(sizes, hidden)
	}
	sizes = append(sizes, 10)
	m := &mnistMLP{r: r, loader: loader, test: testSet}
	m.model = nn.NewMLP(sizes, (*tensor.Tensor).ReLU, r.TensorOptions()...)
	m.opt = optim.NewAdam(nn.Parameters(m.model), optim.LR(r.LR))
	total := r.Steps
	if r.Epochs > 0 {
		total = r.Epochs * loader.BatchesPerEpoch()
	}
	m.sched = optim.NewCosineAnnealingLR(m.opt, total, 0)
	return m, nil
}

func (m *mnistMLP) StepsPerEpoch() int { return m.loader.BatchesPerEpoch() }

func (m *mnistMLP) Step(int) float64 {
	return m.r.SupervisedStep(m.loader, m.opt, m.sched, func(b *data.Batch) *tensor.Tensor {
		return nn.CrossEntropy(m.model.Forward(b.Tensors[0]), b.Tensors[1])
	})
}

func (m *mnistMLP) Evaluate() []train.Metric {
	acc, loss := classify(m.model, m.test, m.r)
	return []train.Metric{
		{Name: "test accuracy", Value: acc, Unit: "%"},
		{Name: "test loss", Value: loss, WithCurve: true},
	}
}

func (m *mnistMLP) State() *train.State {
	return &train.State{Model: m.model, Optimizer: m.opt, Schedule: m.sched, Loader: m.loader}
}

func (m *mnistMLP) Close() { m.loader.Close() }

// classify returns the accuracy and mean cross-entropy of model on the
// images and labels of ds, in batches of 1000 on r's device and in its
// context.
func classify(model nn.Layer, ds data.Dataset, r *train.Run) (acc, loss float64) {
	l, err := data.NewLoader(ds, data.Config{BatchSize: 1000, Device: r.Device, Context: r.Context})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	var correct, sum float64
	r.NoGrad(func() {
		for b := range l.Batches() {
			logits := model.Forward(b.Tensors[0])
			correct += logits.ArgMaxDim(1, false).Eq(b.Tensors[1]).Sum().Item()
			sum += nn.CrossEntropy(logits, b.Tensors[1], nn.Reduce(nn.ReduceSum)).Item()
		}
	})
	n := float64(ds.Len())
	return correct / n, sum / n
}
