package programs

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "gpt",
		Summary:  "a character-level GPT (pre-norm causal transformer, AdamW, warm-up and cosine decay) on charrnn's corpus",
		Defaults: train.Defaults{Steps: 2000, Batch: 32, LR: 3e-3, EvalEvery: 250},
		Parallel: true,
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := gptConfig{}
			fs.StringVar(&c.path, "data", "", "a text file or folder to train on (default: the .go files under $GOROOT/src, as charrnn)")
			fs.IntVar(&c.context, "context", 64, "characters the model sees at once")
			fs.IntVar(&c.width, "width", 64, "embedding width (d_model)")
			fs.IntVar(&c.heads, "heads", 4, "attention heads; must divide -width")
			fs.IntVar(&c.layers, "layers", 2, "transformer layers")
			fs.IntVar(&c.warmup, "warmup", 100, "steps of linear learning-rate warm-up before the cosine decay")
			fs.IntVar(&c.sampleEvery, "sample-every", 500, "print a sample every this many steps (0: never)")
			fs.IntVar(&c.sampleLen, "sample-len", 200, "characters per sample")
			fs.BoolVar(&c.ragged, "ragged", false, "train on chunks of lengths spread over -context/4 … -context, packed one after another (no padding)")
			return func(r *train.Run) (train.Task, error) { return newGPT(r, c) }
		},
	})
}

type gptConfig struct {
	path                                  string
	context, width, heads, layers, warmup int
	sampleEvery, sampleLen                int
	ragged                                bool
}

// gptModel is a character-level GPT: token embeddings plus learned
// positions, pre-norm causal transformer layers, a final layer norm and
// a linear head, over (batch, time) symbols. As nanoGPT's bias=False,
// the layers' projections have no biases: the key bias would get no
// gradient (the softmax ignores it) and Adam would move it by rounding
// noise alone.
type gptModel struct {
	Tok    *nn.EmbeddingLayer
	Pos    *tensor.Tensor // [context, width]
	Layers []*nn.TransformerEncoderLayer
	Norm   *nn.LayerNormLayer
	Head   *nn.LinearLayer
}

func (g *gptModel) Slots() []nn.Slot { return []nn.Slot{nn.Param("pos", &g.Pos)} }

func (g *gptModel) Children() []nn.Child {
	cs := []nn.Child{{Name: "tok", Module: g.Tok}}
	for i, l := range g.Layers {
		cs = append(cs, nn.Child{Name: "layer" + strconv.Itoa(i), Module: l})
	}
	return append(cs, nn.Child{Name: "norm", Module: g.Norm}, nn.Child{Name: "head", Module: g.Head})
}

// Forward returns the logits [B, T, V] of the next symbol after each of
// idx's [B, T] (T at most the context).
func (g *gptModel) Forward(idx *tensor.Tensor) *tensor.Tensor {
	T := idx.Shape()[1]
	x := g.Tok.Forward(idx).Add(g.Pos.Narrow(0, 0, T))
	for _, l := range g.Layers {
		x = l.ForwardMasked(x, nn.AttentionMasks{Causal: true})
	}
	return g.Head.Forward(g.Norm.Forward(x))
}

// ForwardPacked returns the logits [N, V] of a ragged batch: idx and
// pos [N] hold the symbols and their positions in their sequences,
// packed one after another, sequence s being rows offsets[s] to
// offsets[s+1]-1. Each sequence attends only within itself (causally),
// with no padding.
func (g *gptModel) ForwardPacked(idx, pos *tensor.Tensor, offsets []int) *tensor.Tensor {
	x := g.Tok.Forward(idx).Add(g.Pos.IndexSelect(0, pos))
	for _, l := range g.Layers {
		x = l.ForwardPacked(x, offsets, true)
	}
	return g.Head.Forward(g.Norm.Forward(x))
}

// gpt trains a gptModel on random windows of the corpus (a shuffled
// loader over disjoint windows), with AdamW, a linear warm-up and a
// cosine decay, and reports the loss per character on the first
// characters of the held-out tenth: the text charrnn validates on.
type gpt struct {
	c      gptConfig
	r      *train.Run
	vocab  []byte
	val    []byte // vocabulary indices, as bytes
	model  *gptModel
	opt    optim.Optimizer
	sched  optim.Scheduler
	loader *data.Loader
	gen    *tensor.Generator
}

