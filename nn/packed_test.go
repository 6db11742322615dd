package nn_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// seqs returns sequences of the given lengths, (n, features), whose
// entries name their sequence and step: 100·b + t + f/10.
func seqs(features int, lengths ...int) []*T {
	out := make([]*T, len(lengths))
	for b, n := range lengths {
		v := make([]float64, n*features)
		for i := range v {
			v[i] = float64(100*b+i/features) + float64(i%features)/10
		}
		out[b] = tensor.New(v, n, features)
	}
	return out
}

// The layout is PyTorch's: batch sizes, sorting (ties in batch order),
// and time-major rows; Unpack, Pad and PackPadded invert each other.
func TestPackedSequenceLayout(t *testing.T) {
	xs := seqs(2, 2, 4, 3, 4)
	p := nn.PackSequence(xs)
	if want := []int{4, 4, 3, 2}; !slices.Equal(p.BatchSizes, want) {
		t.Errorf("BatchSizes %v, want %v", p.BatchSizes, want)
	}
	if want := []int{1, 3, 2, 0}; !slices.Equal(p.SortedIndices, want) {
		t.Errorf("SortedIndices %v, want %v", p.SortedIndices, want)
	}
	if want := []int{3, 0, 2, 1}; !slices.Equal(p.UnsortedIndices, want) {
		t.Errorf("UnsortedIndices %v, want %v", p.UnsortedIndices, want)
	}
	var firsts []float64 // feature 0 of each packed row: 100·b + t
	for i, v := range p.Data.Float64s() {
		if i%2 == 0 {
			firsts = append(firsts, v)
		}
	}
	want := []float64{100, 300, 200, 0, 101, 301, 201, 1, 102, 302, 202, 103, 303}
	if !slices.Equal(firsts, want) {
		t.Errorf("rows %v, want %v", firsts, want)
	}
	if got := p.Lengths(); !slices.Equal(got, []int{2, 4, 3, 4}) {
		t.Errorf("Lengths %v", got)
	}
	for b, u := range p.Unpack() {
		if !slices.Equal(u.Float64s(), xs[b].Float64s()) || !slices.Equal(u.Shape(), xs[b].Shape()) {
			t.Errorf("Unpack()[%d] = %v, want %v", b, u, xs[b])
		}
	}
	for _, batchFirst := range []bool{false, true} {
		padded, lengths := p.Pad(batchFirst, -1)
		wantShape := []int{4, 4, 2}
		if !slices.Equal(padded.Shape(), wantShape) || !slices.Equal(lengths, p.Lengths()) {
			t.Fatalf("Pad(%v): shape %v lengths %v", batchFirst, padded.Shape(), lengths)
		}
		for b, x := range xs {
			seq := padded.Select(1, b)
			if batchFirst {
				seq = padded.Select(0, b)
			}
			n := x.Size(0)
			if !slices.Equal(seq.Narrow(0, 0, n).Float64s(), x.Float64s()) {
				t.Errorf("Pad(%v): sequence %d differs", batchFirst, b)
			}
			for _, v := range seq.Narrow(0, n, 4-n).Float64s() {
				if v != -1 {
					t.Errorf("Pad(%v): sequence %d padded with %v, want -1", batchFirst, b, v)
				}
			}
		}
		q := nn.PackPadded(padded, lengths, batchFirst)
		if !slices.Equal(q.Data.Float64s(), p.Data.Float64s()) || !slices.Equal(q.BatchSizes, p.BatchSizes) {
			t.Errorf("PackPadded(Pad(p), %v) differs from p", batchFirst)
		}
	}
}

// stackCase is a recurrent stack run packed and sequence by sequence.
type stackCase struct {
	name     string
	packed   func(p *nn.PackedSequence) *nn.PackedSequence
	oneByOne func(x *T) *T // x (n, features) unbatched → (n, hidden)
	params   []*T
}

func stackCases(dev tensor.Device) []stackCase {
	g := tensor.NewGenerator(7)
	o := []tensor.Option{tensor.On(dev), tensor.WithGenerator(g)}
	lstm, gru, rnn := nn.NewLSTM(3, 5, 2, o...), nn.NewGRU(3, 5, 1, o...), nn.NewRNN(3, 5, 2, false, o...)
	return []stackCase{
		{"lstm", func(p *nn.PackedSequence) *nn.PackedSequence {
			out, _, _ := lstm.ForwardPacked(p, nil, nil)
			return out
		},
			func(x *T) *T { out, _, _ := lstm.Forward(x, nil, nil); return out }, nn.Parameters(lstm)},
		{"gru", func(p *nn.PackedSequence) *nn.PackedSequence { out, _ := gru.ForwardPacked(p, nil); return out },
			func(x *T) *T { out, _ := gru.Forward(x, nil); return out }, nn.Parameters(gru)},
		{"rnn", func(p *nn.PackedSequence) *nn.PackedSequence { out, _ := rnn.ForwardPacked(p, nil); return out },
			func(x *T) *T { out, _ := rnn.Forward(x, nil); return out }, nn.Parameters(rnn)},
	}
}

