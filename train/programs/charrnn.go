package programs

import (
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "charrnn",
		Summary:  "Karpathy's min-char-rnn (hidden 100, sequence 25, Adagrad, clip ±5) on bytes of Go's sources or -data FILE",
		Defaults: train.Defaults{Steps: 20000, Batch: 1, LR: 0.1, EvalEvery: 1000},
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := charConfig{}
			fs.StringVar(&c.path, "data", "", "a text file or folder to train on (default: the .go files under $GOROOT/src)")
			fs.IntVar(&c.hidden, "hidden", 100, "hidden units")
			fs.IntVar(&c.seq, "seq", 25, "characters per truncated-BPTT sequence")
			fs.IntVar(&c.sampleEvery, "sample-every", 100, "print a sample every this many steps (0: never)")
			fs.IntVar(&c.sampleLen, "sample-len", 200, "characters per sample")
			return func(r *train.Run) (train.Task, error) { return newCharRNN(r, c) }
		},
	})
}

type charConfig struct {
	path                                string
	hidden, seq, sampleEvery, sampleLen int
}

// charRNN is min-char-rnn: h = tanh(Wxh x + Whh h + bh), y = Why h + by,
// over bytes, trained by truncated backpropagation through time with his
// Adagrad (lr 0.1, eps 1e-8) and gradients clipped to ±5. With -batch B
// it runs B streams of the text side by side (B = 1 is his program).
type charRNN struct {
	c                      charConfig
	r                      *train.Run
	vocab                  []byte
	train, val             []int32
	Wxh, Whh, Why, bh, by  *tensor.Tensor
	params                 []*tensor.Tensor
	opt                    optim.Optimizer
	h                      *tensor.Tensor // [B, H], carried between steps
	gen                    *tensor.Generator
	pos                    *charPos
	bigramTrain, bigramVal float64
}

// charPos is the program's own checkpointed state.
type charPos struct {
	P      int     `json:"p"`      // where the streams read next, relative to their starts
	Smooth float64 `json:"smooth"` // his smooth_loss, per sequence
}

// valChars is the length of the validation stretch: valStreams streams
// of valLen characters from the start of the held-out tenth.
const valStreams, valLen = 100, 200

func newCharRNN(r *train.Run, c charConfig) (*charRNN, error) {
	if c.hidden < 1 || c.seq < 1 || c.sampleEvery < 0 || c.sampleLen < 0 {
		return nil, train.UsageError("-hidden and -seq must be at least 1, -sample-every and -sample-len not negative")
	}
	corpus, err := readSymbolCorpus(c.path)
	if err != nil {
		return nil, err
	}
	trainText, valText := corpus.train, corpus.val
	if len(trainText) < r.Batch*(c.seq+1) || len(valText) < 2 {
		return nil, train.UsageError(fmt.Sprintf("-data: %d bytes are too few for -batch %d of -seq %d and a validation tenth", len(corpus.Bytes), r.Batch, c.seq))
	}
	m := &charRNN{c: c, r: r, pos: &charPos{}, vocab: corpus.vocab}
	m.train, m.val = encodeSymbols[int32](corpus, trainText), encodeSymbols[int32](corpus, valText)
	m.val = m.val[:min(len(m.val), valStreams*valLen+1)]
	V, H := len(m.vocab), c.hidden
	m.bigramTrain, m.bigramVal = bigramLoss(m.train, m.val, V)
	fmt.Fprintf(r.Out, "charrnn: %d bytes in %d files, %d symbols; training on %d, validating on %d\n", len(corpus.Bytes), len(corpus.Files), V, len(m.train), len(m.val))
	fmt.Fprintf(r.Out, "charrnn: a bigram count model fitted to the training text scores %.4f nats/char on it and %.4f on the validation text\n", m.bigramTrain, m.bigramVal)

	m.gen = tensor.NewGenerator(r.Seed)
	opts := []tensor.Option{tensor.On(r.Device), tensor.WithGenerator(m.gen)}
	param := func(t *tensor.Tensor) *tensor.Tensor { return t.SetRequiresGrad(true).Keep() }
	m.Wxh = param(tensor.Normal([]int{H, V}, 0, 0.01, opts...))
	m.Whh = param(tensor.Normal([]int{H, H}, 0, 0.01, opts...))
	m.Why = param(tensor.Normal([]int{V, H}, 0, 0.01, opts...))
	m.bh = param(tensor.Zeros([]int{H}, opts...))
	m.by = param(tensor.Zeros([]int{V}, opts...))
	m.params = []*tensor.Tensor{m.Wxh, m.Whh, m.Why, m.bh, m.by}
	m.opt = optim.NewAdagrad(m.params, optim.LR(r.LR), optim.Eps(1e-8))
	m.h = tensor.Zeros([]int{r.Batch, H}, tensor.On(r.Device)).Keep()
	m.pos.Smooth = -math.Log(1/float64(V)) * float64(c.seq)
	return m, nil
}

// bigramLoss fits P(next | current) by counting pairs in train, with
// add-one smoothing, and returns its mean loss per character (nats) on
// train and on val.
func bigramLoss(train, val []int32, V int) (onTrain, onVal float64) {
	counts := make([]float64, V*V)
	rows := make([]float64, V)
	for i := 0; i+1 < len(train); i++ {
		counts[int(train[i])*V+int(train[i+1])]++
		rows[train[i]]++
	}
	loss := func(s []int32) float64 {
		sum := 0.0
		for i := 0; i+1 < len(s); i++ {
			a, b := int(s[i]), int(s[i+1])
			sum -= math.Log((counts[a*V+b] + 1) / (rows[a] + float64(V)))
		}
		return sum / float64(len(s)-1)
	}
	return loss(train), loss(val)
}

