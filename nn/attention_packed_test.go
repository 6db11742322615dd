package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// packedLayer returns a pre-norm transformer layer of width 12 with 3
// heads, no dropout, on dev in dt, seeded.
func packedLayer(dev tensor.Device, dt tensor.DType) *nn.TransformerEncoderLayer {
	cfg := nn.TransformerConfig{DimFeedforward: 20, Activation: "gelu", LayerNormEps: 1e-5, BatchFirst: true, NormFirst: true, Bias: true}
	l := nn.NewTransformerEncoderLayer(12, 3, cfg, tensor.WithGenerator(tensor.NewGenerator(7)), tensor.Of(dt), tensor.On(dev))
	for _, p := range nn.Parameters(l) { // non-zero biases and norms, so their gradients say something
		tensor.NoGrad(func() {
			p.AddInPlace(tensor.Rand(p.Shape(), tensor.Like(p), tensor.WithGenerator(tensor.NewGenerator(9))).MulScalar(0.1), 1)
		})
	}
	return l
}

// gradsOf returns the layer's parameter gradients, flattened, and zeroes
// them.
func gradsOf(l nn.Module) [][]float64 {
	var out [][]float64
	for _, p := range nn.Parameters(l) {
		out = append(out, p.Grad().To(tensor.CPU).Cast(tensor.Float64).Float64s())
		p.SetGrad(nil)
	}
	return out
}

// TestTransformerForwardPacked: the layer over packed rows of sequences
// of lengths 1, 7 and 5 (causal and not) gives each sequence's rows as
// the layer run on that sequence alone (through MultiheadAttention's
// materialised scores) and as the padded batch with a key-padding mask,
// and the parameter gradients of the packed loss are the sum of the
// per-sequence ones: to 1e-10 in float64 on the CPU, and on the GPU in
// float32 within 1e-4 of the CPU.
func TestTransformerForwardPacked(t *testing.T) {
	lens := []int{1, 7, 5}
	offs := tensor.Offsets(lens...)
	n := offs[len(offs)-1]
	x64 := tensor.Rand([]int{n, 12}, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(3))).AddScalar(-0.5)
	w64 := tensor.Rand([]int{n, 12}, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(4)))
	for _, causal := range []bool{false, true} {
		l := packedLayer(tensor.CPU, tensor.Float64)
		packed := l.ForwardPacked(x64, offs, causal)
		autograd.Backward(packed.Mul(w64).Sum())
		gPacked := gradsOf(l)
		// Each sequence alone, through the materialised attention.
		var alone []float64
		for s, ln := range lens {
			xs := x64.Narrow(0, offs[s], ln).Unsqueeze(0)
			y := l.ForwardMasked(xs, nn.AttentionMasks{Causal: causal}).Squeeze(0)
			autograd.Backward(y.Mul(w64.Narrow(0, offs[s], ln)).Sum())
			alone = append(alone, y.Float64s()...)
		}
		gAlone := gradsOf(l)
		name := fmt.Sprintf("causal %v", causal)
		approx.Require(t, name+": packed vs alone", packed.Float64s(), alone, approx.AbsRel(1e-10, 1e-10))
		for i := range gPacked {
			approx.Require(t, fmt.Sprintf("%s: gradient %d", name, i), gPacked[i], gAlone[i], approx.AbsRel(1e-10, 1e-10))
		}
		// The padded batch with a key-padding mask.
		pad := tensor.Zeros([]int{len(lens), 7, 12}, tensor.Of(tensor.Float64))
		kp := make([]bool, len(lens)*7)
		for s, ln := range lens {
			pad.Select(0, s).Narrow(0, 0, ln).CopyFrom(x64.Narrow(0, offs[s], ln))
			for j := ln; j < 7; j++ {
				kp[s*7+j] = true
			}
		}
		y := l.ForwardMasked(pad, nn.AttentionMasks{Causal: causal, KeyPadding: tensor.New(kp, len(lens), 7)})
		var padded []float64
		for s, ln := range lens {
			padded = append(padded, y.Select(0, s).Narrow(0, 0, ln).Float64s()...)
		}
		approx.Require(t, name+": packed vs padded", packed.Float64s(), padded, approx.AbsRel(1e-10, 1e-10))

		if gpu, ok := devtest.GPU(t); ok {
			lg := packedLayer(gpu, tensor.Float32)
			lc := packedLayer(tensor.CPU, tensor.Float32)
			var outs [2][]float64
			var gs [2][][]float64
			for i, m := range []*nn.TransformerEncoderLayer{lc, lg} {
				dev := []tensor.Device{tensor.CPU, gpu}[i]
				y := m.ForwardPacked(x64.Cast(tensor.Float32).To(dev), offs, causal)
				autograd.Backward(y.Mul(w64.Cast(tensor.Float32).To(dev)).Sum())
				outs[i], gs[i] = y.To(tensor.CPU).Cast(tensor.Float64).Float64s(), gradsOf(m)
			}
			approx.Require(t, name+": GPU vs CPU", outs[1], outs[0], approx.AbsRel(1e-5, 1e-4))
			for i := range gs[0] {
				approx.Require(t, fmt.Sprintf("%s: GPU gradient %d", name, i), gs[1][i], gs[0][i], approx.AbsRel(1e-4, 1e-4))
			}
		}
	}
}