// A packed batch gives each sequence the loss it has alone (within 1e-5
// relative, float32), and parameter gradients within 1e-5 of the sum of
// the per-sequence gradients, relative to that sum's norm: the packed
// layers compute exactly the sequences, nothing of their padding.
func TestPackedStacksMatchEachSequenceAlone(t *testing.T) {
	devs := []tensor.Device{tensor.CPU}
	if gpu, ok := devtest.GPU(t); ok {
		devs = append(devs, gpu)
	}
	lengths := []int{3, 12, 7, 1, 9}
	for _, dev := range devs {
		for _, c := range stackCases(dev) {
			t.Run(fmt.Sprintf("%s/%v", c.name, dev), func(t *testing.T) {
				xs := make([]*T, len(lengths))
				g := tensor.NewGenerator(3)
				for b, n := range lengths {
					xs[b] = tensor.Uniform([]int{n, 3}, -1, 1, tensor.On(dev), tensor.WithGenerator(g))
				}
				w := tensor.Uniform([]int{5}, -1, 1, tensor.On(dev), tensor.WithGenerator(g))
				loss := func(h *T) *T { return h.Tanh().MatMul(w).Square().Mean() }
				outs := c.packed(nn.PackSequence(xs)).Unpack()
				var total *T
				for b, x := range xs {
					got, want := loss(outs[b]).Item(), loss(c.oneByOne(x)).Item()
					if math.Abs(got-want) > 1e-5*math.Abs(want) {
						t.Errorf("sequence %d: packed loss %.8g, alone %.8g", b, got, want)
					}
					if total == nil {
						total = loss(outs[b])
					} else {
						total = total.Add(loss(outs[b]))
					}
				}
				packed := autograd.Grad(total, c.params)
				sums := make([][]float64, len(c.params))
				for _, x := range xs {
					for i, gr := range autograd.Grad(loss(c.oneByOne(x)), c.params) {
						v := gr.Float64s()
						if sums[i] == nil {
							sums[i] = make([]float64, len(v))
						}
						for j := range v {
							sums[i][j] += v[j]
						}
					}
				}
				for i, gr := range packed {
					var diff, norm float64
					for j, v := range gr.Float64s() {
						diff = max(diff, math.Abs(v-sums[i][j]))
						norm += sums[i][j] * sums[i][j]
					}
					if diff > 1e-5*math.Sqrt(norm) {
						t.Errorf("parameter %d: max |packed − Σ alone| %.3g, ‖Σ alone‖ %.3g", i, diff, math.Sqrt(norm))
					}
				}
			})
		}
	}
}

// RunPacked serves a user cell: a running sum is each sequence's sum.
func ExampleRunPacked() {
	p := nn.PackSequence([]*T{tensor.New([]float32{1, 2, 3}, 3, 1), tensor.New([]float32{10}, 1, 1)})
	out, finals := nn.RunPacked(p, []*T{tensor.Zeros([]int{2, 1})}, func(x *T, s []*T) []*T {
		return []*T{s[0].Add(x)}
	})
	fmt.Println(out.BatchSizes, finals[0].Float64s())
	// Output: [2 1 1] [6 10]
}

// packedCases are the adversarial-argument cases of packed sequences.
func packedCases() []A.Case {
	p := func() *nn.PackedSequence { return nn.PackSequence(seqs(3, 2, 1)) }
	var nilP *nn.PackedSequence
	return []A.Case{
		A.C("PackSequence", A.Pairs(func(x, y *T) { nn.PackSequence([]*T{x, y}); nn.PackSequence(nil) })),
		A.C("PackPadded", A.WithInts(func(x *T, n []int) {
			nn.PackPadded(x, n, false)
			nn.PackPadded(x, n, true)
		}, 1, 2)),
		A.C("PackNested", A.Each(func(x *T) {
			nn.PackNested(nil)
			nn.PackNested(nested.FromValues(x, []int{x.Size(0)}))
		})),
		A.C("PackedSequence.Nested", A.Each(func(x *T) { nilP.Nested(); p().WithData(x).Nested() })),
		A.C("PackedSequence.Lengths", A.One(func() { nilP.Lengths() })),
		A.C("PackedSequence.Unpack", A.One(func() { nilP.Unpack() })),
		A.C("PackedSequence.Pad", A.One(func() { nilP.Pad(false, math.NaN()) })),
		A.C("PackedSequence.WithData", A.Each(func(x *T) { p().WithData(x); nilP.WithData(x) })),
		A.C("RunPacked", A.Each(func(x *T) {
			step := func(x *T, s []*T) []*T { return s }
			nn.RunPacked(p(), []*T{x}, step)
			nn.RunPacked(p(), nil, step)
			nn.RunPacked(p(), []*T{tensor.Zeros([]int{2, 3})}, nil)
			nn.RunPacked(p(), []*T{tensor.Zeros([]int{2, 3})}, func(*T, []*T) []*T { return nil })
			nn.RunPacked(nilP, []*T{x}, step)
		})),
		A.C("LSTM.ForwardPacked", A.Pairs(func(h, c *T) {
			nn.NewLSTM(3, 3, 1).ForwardPacked(p(), h, c)
			nn.NewLSTM(3, 3, 1).ForwardPacked(nil, h, c)
			(*nn.LSTM)(nil).ForwardPacked(p(), h, c)
		})),
		A.C("GRU.ForwardPacked", A.Each(func(h *T) {
			nn.NewGRU(3, 3, 1).ForwardPacked(p(), h)
			(&nn.GRU{}).ForwardPacked(p(), h)
		})),
		A.C("RNN.ForwardPacked", A.Each(func(h *T) {
			nn.NewRNN(3, 3, 2, true).ForwardPacked(p(), h)
			(&nn.RNN{Cells: []*nn.RNNCell{nil}}).ForwardPacked(p(), h)
		})),
	}
}