func newGPT(r *train.Run, c gptConfig) (*gpt, error) {
	if c.context < 1 || c.width < 1 || c.heads < 1 || c.layers < 1 || c.width%c.heads != 0 || c.warmup < 0 || c.sampleEvery < 0 || c.sampleLen < 0 {
		return nil, train.UsageError("-context, -width, -heads and -layers must be at least 1, -heads must divide -width, -warmup, -sample-every and -sample-len not negative")
	}
	if c.warmup >= r.Steps && r.Steps > 0 {
		return nil, train.UsageError(fmt.Sprintf("-warmup %d must be shorter than the %d steps", c.warmup, r.Steps))
	}
	corpus, err := readSymbolCorpus(c.path)
	if err != nil {
		return nil, err
	}
	trainText, valText := corpus.train, corpus.val
	if len(trainText) < r.World*r.Batch*(c.context+1) || len(valText) < c.context+1 {
		return nil, train.UsageError(fmt.Sprintf("-data: %d bytes are too few for -batch %d of -context %d and a validation tenth", len(corpus.Bytes), r.World*r.Batch, c.context))
	}
	m := &gpt{c: c, r: r, vocab: corpus.vocab}
	encode := func(text []byte) []byte { return encodeSymbols[byte](corpus, text) }
	m.val = encode(valText[:min(len(valText), valStreams*valLen+1)])
	windows, err := data.NewTextWindows(encode(trainText), c.context, c.context)
	if err != nil {
		return nil, err
	}
	loadOn := r.Device
	if c.ragged { // cut into chunks on the host, then uploaded packed
		loadOn = tensor.CPU
	}
	if m.loader, err = data.NewLoader(windows, data.Config{BatchSize: r.Batch, Shuffle: true, Seed: r.Seed, DropLast: true, Device: loadOn, Shard: r.Shard(), Context: r.Context}); err != nil {
		return nil, err
	}
	V := len(m.vocab)
	fmt.Fprintf(r.Out, "gpt: %d bytes in %d files, %d symbols; training on %d, validating on %d\n", len(corpus.Bytes), len(corpus.Files), V, len(trainText), len(m.val))

	m.gen = tensor.NewGenerator(r.Seed)
	on := r.TensorOptions()
	cfg := nn.TransformerConfig{DimFeedforward: 4 * c.width, Activation: "gelu", LayerNormEps: 1e-5, BatchFirst: true, NormFirst: true}
	g := &gptModel{
		Tok:  nn.NewEmbedding(V, c.width, on...),
		Pos:  tensor.Normal([]int{c.context, c.width}, 0, 0.02, on...).SetRequiresGrad(true),
		Norm: nn.NewLayerNorm([]int{c.width}, on...),
		Head: nn.NewLinear(c.width, V, on...),
	}
	for range c.layers {
		g.Layers = append(g.Layers, nn.NewTransformerEncoderLayer(c.width, c.heads, cfg, on...))
	}
	m.model = g
	m.opt = optim.NewAdamW(nn.Parameters(g), optim.LR(r.LR), optim.Betas(0.9, 0.99))
	cos := optim.NewCosineAnnealingLR(m.opt, max(r.Steps-c.warmup, 1), r.LR/10)
	if c.warmup == 0 {
		m.sched = cos
	} else {
		warm := optim.NewLinearLR(m.opt, 0.01, 1, c.warmup)
		m.sched = optim.NewSequentialLR(m.opt, []optim.Scheduler{warm, cos}, []int{c.warmup})
	}
	return m, nil
}

func (m *gpt) Step(n int) float64 {
	if m.c.sampleEvery > 0 && m.c.sampleLen > 0 && n%m.c.sampleEvery == 0 {
		fmt.Fprintf(m.r.Out, "\n---- sample at step %d ----\n%s\n----\n", n, m.sample())
	}
	var loss float64
	m.r.Scope(func() {
		b := train.NextBatch(m.loader)
		var l *tensor.Tensor
		if m.c.ragged {
			l = m.raggedLoss(b.Tensors[0], b.Tensors[1], n)
		} else {
			l = m.loss(b.Tensors[0], b.Tensors[1], nn.ReduceMean)
		}
		m.r.Backward(l)
		m.opt.Step()
		m.opt.ZeroGrad()
		m.sched.Step()
		loss = l.Item()
	})
	return loss
}