// Module is the parameters as a module, for checkpoints.
func (m *charRNN) Slots() []nn.Slot {
	return []nn.Slot{nn.Param("Wxh", &m.Wxh), nn.Param("Whh", &m.Whh), nn.Param("Why", &m.Why), nn.Param("bh", &m.bh), nn.Param("by", &m.by)}
}

func (m *charRNN) Children() []nn.Child { return nil }

// window returns the inputs and targets of the next sequence of each
// stream, [seq, B] each, stream b reading at b·len/B + p; it wraps the
// streams back to their starts (with a zero state) at the text's end,
// as his loop does.
func (m *charRNN) window() (in, tgt []int32) {
	B, T := m.r.Batch, m.c.seq
	stride := len(m.train) / B
	if m.pos.P+T+1 > stride {
		m.pos.P = 0
		m.h.Release()
		m.h = tensor.Zeros([]int{B, m.c.hidden}, tensor.On(m.r.Device)).Keep()
	}
	in, tgt = make([]int32, T*B), make([]int32, T*B)
	for b := range B {
		s := m.train[b*stride+m.pos.P:]
		for t := range T {
			in[t*B+b], tgt[t*B+b] = s[t], s[t+1]
		}
	}
	return in, tgt
}

func (m *charRNN) Step(n int) float64 {
	B, T := m.r.Batch, m.c.seq
	in, tgt := m.window()
	if m.c.sampleEvery > 0 && m.c.sampleLen > 0 && n%m.c.sampleEvery == 0 {
		fmt.Fprintf(m.r.Out, "\n---- sample at step %d ----\n%s\n----\n", n, m.sample(in[0]))
	}
	var loss float64
	h := tensor.ScopeResult(func() *tensor.Tensor {
		x := nn.Embedding(m.Wxh.T(), tensor.New(in, T, B).To(m.r.Device)) // [T, B, H]: Wxh @ one-hot
		h := m.h
		logits := make([]*tensor.Tensor, T)
		for t := range T {
			h = x.Select(0, t).Add(h.MatMul(m.Whh.T())).Add(m.bh).Tanh()
			logits[t] = h.MatMul(m.Why.T()).Add(m.by)
		}
		l := nn.CrossEntropy(tensor.Cat(logits, 0), tensor.New(tgt, T*B).To(m.r.Device), nn.Reduce(nn.ReduceSum)).DivScalar(float64(B))
		autograd.Backward(l)
		nn.ClipGradValue(m.params, 5)
		m.opt.Step()
		m.opt.ZeroGrad()
		loss = l.Item()
		return h.Detach()
	})
	m.h.Release()
	m.h = h.Keep()
	m.pos.P += T
	m.pos.Smooth = m.pos.Smooth*0.999 + loss*0.001
	return loss / float64(T)
}

// sample draws the model's continuation of symbol seed from stream 0's
// state, as his sample(h, seed_ix, n).
func (m *charRNN) sample(seed int32) string {
	var b strings.Builder
	tensor.NoGrad(func() {
		tensor.Scope(func() {
			h := m.h.Narrow(0, 0, 1) // [1, H]
			ix := int(seed)
			for range m.c.sampleLen {
				h = m.Wxh.Select(1, ix).Add(h.MatMul(m.Whh.T())).Add(m.bh).Tanh()
				p := h.MatMul(m.Why.T()).Add(m.by).Softmax(1).Reshape(-1)
				ix = int(tensor.Multinomial(p, 1, true, tensor.WithGenerator(m.gen)).Item())
				b.WriteByte(m.vocab[ix])
			}
		})
	})
	return strings.ToValidUTF8(b.String(), "?")
}

func (m *charRNN) Evaluate() []train.Metric {
	return []train.Metric{
		{Name: "smoothed loss", Value: m.pos.Smooth / float64(m.c.seq), Unit: "nats/char", WithCurve: true},
		{Name: "validation loss", Value: m.valLoss(), Unit: "nats/char", WithCurve: true},
		{Name: "bigram training loss", Value: m.bigramTrain, Unit: "nats/char", WithCurve: true},
		{Name: "bigram validation loss", Value: m.bigramVal, Unit: "nats/char", WithCurve: true},
	}
}

// valLoss runs the model over the validation text as valStreams streams
// side by side, each from a zero state, and returns the loss per char.
func (m *charRNN) valLoss() float64 {
	S := min(valStreams, (len(m.val)-1)/2)
	L := (len(m.val) - 1) / S
	in, tgt := make([]int32, L*S), make([]int32, L*S)
	for s := range S {
		for t := range L {
			in[t*S+s], tgt[t*S+s] = m.val[s*L+t], m.val[s*L+t+1]
		}
	}
	var sum float64
	tensor.NoGrad(func() {
		tensor.Scope(func() {
			x := nn.Embedding(m.Wxh.T(), tensor.New(in, L, S).To(m.r.Device))
			h := tensor.Zeros([]int{S, m.c.hidden}, tensor.On(m.r.Device))
			logits := make([]*tensor.Tensor, L)
			for t := range L {
				h = x.Select(0, t).Add(h.MatMul(m.Whh.T())).Add(m.bh).Tanh()
				logits[t] = h.MatMul(m.Why.T()).Add(m.by)
			}
			sum = nn.CrossEntropy(tensor.Cat(logits, 0), tensor.New(tgt, L*S).To(m.r.Device), nn.Reduce(nn.ReduceSum)).Item()
		})
	})
	return sum / float64(L*S)
}

func (m *charRNN) State() *train.State {
	return &train.State{Model: m, Optimizer: m.opt, Generators: map[string]*tensor.Generator{"sample": m.gen},
		Tensors: map[string]**tensor.Tensor{"h": &m.h}, Extra: m.pos}
}

func (m *charRNN) Close() {}