// TestMultiheadAttentionDenseAsSegments: dense batched self-attention
// (B, L, E), causal and not, is ForwardPacked over B equal segments of L
// rows, on every device (float64 on the CPU).
func TestMultiheadAttentionDenseAsSegments(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		dt := tensor.Float64
		if dev != tensor.CPU {
			dt = tensor.Float32
		}
		m := nn.NewMultiheadAttention(12, 4, true, tensor.On(dev), tensor.Of(dt), tensor.WithGenerator(tensor.NewGenerator(5)))
		m.BatchFirst = true
		x := tensor.Randn([]int{3, 5, 12}, tensor.On(dev), tensor.Of(dt), tensor.WithGenerator(tensor.NewGenerator(6)))
		for _, causal := range []bool{false, true} {
			dense, _ := m.Forward(x, x, x, nn.AttentionMasks{Causal: causal, SkipWeights: true})
			packed := m.ForwardPacked(x.Reshape(15, 12), tensor.Offsets(5, 5, 5), causal)
			tol := approx.AbsRel(1e-12, 1e-12)
			if dt == tensor.Float32 {
				tol = approx.AbsRel(1e-6, 1e-5)
			}
			approx.Require(t, fmt.Sprintf("%v causal %v", dev, causal), packed.To(tensor.CPU).Cast(tensor.Float64).Float64s(),
				dense.To(tensor.CPU).Cast(tensor.Float64).Float64s(), tol)
		}
	}
}

// TestForwardPackedBadInput: misuse is a typed error.
func TestForwardPackedBadInput(t *testing.T) {
	m := nn.NewMultiheadAttention(6, 2, true)
	x := tensor.Rand([]int{5, 6})
	for _, c := range []struct {
		name string
		f    func()
		want error
	}{
		{"3-D x", func() { m.ForwardPacked(x.Unsqueeze(0), nil, true) }, tensor.ErrShape},
		{"wrong width", func() { m.ForwardPacked(tensor.Rand([]int{5, 4}), nil, true) }, tensor.ErrShape},
		{"offsets short of N", func() { m.ForwardPacked(x, []int{0, 3}, true) }, tensor.ErrArgument},
		{"dropout in training", func() {
			d := nn.NewMultiheadAttention(6, 2, true)
			d.Dropout = 0.1
			d.ForwardPacked(x, nil, false)
		}, tensor.ErrArgument},
		{"kdim", func() { nn.NewMultiheadAttentionKV(6, 2, 4, 6, true).ForwardPacked(x, nil, false) }, tensor.ErrArgument},
		{"nil x", func() { m.ForwardPacked(nil, nil, false) }, tensor.ErrArgument},
	} {
		if err := tensor.Catch(c.f); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if y := m.ForwardPacked(tensor.Zeros([]int{0, 6}), []int{0, 0}, true); y.Size(0) != 0 {
		t.Errorf("empty batch: %v", y.Shape())
	}
}

// packedAttentionCases are the adversarial cases of the packed forwards:
// adversarial rows, and adversarial offsets for 3 rows.
func packedAttentionCases() []A.Case {
	noDrop := func() *nn.TransformerEncoderLayer {
		c := nn.DefaultTransformerConfig()
		c.Dropout = 0
		return nn.NewTransformerEncoderLayer(4, 2, c)
	}
	offsets := [][]int{nil, {}, {0, 3}, {0, 2, 1, 3}, {0, -1, 3}, {1, 3}, {0, math.MaxInt, 3}, {0, 1 << 40}}
	run := func(f func(x *T, offs []int)) func(A.Try) {
		return func(try A.Try) {
			for _, a := range A.Tensors() {
				try(a.Name, func() { f(a.T, nil) })
			}
			for _, o := range offsets {
				try("offsets", func() { f(tensor.Rand([]int{3, 4}), o) })
			}
		}
	}
	return []A.Case{
		A.C("MultiheadAttention.ForwardPacked", run(func(x *T, o []int) {
			nn.NewMultiheadAttention(4, 2, true).ForwardPacked(x, o, true)
			(*nn.MultiheadAttention)(nil).ForwardPacked(x, o, true)
		})),
		A.C("TransformerEncoderLayer.ForwardPacked", run(func(x *T, o []int) {
			noDrop().ForwardPacked(x, o, false)
			encoder().ForwardPacked(x, o, false)
			(*nn.TransformerEncoderLayer)(nil).ForwardPacked(x, o, false)
		})),
		A.C("TransformerEncoder.ForwardPacked", run(func(x *T, o []int) {
			nn.NewTransformerEncoder(noDrop(), 2, nil).ForwardPacked(x, o, true)
			(*nn.TransformerEncoder)(nil).ForwardPacked(x, o, true)
		})),
	}
}
