package programs

import (
	"flag"
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "lstm",
		Summary:  "Karpathy's batched LSTM (fused IFOG weights, bias row, forget bias 3) repeating its input 5 steps later",
		Defaults: train.Defaults{Steps: 1500, Batch: 32, LR: 1e-2, EvalEvery: 100},
		Parallel: true,
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := delayConfig{}
			fs.IntVar(&c.hidden, "hidden", 64, "LSTM hidden units")
			fs.IntVar(&c.symbols, "symbols", 8, "alphabet size (symbol 0 means nothing yet)")
			fs.IntVar(&c.length, "length", 20, "sequence length")
			fs.IntVar(&c.delay, "delay", 5, "how many steps later the input is repeated")
			fs.IntVar(&c.sequences, "sequences", 4000, "training sequences (and a quarter as many held out)")
			fs.BoolVar(&c.ragged, "ragged", false, "sequences of lengths from -length/4 to -length, batched packed (no padding)")
			return func(r *train.Run) (train.Task, error) { return newDelayTask(r, c) }
		},
	})
}

// FusedLSTM is the LSTM of Karpathy's lstm.py: one weight matrix WLSTM
// of shape [1+input+hidden, 4·hidden] whose row 0 is the bias, applied
// to [1, x_t, h_{t-1}], with the gates in the order i, f, o (sigmoid)
// and g (tanh). NewFusedLSTM initialises it as he does: normal scaled by
// 1/√(input+hidden), the bias row zero except the forget gate's, 3.
type FusedLSTM struct {
	WLSTM         *tensor.Tensor
	Input, Hidden int
}

// NewFusedLSTM returns a FusedLSTM with his initialisation, its weights
// made with opts (device, context, generator).
func NewFusedLSTM(input, hidden int, forgetBias float64, opts ...tensor.Option) *FusedLSTM {
	w := tensor.Normal([]int{1 + input + hidden, 4 * hidden}, 0, 1/math.Sqrt(float64(input+hidden)), opts...)
	bias := make([]float32, 4*hidden)
	for j := hidden; j < 2*hidden; j++ {
		bias[j] = float32(forgetBias)
	}
	w.Context().NoGrad(func() { w.Narrow(0, 0, 1).CopyFrom(tensor.From(bias, []int{1, 4 * hidden}, tensor.Like(w))) })
	return &FusedLSTM{WLSTM: w.SetRequiresGrad(true), Input: input, Hidden: hidden}
}

// Forward runs x, [n, b, input], from zero states and returns the hidden
// states, [n, b, hidden].
func (l *FusedLSTM) Forward(x *tensor.Tensor) *tensor.Tensor {
	n, b := x.Shape()[0], x.Shape()[1]
	s := l.zeroStates(b, x)
	hs := make([]*tensor.Tensor, n)
	for t := range n {
		s = l.step(x.Select(0, t), s)
		hs[t] = s[0]
	}
	return tensor.Stack(hs, 0)
}

// ForwardPacked runs the sequences of x, a packed batch of [length,
// input] sequences, from zero states with nn.RunPacked, and returns the
// hidden states in x's layout: no step computes a finished sequence.
func (l *FusedLSTM) ForwardPacked(x *nn.PackedSequence) *nn.PackedSequence {
	out, _ := nn.RunPacked(x, l.zeroStates(len(x.SortedIndices), x.Data), l.step)
	return out
}

// zeroStates returns the zero states [h, c] of b sequences, each [b,
// hidden], on the device and in the context of x.
func (l *FusedLSTM) zeroStates(b int, x *tensor.Tensor) []*tensor.Tensor {
	return []*tensor.Tensor{tensor.Zeros([]int{b, l.Hidden}, tensor.Like(x)), tensor.Zeros([]int{b, l.Hidden}, tensor.Like(x))}
}

// step maps x [b, input] and the states [h, c] to the next states, as
// his lstm.py does: [1, x, h]·WLSTM, then the gates.
func (l *FusedLSTM) step(x *tensor.Tensor, s []*tensor.Tensor) []*tensor.Tensor {
	d, h, c := l.Hidden, s[0], s[1]
	ones := tensor.Ones([]int{x.Size(0), 1}, tensor.Like(x))
	ifog := tensor.Cat([]*tensor.Tensor{ones, x, h}, 1).MatMul(l.WLSTM)
	ifo := ifog.Narrow(1, 0, 3*d).Sigmoid()
	g := ifog.Narrow(1, 3*d, d).Tanh()
	i, f, o := ifo.Narrow(1, 0, d), ifo.Narrow(1, d, d), ifo.Narrow(1, 2*d, d)
	c = i.Mul(g).Add(f.Mul(c))
	return []*tensor.Tensor{o.Mul(c.Tanh()), c}
}

func (l *FusedLSTM) Slots() []nn.Slot     { return []nn.Slot{nn.Param("WLSTM", &l.WLSTM)} }
func (l *FusedLSTM) Children() []nn.Child { return nil }

type delayConfig struct {
	hidden, symbols, length, delay, sequences int
	ragged                                    bool
}

// delayTask trains a FusedLSTM and a linear read-out to output, at each
// step, the symbol seen delay steps before (data.Delay), with Adam.
type delayTask struct {
	c              delayConfig
	r              *train.Run
	lstm           *FusedLSTM
	readout        *nn.LinearLayer
	model          *delayModel
	opt            optim.Optimizer
	loader         *data.Loader
	trainSet, test *data.InMemory
}

// delayModel holds the two layers under the names "lstm" and "readout".
type delayModel struct{ t *delayTask }

