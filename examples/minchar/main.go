// Command minchar trains Karpathy's min-char-rnn — a character-level
// vanilla RNN, truncated backpropagation through time, Adagrad — on an
// embedded public-domain paragraph (the opening of Dickens's A Tale of
// Two Cities, 1859), printing the smoothed loss and a sample every -print
// steps. It trains on tensor.DefaultDevice() (TESSERA_DEVICE selects).
//
//	go run ./examples/minchar -steps 2000
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

//go:embed input.txt
var text string

// config holds the hyper-parameters (his: hidden 100, seq_length 25,
// learning_rate 1e-1).
type config struct {
	steps, hidden, seqLen, every, sample int
	lr                                   float64
	seed                                 uint64
}

func main() {
	var c config
	flag.IntVar(&c.steps, "steps", 2000, "training steps (one sequence each)")
	flag.IntVar(&c.hidden, "hidden", 100, "hidden units")
	flag.IntVar(&c.seqLen, "seq", 25, "characters per truncated-BPTT sequence")
	flag.IntVar(&c.every, "print", 100, "report every this many steps")
	flag.IntVar(&c.sample, "sample", 200, "characters to sample at each report (0: none)")
	flag.Float64Var(&c.lr, "lr", 0.1, "Adagrad learning rate")
	flag.Uint64Var(&c.seed, "seed", 1, "random seed")
	flag.Parse()
	dev, info, err := tensor.DefaultDevice()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info)
	train(c, dev, os.Stdout)
}

// train runs c.steps steps and returns the loss of each step.
func train(c config, dev tensor.Device, out io.Writer) []float64 {
	chars := []rune(text)
	vocab := slices.Compact(slices.Sorted(slices.Values(chars))) // sorted: reproducible, unlike set()
	index := map[rune]int{}
	for i, ch := range vocab {
		index[ch] = i
	}
	data := make([]int, len(chars))
	for i, ch := range chars {
		data[i] = index[ch]
	}
	V, H := len(vocab), c.hidden
	fmt.Fprintf(out, "data has %d characters, %d unique\n", len(data), V)

	g := tensor.NewGenerator(c.seed)
	opts := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	param := func(t *tensor.Tensor) *tensor.Tensor { return t.SetRequiresGrad(true) }
	Wxh := param(tensor.Normal([]int{H, V}, 0, 0.01, opts...)) // input to hidden
	Whh := param(tensor.Normal([]int{H, H}, 0, 0.01, opts...)) // hidden to hidden
	Why := param(tensor.Normal([]int{V, H}, 0, 0.01, opts...)) // hidden to output
	bh := param(tensor.Zeros([]int{H}, opts...))
	by := param(tensor.Zeros([]int{V}, opts...))
	params := []*tensor.Tensor{Wxh, Whh, Why, bh, by}
	opt := optim.NewAdagrad(params, optim.LR(c.lr), optim.Eps(1e-8))
	indices := func(ix []int) *tensor.Tensor { return tensor.FromInts(ix).To(dev) }

	var losses []float64
	smooth := -math.Log(1/float64(V)) * float64(c.seqLen)
	var hprev *tensor.Tensor
	p := 0
	for n := 0; n < c.steps; n++ {
		if n == 0 || p+c.seqLen+1 >= len(data) {
			hprev, p = tensor.Zeros([]int{H}, opts...), 0 // reset the memory, go from the start
		}
		inputs, targets := data[p:p+c.seqLen], data[p+1:p+c.seqLen+1]
		if c.every > 0 && n%c.every == 0 && c.sample > 0 {
			fmt.Fprintf(out, "----\n%s\n----\n", sample(hprev, inputs[0], c.sample, vocab, Wxh, Whh, Why, bh, by, g))
		}
		var loss float64
		hprev = tensor.ScopeResult(func() *tensor.Tensor {
			x := nn.Embedding(Wxh.T(), indices(inputs)) // row t = Wxh @ one-hot(inputs[t])
			h := hprev
			logits := make([]*tensor.Tensor, len(inputs))
			for t := range inputs {
				h = x.Select(0, t).Add(Whh.MatMul(h)).Add(bh).Tanh()
				logits[t] = Why.MatMul(h).Add(by)
			}
			l := nn.CrossEntropy(tensor.Stack(logits, 0), indices(targets), nn.Reduce(nn.ReduceSum))
			autograd.Backward(l)
			nn.ClipGradValue(params, 5) // mitigate exploding gradients
			opt.Step()
			opt.ZeroGrad()
			loss = l.Item()
			return h.Detach() // truncated BPTT: carry the state, not the graph
		})
		losses = append(losses, loss)
		smooth = smooth*0.999 + loss*0.001
		if c.every > 0 && n%c.every == 0 {
			fmt.Fprintf(out, "iter %d, loss: %f\n", n, smooth)
		}
		p += c.seqLen
	}
	return losses
}

// sample draws n characters from the model, starting from hidden state h
// and character seed, as his sample(h, seed_ix, n).
func sample(h *tensor.Tensor, seed, n int, vocab []rune, Wxh, Whh, Why, bh, by *tensor.Tensor, g *tensor.Generator) string {
	var b strings.Builder
	tensor.NoGrad(func() {
		tensor.Scope(func() {
			ix := seed
			for i := 0; i < n; i++ {
				x := Wxh.Select(1, ix)
				h = x.Add(Whh.MatMul(h)).Add(bh).Tanh()
				p := Why.MatMul(h).Add(by).Softmax(0)
				ix = int(tensor.Multinomial(p, 1, true, tensor.WithGenerator(g)).Item())
				b.WriteRune(vocab[ix])
			}
		})
	})
	return b.String()
}
