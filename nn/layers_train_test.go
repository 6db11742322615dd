package nn_test

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// tinyGPT is a character model of the shape the gpt program trains:
// token and learned position embeddings, a causal pre-norm encoder with
// a final norm, and a linear head.
type tinyGPT struct {
	Tok, Pos *nn.EmbeddingLayer
	Body     *nn.TransformerEncoder
	Head     *nn.LinearLayer
}

func (g *tinyGPT) Slots() []nn.Slot { return nil }
func (g *tinyGPT) Children() []nn.Child {
	return []nn.Child{{Name: "tok", Module: g.Tok}, {Name: "pos", Module: g.Pos}, {Name: "body", Module: g.Body}, {Name: "head", Module: g.Head}}
}

// forward maps tokens (batch, seq) to logits (batch, seq, vocab).
func (g *tinyGPT) forward(tokens *tensor.Tensor) *tensor.Tensor {
	seq := tokens.Size(1)
	pos := tensor.Arange(0, float64(seq), 1, tensor.Of(tensor.Int32), tensor.On(tokens.Device()))
	x := g.Tok.Forward(tokens).Add(g.Pos.Forward(pos))
	return g.Head.Forward(g.Body.ForwardMasked(x, nn.AttentionMasks{Causal: true}))
}

const vocab, seq, batch, width = 5, 10, 4, 16

// newTinyGPT returns a tinyGPT of layers blocks drawn from seed.
func newTinyGPT(seed uint64, layers int) *tinyGPT {
	gen := tensor.WithGenerator(tensor.NewGenerator(seed))
	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout, cfg.NormFirst, cfg.BatchFirst, cfg.Activation = 32, 0, true, true, "gelu"
	return &tinyGPT{
		Tok:  nn.NewEmbedding(vocab, width, gen),
		Pos:  nn.NewEmbedding(seq, width, gen),
		Body: nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(width, 2, cfg, gen), layers, nn.NewLayerNorm([]int{width})),
		Head: nn.NewLinear(width, vocab, gen),
	}
}

// cycleBatch returns sequences of the cycle 0,1,2,3,4 from different
// offsets, (batch, seq), and their next tokens, (batch·seq): the current
// token plus 1 mod 5.
func cycleBatch() (x, y *tensor.Tensor) {
	var in, out []int32
	for b := range batch {
		for s := range seq {
			in = append(in, int32((b+s)%vocab))
			out = append(out, int32((b+s+1)%vocab))
		}
	}
	return tensor.New(in, batch, seq), tensor.New(out, batch*seq)
}

// trainTinyGPT returns the losses of steps Adam steps of g on dev.
func trainTinyGPT(g *tinyGPT, dev tensor.Device, steps int) []float64 {
	nn.To(g, dev)
	x, y := cycleBatch()
	x, y = x.To(dev), y.To(dev)
	opt := optim.NewAdam(nn.Parameters(g), optim.LR(1e-2))
	var losses []float64
	for range steps {
		tensor.Scope(func() {
			loss := nn.CrossEntropy(g.forward(x).Reshape(batch*seq, vocab), y)
			autograd.Backward(loss)
			opt.Step()
			opt.ZeroGrad()
			losses = append(losses, loss.Item())
		})
	}
	return losses
}

// TestTinyGPTLearns: the attention stack composes with embeddings, a
// loss and an optimizer into a model that learns a periodic sequence's
// next token (only the causal context determines it past the first
// steps).
func TestTinyGPTLearns(t *testing.T) {
	losses := trainTinyGPT(newTinyGPT(1, 2), tensor.CPU, 40)
	first, last := losses[0], losses[len(losses)-1]
	if !(last < first/10) {
		t.Errorf("cross-entropy %.4f after 40 steps from %.4f: not learning", last, first)
	}
	t.Logf("cross-entropy %.4f → %.4f in 40 steps", first, last)
}

// TestTinyGPTGPU: the first training steps on the GPU give the CPU's
// losses to 1e-3 relative, as the training programs must.
func TestTinyGPTGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	cpu, g := trainTinyGPT(newTinyGPT(5, 1), tensor.CPU, 3), trainTinyGPT(newTinyGPT(5, 1), gpu, 3)
	for i := range cpu {
		if math.Abs(g[i]-cpu[i]) > 1e-3*math.Abs(cpu[i]) {
			t.Errorf("step %d: loss %.6f on the GPU, %.6f on the CPU", i, g[i], cpu[i])
		}
	}
	t.Logf("losses cpu %.6f, gpu %.6f", cpu, g)
}

// TestBatchNormCheckpoint: a model with batch norm trains, saves its
// state dict (running statistics and the batch counter included) and
// loads strictly into a fresh model that evaluates identically.
func TestBatchNormCheckpoint(t *testing.T) {
	build := func(seed uint64) *nn.Sequential {
		gen := tensor.WithGenerator(tensor.NewGenerator(seed))
		return nn.NewSequential(nn.NewLinear(4, 8, gen), nn.NewBatchNorm1d(8), nn.ReLU{}, nn.NewLinear(8, 2, gen))
	}
	m := build(1)
	x := tensor.Randn([]int{16, 4}, tensor.WithGenerator(tensor.NewGenerator(2)))
	y := tensor.Randn([]int{16, 2}, tensor.WithGenerator(tensor.NewGenerator(3)))
	opt := optim.NewSGD(nn.Parameters(m), optim.LR(0.1))
	for range 5 {
		tensor.Scope(func() {
			autograd.Backward(nn.MSELoss(m.Forward(x), y))
			opt.Step()
			opt.ZeroGrad()
		})
	}
	path := filepath.Join(t.TempDir(), "bn.safetensors")
	if err := checkpoint.Save(path, nn.StateDict(m), nil); err != nil {
		t.Fatal(err)
	}
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := build(9)
	if _, err := checkpoint.LoadInto(f, nn.StateDict(fresh), true); err != nil {
		t.Fatal(err)
	}
	if n := fresh.Layers[1].(*nn.BatchNormLayer).NumBatchesTracked.Item(); n != 5 {
		t.Errorf("num_batches_tracked %v after loading, want 5", n)
	}
	nn.Eval(m)
	nn.Eval(fresh)
	if a, b := m.Forward(x).Float32s(), fresh.Forward(x).Float32s(); !slices.Equal(a, b) {
		t.Errorf("the loaded model evaluates differently:\n%v\n%v", a, b)
	}
}