// loss returns the cross-entropy of the model's predictions for in
// ([B, T]) against tgt, reduced by how.
func (m *gpt) loss(in, tgt *tensor.Tensor, how nn.Reduction) *tensor.Tensor {
	logits := m.model.Forward(in)
	V := len(m.vocab)
	return nn.CrossEntropy(logits.Reshape(-1, V), tgt.Reshape(-1), nn.Reduce(how))
}

// raggedLoss returns the mean cross-entropy over a ragged batch cut
// from the windows in and tgt ([B, context], on the host): window b
// keeps its first l_b symbols, l_b drawn for step n from the run's seed
// over context/4 … context, and the chunks are packed one after another.
func (m *gpt) raggedLoss(in, tgt *tensor.Tensor, n int) *tensor.Tensor {
	T := m.c.context
	r := rand.New(rand.NewPCG(m.r.Seed, uint64(n)))
	ins, tgts := in.Int32s(), tgt.Int32s()
	var idx, want, pos []int32
	lengths := make([]int, in.Size(0))
	for b := range lengths {
		lo := max(1, T/4)
		lengths[b] = lo + r.IntN(T-lo+1)
		for t := range lengths[b] {
			idx, want, pos = append(idx, ins[b*T+t]), append(want, tgts[b*T+t]), append(pos, int32(t))
		}
	}
	on := m.r.TensorOptions()
	logits := m.model.ForwardPacked(tensor.From(idx, []int{len(idx)}, on...), tensor.From(pos, []int{len(pos)}, on...), tensor.Offsets(lengths...))
	return nn.CrossEntropy(logits, tensor.From(want, []int{len(want)}, on...))
}

// sample draws sampleLen symbols from the model, starting from a
// newline and seeing at most the last context of them.
func (m *gpt) sample() string {
	ctx := []int32{int32(strings.IndexByte(string(m.vocab), '\n'))}
	if ctx[0] < 0 {
		ctx[0] = 0
	}
	var out strings.Builder
	nn.Eval(m.model)
	defer nn.Train(m.model)
	on := m.r.TensorOptions()
	m.r.NoGrad(func() {
		for range m.c.sampleLen {
			m.r.Scope(func() {
				w := ctx[max(0, len(ctx)-m.c.context):]
				logits := m.model.Forward(tensor.From(w, []int{1, len(w)}, on...)).Select(1, len(w)-1).Reshape(-1)
				ix := int32(tensor.Multinomial(logits.Softmax(0), 1, true, tensor.WithGenerator(m.gen)).Item())
				ctx = append(ctx, ix)
				out.WriteByte(m.vocab[ix])
			})
		}
	})
	return strings.ToValidUTF8(out.String(), "?")
}

func (m *gpt) Evaluate() []train.Metric {
	return []train.Metric{{Name: "validation loss", Value: m.valLoss(), Unit: "nats/char", WithCurve: true}}
}

// valLoss returns the loss per character over the validation text, cut
// into disjoint windows of the context, each read from its start.
func (m *gpt) valLoss() float64 {
	T := m.c.context
	n := (len(m.val) - 1) / T
	in, tgt := make([]int32, n*T), make([]int32, n*T)
	for i := range n * T {
		in[i], tgt[i] = int32(m.val[i]), int32(m.val[i+1])
	}
	var sum float64
	nn.Eval(m.model)
	defer nn.Train(m.model)
	on := m.r.TensorOptions()
	m.r.NoGrad(func() {
		const chunk = 64
		for s := 0; s < n; s += chunk {
			k := min(chunk, n-s)
			m.r.Scope(func() {
				x := tensor.From(in[s*T:(s+k)*T], []int{k, T}, on...)
				y := tensor.From(tgt[s*T:(s+k)*T], []int{k, T}, on...)
				sum += m.loss(x, y, nn.ReduceSum).Item()
			})
		}
	})
	return sum / float64(n*T)
}

func (m *gpt) State() *train.State {
	return &train.State{Model: m.model, Optimizer: m.opt, Schedule: m.sched, Loader: m.loader,
		Generators: map[string]*tensor.Generator{"sample": m.gen}}
}

func (m *gpt) Close() { m.loader.Close() }
