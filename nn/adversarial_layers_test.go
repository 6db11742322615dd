package nn_test

import (
	"math"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// inputs are adversarial layer inputs: A.Tensors and a 4-D and a 3-D
// ordinary tensor (images, sequences).
func inputs() []A.Arg {
	return append(A.Tensors(), A.Arg{Name: "[1 2 5 5]", T: tensor.Rand([]int{1, 2, 5, 5})}, A.Arg{Name: "[3 2 4]", T: tensor.Rand([]int{3, 2, 4})})
}

// layerAdv returns the Children, Forward and Slots cases of the layer type
// name: Forward of each adversarial input through the layer made by
// build, and all three on nilLayer (a nil pointer of the type, or nil
// for a value type).
func layerAdv(name string, build func() nn.Layer, nilLayer nn.Layer) []A.Case {
	onNil := func(f func(l nn.Layer)) func(A.Try) {
		return func(try A.Try) {
			try("built", func() { f(build()) })
			if nilLayer != nil {
				try("nil receiver", func() { f(nilLayer) })
			}
		}
	}
	forward := func(try A.Try) {
		for _, a := range inputs() {
			try(a.Name, func() { build().Forward(a.T) })
			if nilLayer != nil {
				try("nil receiver", func() { nilLayer.Forward(a.T) })
			}
		}
	}
	return []A.Case{
		A.C(name+".Children", onNil(func(l nn.Layer) { l.Children() })),
		A.C(name+".Forward", forward),
		A.C(name+".Slots", onNil(func(l nn.Layer) { l.Slots() })),
	}
}

// stack calls f (an RNN or GRU Forward) with adversarial inputs and
// states, on a built stack and a nil one.
func stack(f func(x, h *T)) func(A.Try) {
	return func(try A.Try) {
		for _, a := range inputs() {
			try("x "+a.Name, func() { f(a.T, nil) })
			try("h "+a.Name, func() { f(tensor.Rand([]int{3, 2, 4}), a.T) })
		}
	}
}

func encoder() *nn.TransformerEncoderLayer {
	return nn.NewTransformerEncoderLayer(4, 2, nn.DefaultTransformerConfig())
}

func advMasks() []nn.AttentionMasks {
	out := []nn.AttentionMasks{{}, {Causal: true}, {SkipWeights: true, PerHeadWeights: true}}
	for _, a := range A.Tensors() {
		out = append(out, nn.AttentionMasks{AttnMask: a.T}, nn.AttentionMasks{KeyPadding: a.T, Causal: true})
	}
	return out
}

func layerCases() []A.Case {
	var cases []A.Case
	for _, l := range []struct {
		name  string
		build func() nn.Layer
		nilL  nn.Layer
	}{
		{"AdaptiveAvgPool2d", func() nn.Layer { return nn.AdaptiveAvgPool2d{Size: [2]int{-1, math.MaxInt}} }, nil},
		{"AvgPool2d", func() nn.Layer { return nn.NewAvgPool2d(tensor.Window2d{Kernel: [2]int{math.MaxInt, 2}}) }, nil},
		{"BatchNormLayer", func() nn.Layer { return nn.NewBatchNorm2d(2) }, (*nn.BatchNormLayer)(nil)},
		{"Conv2d", func() nn.Layer {
			return nn.NewConv2d(2, 3, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true)
		}, (*nn.Conv2d)(nil)},
		{"ConvTranspose2d", func() nn.Layer { return nn.NewConvTranspose2d(2, 3, [2]int{2, 2}, tensor.ConvOptions{}, true) }, (*nn.ConvTranspose2d)(nil)},
		{"Flatten", func() nn.Layer { return nn.Flatten{StartDim: math.MinInt, EndDim: 9} }, nil},
		{"Fold", func() nn.Layer { return nn.Fold{Size: [2]int{-1, 5}, Window: tensor.Window2d{Kernel: [2]int{2, 2}}} }, nil},
		{"Unfold", func() nn.Layer { return nn.Unfold{Window: tensor.Window2d{Kernel: [2]int{2, math.MaxInt}}} }, nil},
		{"GELU", func() nn.Layer { return nn.GELU{} }, nil},
		{"GroupNormLayer", func() nn.Layer { return nn.NewGroupNorm(2, 2) }, (*nn.GroupNormLayer)(nil)},
		{"Identity", func() nn.Layer { return nn.Identity{} }, nil},
		{"LeakyReLU", func() nn.Layer { return nn.LeakyReLU{NegativeSlope: math.NaN()} }, nil},
		{"LogSoftmax", func() nn.Layer { return nn.LogSoftmax{Dim: math.MaxInt} }, nil},
		{"MaxPool2d", func() nn.Layer {
			return nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{2, 2}, Padding: [2]int{-1, 0}}}
		}, nil},
		{"ReLU", func() nn.Layer { return nn.ReLU{} }, nil},
		{"SiLU", func() nn.Layer { return nn.SiLU{} }, nil},
		{"Sigmoid", func() nn.Layer { return nn.Sigmoid{} }, nil},
		{"Softmax", func() nn.Layer { return nn.Softmax{Dim: -7} }, nil},
		{"Tanh", func() nn.Layer { return nn.Tanh{} }, nil},
		{"TransformerEncoder", func() nn.Layer { return nn.NewTransformerEncoder(encoder(), 2, nil) }, (*nn.TransformerEncoder)(nil)},
		{"TransformerEncoderLayer", func() nn.Layer { return encoder() }, (*nn.TransformerEncoderLayer)(nil)},
	} {
		cases = append(cases, layerAdv(l.name, l.build, l.nilL)...)
	}
	rnn := func() *nn.RNN { return nn.NewRNN(4, 3, 2, true) }
	gru := func() *nn.GRU { return nn.NewGRU(4, 3, 2) }
	mha := func() *nn.MultiheadAttention { return nn.NewMultiheadAttention(4, 2, true) }
	x := func() *T { return tensor.Rand([]int{3, 2, 4}) }
	return append(cases,
		A.C("BatchNorm", A.Triples(func(x, m, v *T) { nn.BatchNorm(x, m, v, nil, nil, true, math.NaN(), -1) })),
		A.C("BatchNorm", A.WithFloats(func(x *T, f []float64) { nn.BatchNorm(x, nil, nil, nil, nil, false, f[0], f[1]) }, 0.1, 1e-5)),
		A.C("BatchNormLayer.SetTraining", A.One(func() { (*nn.BatchNormLayer)(nil).SetTraining(true) })),
		A.C("CausalMask", A.WithInts(func(_ *T, i []int) { nn.CausalMask(i[0], i[1]) }, 3, 3)),
		A.C("DefaultTransformerConfig", A.One(func() {
			c := nn.DefaultTransformerConfig()
			c.Dropout = math.NaN()
			nn.NewTransformerEncoderLayer(4, 2, c)
		})),
		A.C("GRU.Children", A.One(func() { gru().Children(); (*nn.GRU)(nil).Children() })),
		A.C("GRU.Forward", stack(func(x, h *T) { gru().Forward(x, h) })),
		A.C("GRU.Forward", A.One(func() { (*nn.GRU)(nil).Forward(x(), nil) })),
		A.C("GRU.Slots", A.One(func() { gru().Slots(); (*nn.GRU)(nil).Slots() })),
		A.C("GRUCell.Children", A.One(func() { (*nn.GRUCell)(nil).Children() })),
		A.C("GRUCell.Forward", A.Pairs(func(x, h *T) { nn.NewGRUCell(3, 3).Forward(x, h); (*nn.GRUCell)(nil).Forward(x, h) })),
		A.C("GRUCell.Slots", A.One(func() { (*nn.GRUCell)(nil).Slots() })),
		A.C("GroupNorm", A.Triples(func(x, w, b *T) { nn.GroupNorm(x, 3, w, b, 1e-5) })),
		A.C("GroupNorm", A.WithInts(func(x *T, g []int) { nn.GroupNorm(tensor.Rand([]int{1, 2, 5}), g[0], nil, nil, math.Inf(-1)) }, 2)),
		A.C("MultiheadAttention.Children", A.One(func() { (*nn.MultiheadAttention)(nil).Children() })),
		A.C("MultiheadAttention.Forward", A.Triples(func(q, k, v *T) { mha().Forward(q, k, v, nn.AttentionMasks{}) })),
		A.C("MultiheadAttention.Forward", func(try A.Try) {
			for _, m := range advMasks() {
				try("masks", func() { mha().Forward(x(), x(), x(), m) })
			}
			try("nil receiver", func() { (*nn.MultiheadAttention)(nil).Forward(x(), x(), x(), nn.AttentionMasks{}) })
		}),
		A.C("MultiheadAttention.SetTraining", A.One(func() { (*nn.MultiheadAttention)(nil).SetTraining(false) })),
		A.C("MultiheadAttention.Slots", A.One(func() { (*nn.MultiheadAttention)(nil).Slots() })),
		A.C("NewAvgPool2d", A.WithInts(func(_ *T, i []int) {
			nn.NewAvgPool2d(tensor.Window2d{Kernel: [2]int{i[0], 2}, Stride: [2]int{i[1], 1}})
		}, 2, 1)),
		A.C("NewBatchNorm1d", sizes(func(i []int, o ...tensor.Option) { nn.NewBatchNorm1d(i[0], o...) }, 3)),
		A.C("NewBatchNorm2d", sizes(func(i []int, o ...tensor.Option) { nn.NewBatchNorm2d(i[0], o...) }, 3)),
		A.C("NewConv2d", sizes(func(i []int, o ...tensor.Option) {
			nn.NewConv2d(i[0], i[1], [2]int{i[2], 3}, tensor.ConvOptions{Groups: i[3]}, true, o...)
		}, 2, 4, 3, 2)),
		A.C("NewConvTranspose2d", sizes(func(i []int, o ...tensor.Option) {
			nn.NewConvTranspose2d(i[0], i[1], [2]int{i[2], 3}, tensor.ConvOptions{Groups: i[3]}, false, o...)
		}, 2, 4, 3, 2)),
		A.C("NewFlatten", A.Each(func(x *T) { nn.NewFlatten().Forward(x) })),
		A.C("NewGRU", sizes(func(i []int, o ...tensor.Option) { nn.NewGRU(i[0], i[1], i[2], o...) }, 2, 3, 1)),
		A.C("NewGRUCell", sizes(func(i []int, o ...tensor.Option) { nn.NewGRUCell(i[0], i[1], o...) }, 2, 3)),
		A.C("NewGroupNorm", sizes(func(i []int, o ...tensor.Option) { nn.NewGroupNorm(i[0], i[1], o...) }, 2, 4)),
		A.C("NewLeakyReLU", A.Each(func(x *T) { nn.NewLeakyReLU().Forward(x) })),
		A.C("NewMultiheadAttention", sizes(func(i []int, o ...tensor.Option) { nn.NewMultiheadAttention(i[0], i[1], true, o...) }, 4, 2)),
		A.C("NewMultiheadAttentionKV", sizes(func(i []int, o ...tensor.Option) { nn.NewMultiheadAttentionKV(i[0], i[1], i[2], i[3], false, o...) }, 4, 2, 3, 5)),
		A.C("NewRNN", sizes(func(i []int, o ...tensor.Option) { nn.NewRNN(i[0], i[1], i[2], false, o...) }, 2, 3, 1)),
		A.C("NewTransformerEncoder", A.WithInts(func(_ *T, i []int) { nn.NewTransformerEncoder(encoder(), i[0], nil) }, 2)),
		A.C("NewTransformerEncoder", A.One(func() {
			nn.NewTransformerEncoder(nil, 2, nil)
			nn.NewTransformerEncoder(encoder(), 1, &nn.LayerNormLayer{})
		})),
		A.C("NewTransformerEncoderLayer", sizes(func(i []int, o ...tensor.Option) {
			nn.NewTransformerEncoderLayer(i[0], i[1], nn.DefaultTransformerConfig(), o...)
		}, 4, 2)),
		A.C("RNN.Children", A.One(func() { rnn().Children(); (*nn.RNN)(nil).Children() })),
		A.C("RNN.Forward", stack(func(x, h *T) { rnn().Forward(x, h) })),
		A.C("RNN.Forward", A.One(func() { (*nn.RNN)(nil).Forward(x(), nil) })),
		A.C("RNN.Slots", A.One(func() { rnn().Slots(); (*nn.RNN)(nil).Slots() })),
		A.C("StackOptions.SetTraining", A.One(func() { (*nn.StackOptions)(nil).SetTraining(true) })),
		A.C("TransformerEncoder.ForwardMasked", func(try A.Try) {
			for _, m := range advMasks() {
				try("masks", func() { nn.NewTransformerEncoder(encoder(), 1, nil).ForwardMasked(x(), m) })
			}
			try("nil receiver", func() { (*nn.TransformerEncoder)(nil).ForwardMasked(x(), nn.AttentionMasks{}) })
		}),
		A.C("TransformerEncoderLayer.ForwardMasked", func(try A.Try) {
			for _, m := range advMasks() {
				try("masks", func() { encoder().ForwardMasked(x(), m) })
			}
			try("nil receiver", func() { (*nn.TransformerEncoderLayer)(nil).ForwardMasked(x(), nn.AttentionMasks{}) })
		}),
	)
}