func (m *delayModel) Slots() []nn.Slot { return nil }
func (m *delayModel) Children() []nn.Child {
	return []nn.Child{{Name: "lstm", Module: m.t.lstm}, {Name: "readout", Module: m.t.readout}}
}

func newDelayTask(r *train.Run, c delayConfig) (*delayTask, error) {
	if c.hidden < 1 || c.symbols < 2 || c.length < 1 || c.delay < 0 || c.delay >= c.length || c.sequences < 4 {
		return nil, train.UsageError("want -hidden ≥ 1, -symbols ≥ 2, 0 ≤ -delay < -length, -sequences ≥ 4")
	}
	trainSet, err := c.dataset(c.sequences, r.Seed)
	if err != nil {
		return nil, err
	}
	test, err := c.dataset(c.sequences/4, r.Seed+1<<32)
	if err != nil {
		return nil, err
	}
	if n := r.Shard().Len(c.sequences); r.Batch > n {
		if r.World > 1 {
			return nil, train.UsageError(fmt.Sprintf("-batch %d is more than each of %d ranks' share of the %d -sequences, %d", r.Batch, r.World, c.sequences, n))
		}
		return nil, train.UsageError("-batch must be at most -sequences")
	}
	loader, err := data.NewLoader(trainSet, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, Device: r.Device, DropLast: true, Shard: r.Shard(), Context: r.Context})
	if err != nil {
		return nil, err
	}
	g := tensor.NewGenerator(r.Seed)
	opts := append(r.TensorOptions(), tensor.WithGenerator(g))
	t := &delayTask{c: c, r: r, loader: loader, trainSet: trainSet, test: test}
	t.lstm = NewFusedLSTM(c.symbols, c.hidden, 3, opts...)
	t.readout = nn.NewLinear(c.hidden, c.symbols, opts...)
	t.model = &delayModel{t}
	t.opt = optim.NewAdam(nn.Parameters(t.model), optim.LR(r.LR))
	return t, nil
}

// dataset returns n delay-task sequences: of -length steps, or with
// -ragged of lengths spread over -length/4 … -length.
func (c delayConfig) dataset(n int, seed uint64) (*data.InMemory, error) {
	if c.ragged {
		return data.RaggedDelay(n, max(1, c.length/4), c.length, c.symbols, c.delay, seed)
	}
	return data.Delay(n, c.length, c.symbols, c.delay, seed)
}

func (t *delayTask) StepsPerEpoch() int { return t.loader.BatchesPerEpoch() }

// logits returns the read-out of a batch, [rows, symbols], its targets,
// [rows], and the first row of a step ≥ delay (the rows from there on
// need memory). Rows are time-major: [n·b] for a batch of b sequences
// of n steps, or the packed rows of a ragged batch, whose lengths are
// read from set, the batch's dataset, on the host (the batch's copy of
// them may be on the GPU, and reading it back would sync every step).
func (t *delayTask) logits(set *data.InMemory, b *data.Batch) (logits, targets *tensor.Tensor, late int) {
	seqs, want := b.Tensors[0].T(), b.Tensors[1].T() // [n, b]
	if !t.c.ragged {
		x := tensor.OneHot(seqs, t.c.symbols).To(t.r.Device).Float() // [n, b, symbols]
		h := t.lstm.Forward(x)
		return t.readout.Forward(h.Reshape(-1, t.c.hidden)), want.Reshape(-1), t.c.delay * seqs.Size(1)
	}
	host := make([]int32, len(b.Indices))
	set.Gather(2, b.Indices, host)
	lengths := make([]int, len(host))
	for i, n := range host {
		lengths[i] = int(n)
	}
	p := nn.PackPadded(seqs, lengths, false)
	h := t.lstm.ForwardPacked(p.WithData(tensor.OneHot(p.Data, t.c.symbols).Float()))
	for _, n := range p.BatchSizes[:min(t.c.delay, len(p.BatchSizes))] {
		late += n
	}
	return t.readout.Forward(h.Data), nn.PackPadded(want, lengths, false).Data, late
}

func (t *delayTask) Step(int) float64 {
	return t.r.SupervisedStep(t.loader, t.opt, nil, func(b *data.Batch) *tensor.Tensor {
		logits, targets, _ := t.logits(t.trainSet, b)
		return nn.CrossEntropy(logits, targets)
	})
}

// Evaluate returns the per-symbol accuracy on held-out sequences over the
// steps from delay on (those that need memory; before them the target
// is always 0), and the loss over all steps.
func (t *delayTask) Evaluate() []train.Metric {
	l, err := data.NewLoader(t.test, data.Config{BatchSize: 250, Device: t.r.Device, Context: t.r.Context})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	var correct, count, sum, rows float64
	t.r.NoGrad(func() {
		for b := range l.Batches() {
			logits, want, late := t.logits(t.test, b)
			sum += nn.CrossEntropy(logits, want, nn.Reduce(nn.ReduceSum)).Item()
			rows += float64(want.Size(0))
			n := want.Size(0) - late
			got := logits.ArgMaxDim(1, false).Narrow(0, late, n)
			correct += got.Eq(want.Narrow(0, late, n)).Sum().Item()
			count += float64(n)
		}
	})
	return []train.Metric{
		{Name: "held-out accuracy", Value: correct / count, Unit: "%"},
		{Name: "held-out loss", Value: sum / rows, WithCurve: true},
	}
}

func (t *delayTask) State() *train.State {
	return &train.State{Model: t.model, Optimizer: t.opt, Loader: t.loader}
}

func (t *delayTask) Close() { t.loader.Close() }
