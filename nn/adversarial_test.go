package nn_test

import (
	"math"
	"slices"
	"testing"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

type T = tensor.Tensor

// TestAdversarialArguments calls every exported function and method of
// package nn (checked against go/doc, so a new export without a case
// fails) with adversarial arguments: nil, released, 0-d, empty and
// mismatched tensors, negative and huge sizes, NaN and ±Inf scalars, nil
// slices, modules and options. Each call must return or panic with a
// *tensor.Error, within a time limit.
func TestAdversarialArguments(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	A.Run(t, ".", gpu, ok, slices.Concat(nnCases(), layerCases(), packedCases(), packedAttentionCases()))
}

// sizes calls f with Tuples(defaults...) and each adversarial option.
func sizes(f func(i []int, o ...tensor.Option), defaults ...int) func(A.Try) {
	return func(try A.Try) {
		for _, i := range A.Tuples(defaults...) {
			try("sizes", func() { f(i) })
		}
		for _, o := range [][]tensor.Option{{nil}, {tensor.Of(tensor.Int32)}, {tensor.Of(tensor.DType(42))}, {tensor.On(tensor.GPU(-1))}} {
			try("options", func() { f(defaults, o...) })
		}
	}
}

// modules calls f with adversarial modules: nil, a nil layer pointer,
// one with a nil child, one with bad slot names, a cycle, and ordinary
// ones.
func modules(f func(m nn.Module)) func(A.Try) {
	return func(try A.Try) {
		var nilLinear *nn.LinearLayer
		var nilSeq *nn.Sequential
		var p *T
		released := nn.NewLinear(2, 2)
		nn.Parameters(released)[0].Release()
		cyc := nn.NewSequential()
		cyc.Add("self", cyc)
		for name, m := range map[string]nn.Module{
			"nil": nil, "nil *LinearLayer": nilLinear, "nil *Sequential": nilSeq, "released parameter": released,
			"nil child":      nn.NewSequential(nn.NewLinear(2, 2), nil),
			"dotted slot":    slotModule{nn.Param("a.b", &p)},
			"empty slot":     slotModule{nn.Param("", &p)},
			"nil slot ptr":   slotModule{nn.Param("w", nil)},
			"duplicate slot": slotModule{nn.Param("w", &p), nn.Buffer("w", &p)},
			"cycle":          cyc,
			"nil Func":       nn.Func(nil),
			"mlp":            nn.NewMLP([]int{2, 3, 1}, (*T).Tanh),
			"lstm":           nn.NewLSTM(2, 3, 2),
		} {
			try(name, func() { f(m) })
		}
	}
}

type slotModule []nn.Slot

func (s slotModule) Slots() []nn.Slot     { return s }
func (s slotModule) Children() []nn.Child { return nil }

// grads returns parameter lists with adversarial gradients.
func grads() map[string][]*T {
	withGrad := func(g *T) []*T {
		p := tensor.Ones([]int{2, 3}).SetRequiresGrad(true)
		tensor.Catch(func() { p.SetGrad(g) })
		return []*T{p}
	}
	out := map[string][]*T{"nil": nil, "nil element": {nil}, "no grad": {tensor.Ones([]int{2})}}
	for _, a := range A.Tensors() {
		out["grad "+a.Name] = withGrad(a.T)
		out["param "+a.Name] = []*T{a.T}
	}
	out["nan grad"] = withGrad(tensor.Full([]int{2, 3}, math.NaN()))
	return out
}

func withGrads(f func(ps []*T, a, b float64)) func(A.Try) {
	return func(try A.Try) {
		for name, ps := range grads() {
			try(name, func() { f(ps, 1, 2) })
		}
		for _, a := range A.Floats {
			try("scalar 1", func() { f(grads()["grad [2 3]"], a, 2) })
			try("scalar 2", func() { f(grads()["grad [2 3]"], 1, a) })
		}
	}
}

// loss calls f with adversarial pairs and with adversarial options.
func loss(f func(x, y *T, o ...nn.LossOption)) func(A.Try) {
	return func(try A.Try) {
		A.Pairs(func(x, y *T) { f(x, y) })(try)
		x, y := tensor.Ones([]int{2, 3}), tensor.New([]int32{0, 2})
		for _, o := range [][]nn.LossOption{{nil}, {nn.Reduce(nn.Reduction(42))}, {nn.IgnoreIndex(math.MinInt)}, {nn.IgnoreIndex(math.MaxInt)},
			{nn.Weight(nil)}, {nn.Weight(tensor.Ones([]int{5}))}, {nn.Weight(tensor.Full([]int{3}, math.NaN()))}, {nn.Weight(tensor.Ones([]int{3}, tensor.Of(tensor.Int32)))}} {
			try("options", func() { f(x, y, o...) })
			try("options, float target", func() { f(x, x, o...) })
		}
	}
}

func nnCases() []A.Case {
	x23 := func() *T { return tensor.Ones([]int{2, 3}) }
	return []A.Case{
		A.C("BinaryCrossEntropyWithLogits", loss(func(x, y *T, o ...nn.LossOption) { nn.BinaryCrossEntropyWithLogits(x, y, o...) })),
		A.C("Buffer", A.One(func() { nn.StateDict(slotModule{nn.Buffer("b", nil)}) })),
		A.C("Buffers", modules(func(m nn.Module) { nn.Buffers(m) })),
		A.C("ClipGradNorm", withGrads(func(ps []*T, a, b float64) { nn.ClipGradNorm(ps, a, b) })),
		A.C("ClipGradNormFinite", withGrads(func(ps []*T, a, b float64) { _, _ = nn.ClipGradNormFinite(ps, a, b) })),
		A.C("ClipGradValue", withGrads(func(ps []*T, a, _ float64) { nn.ClipGradValue(ps, a) })),
		A.C("CrossEntropy", loss(func(x, y *T, o ...nn.LossOption) { nn.CrossEntropy(x, y, o...) })),
		A.C("Dropout", A.WithFloats(func(x *T, p []float64) { nn.Dropout(x, p[0], true, nil) }, 0.5)),
		A.C("Embedding", A.Pairs(func(w, i *T) { nn.Embedding(w, i) })),
		A.C("Eval", modules(nn.Eval)),
		A.C("Freeze", modules(nn.Freeze)),
		A.C("LayerNorm", A.Triples(func(x, w, b *T) { nn.LayerNorm(x, []int{3}, w, b, 1e-5) })),
		A.C("LayerNorm", A.WithFloats(func(x *T, e []float64) { nn.LayerNorm(x, []int{3}, nil, nil, e[0]) }, 1e-5)),
		A.C("LayerNorm", A.WithShapes(func(s []int) { nn.LayerNorm(x23(), s, nil, nil, 1e-5) })),
		A.C("Linear", A.Triples(func(x, w, b *T) { nn.Linear(x, w.T(), b.Select(0, 0)) })),
		A.C("Linear", A.Pairs(func(x, w *T) { nn.Linear(x, w, nil) })),
		A.C("MSELoss", loss(func(x, y *T, o ...nn.LossOption) { nn.MSELoss(x, y, o...) })),
		A.C("NLLLoss", loss(func(x, y *T, o ...nn.LossOption) { nn.NLLLoss(x, y, o...) })),
		A.C("NamedBuffers", modules(func(m nn.Module) {
			for range nn.NamedBuffers(m) {
			}
		})),
		A.C("NamedModules", modules(func(m nn.Module) {
			for range nn.NamedModules(m) {
			}
		})),
		A.C("NamedParameters", modules(func(m nn.Module) {
			for range nn.NamedParameters(m) {
			}
		})),
		A.C("Parameters", modules(func(m nn.Module) { nn.Parameters(m) })),
		A.C("StateDict", modules(func(m nn.Module) { nn.StateDict(m) })),
		A.C("To", modules(func(m nn.Module) { nn.To(m, tensor.GPU(-1)); nn.To(m, tensor.CPU) })),
		A.C("Train", modules(nn.Train)),
		A.C("Unfreeze", modules(nn.Unfreeze)),
		A.C("Param", A.One(func() { nn.Parameters(slotModule{nn.Param("p", nil)}) })),
		A.C("IgnoreIndex", A.One(func() { nn.CrossEntropy(x23(), tensor.New([]int32{-100, 7}), nn.IgnoreIndex(-100)) })),
		A.C("Reduce", A.One(func() { nn.MSELoss(x23(), x23(), nn.Reduce(nn.Reduction(200))) })),
		A.C("Reduction.String", A.One(func() { _ = nn.Reduction(200).String() })),
		A.C("Weight", A.Each(func(w *T) { nn.CrossEntropy(x23(), tensor.New([]int32{0, 1}), nn.Weight(w)) })),

		A.C("NewDropout", A.WithFloats(func(x *T, p []float64) { nn.NewDropout(p[0]).Forward(x) }, 0.5)),
		A.C("DropoutLayer.Children", A.One(func() { var d *nn.DropoutLayer; d.Children() })),
		A.C("DropoutLayer.Forward", A.Each(func(x *T) { nn.NewDropout(0.5).Forward(x); (*nn.DropoutLayer)(nil).Forward(x) })),
		A.C("DropoutLayer.SetTraining", A.One(func() { var d *nn.DropoutLayer; d.SetTraining(true) })),
		A.C("DropoutLayer.Slots", A.One(func() { var d *nn.DropoutLayer; d.Slots() })),
		A.C("NewEmbedding", sizes(func(i []int, o ...tensor.Option) { nn.NewEmbedding(i[0], i[1], o...) }, 4, 2)),
		A.C("EmbeddingLayer.Children", A.One(func() { var e *nn.EmbeddingLayer; e.Children() })),
		A.C("EmbeddingLayer.Forward", A.Each(func(x *T) { nn.NewEmbedding(4, 2).Forward(x); (*nn.EmbeddingLayer)(nil).Forward(x) })),
		A.C("EmbeddingLayer.Slots", A.One(func() { var e *nn.EmbeddingLayer; e.Slots() })),
		A.C("Func.Children", A.One(func() { nn.Func(nil).Children() })),
		A.C("Func.Forward", A.Each(func(x *T) { nn.Func(nil).Forward(x); nn.Func((*T).Exp).Forward(x) })),
		A.C("Func.Slots", A.One(func() { nn.Func(nil).Slots() })),
		A.C("NewLSTM", sizes(func(i []int, o ...tensor.Option) { nn.NewLSTM(i[0], i[1], i[2], o...) }, 2, 3, 1)),
		A.C("LSTM.Children", A.One(func() { var m *nn.LSTM; m.Children() })),
		A.C("LSTM.Forward", A.Triples(func(x, h, c *T) { nn.NewLSTM(3, 3, 1).Forward(x.Unsqueeze(0), h, c); (*nn.LSTM)(nil).Forward(x, h, c) })),
		A.C("LSTM.Slots", A.One(func() { var m *nn.LSTM; m.Slots() })),
		A.C("NewLSTMCell", sizes(func(i []int, o ...tensor.Option) { nn.NewLSTMCell(i[0], i[1], o...) }, 2, 3)),
		A.C("LSTMCell.Children", A.One(func() { var m *nn.LSTMCell; m.Children() })),
		A.C("LSTMCell.Forward", A.Triples(func(x, h, c *T) { nn.NewLSTMCell(3, 3).Forward(x, h, c); (*nn.LSTMCell)(nil).Forward(x, h, c) })),
		A.C("LSTMCell.Slots", A.One(func() { var m *nn.LSTMCell; m.Slots() })),
		A.C("NewLayerNorm", A.WithShapes(func(s []int) { nn.NewLayerNorm(s).Forward(x23()) })),
		A.C("LayerNormLayer.Children", A.One(func() { var m *nn.LayerNormLayer; m.Children() })),
		A.C("LayerNormLayer.Forward", A.Each(func(x *T) { nn.NewLayerNorm([]int{3}).Forward(x); (*nn.LayerNormLayer)(nil).Forward(x) })),
		A.C("LayerNormLayer.Slots", A.One(func() { var m *nn.LayerNormLayer; m.Slots() })),
		A.C("NewLinear", sizes(func(i []int, o ...tensor.Option) { nn.NewLinear(i[0], i[1], o...) }, 3, 2)),
		A.C("LinearLayer.Children", A.One(func() { var m *nn.LinearLayer; m.Children() })),
		A.C("LinearLayer.Forward", A.Each(func(x *T) { nn.NewLinear(3, 2).Forward(x); (*nn.LinearLayer)(nil).Forward(x) })),
		A.C("LinearLayer.Slots", A.One(func() { var m *nn.LinearLayer; m.Slots() })),
		A.C("NewRNNCell", sizes(func(i []int, o ...tensor.Option) { nn.NewRNNCell(i[0], i[1], o...) }, 3, 2)),
		A.C("RNNCell.Children", A.One(func() { var m *nn.RNNCell; m.Children() })),
		A.C("RNNCell.Forward", A.Pairs(func(x, h *T) { nn.NewRNNCell(3, 3).Forward(x, h); (*nn.RNNCell)(nil).Forward(x, h) })),
		A.C("RNNCell.Slots", A.One(func() { var m *nn.RNNCell; m.Slots() })),
		A.C("NewMLP", sizes(func(i []int, o ...tensor.Option) { nn.NewMLP(i, nil, o...).Forward(tensor.Ones([]int{1, 2})) }, 2, 3)),
		A.C("NewSequential", A.One(func() { nn.NewSequential(nil).Forward(x23()); nn.NewSequential().Forward(nil) })),
		A.C("Sequential.Add", A.One(func() {
			nn.NewSequential().Add("", nil).Add("a.b", nn.NewLinear(3, 3)).Forward(x23())
			(*nn.Sequential)(nil).Add("x", nn.NewLinear(3, 3))
		})),
		A.C("Sequential.Children", A.One(func() { var s *nn.Sequential; s.Children() })),
		A.C("Sequential.Forward", A.Each(func(x *T) { nn.NewSequential(nn.NewLinear(3, 3)).Forward(x); (*nn.Sequential)(nil).Forward(x) })),
		A.C("Sequential.Slots", A.One(func() { var s *nn.Sequential; s.Slots() })),
	}
}
