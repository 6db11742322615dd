package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// paramPtrs returns the fields holding m's parameters, module by module.
func paramPtrs(m nn.Module) []**tensor.Tensor {
	var out []**tensor.Tensor
	for _, sub := range nn.NamedModules(m) {
		for _, s := range sub.Slots() {
			if !s.Buffer && *s.Ptr != nil {
				out = append(out, s.Ptr)
			}
		}
	}
	return out
}

// checkLayer checks by finite differences in float64 the gradients of
// f(inputs) with respect to the float inputs that require grad and to
// every parameter of m, which f reads from m's fields.
func checkLayer(t *testing.T, name string, m nn.Module, inputs []*tensor.Tensor, f func(in []*tensor.Tensor) *tensor.Tensor) {
	t.Helper()
	checkLayerWith(t, name, autograd.CheckOptions{Atol: 1e-7, Rtol: 1e-5}, m, inputs, f)
}

// checkLayerWith is checkLayer with the tolerances of opt.
func checkLayerWith(t *testing.T, name string, opt autograd.CheckOptions, m nn.Module, inputs []*tensor.Tensor, f func(in []*tensor.Tensor) *tensor.Tensor) {
	t.Helper()
	ptrs := paramPtrs(m)
	xs := append([]*tensor.Tensor(nil), inputs...)
	for _, p := range ptrs {
		xs = append(xs, *p)
	}
	defer func() { // Check releases the tensors it builds: restore m's own
		for i, p := range ptrs {
			*p = xs[len(inputs)+i]
		}
	}()
	err := autograd.Check(func(xs []*tensor.Tensor) *tensor.Tensor {
		for i, p := range ptrs {
			*p = xs[len(inputs)+i]
		}
		return f(xs[:len(inputs)])
	}, xs, opt)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

func randn64(seed uint64, shape ...int) *tensor.Tensor {
	return tensor.Randn(shape, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(seed))).SetRequiresGrad(true)
}

// jitter moves every parameter of m by 0.3·N(0, 1), so unit weights and
// zero biases are not special.
func jitter(m nn.Module, seed uint64) {
	for i, p := range paramPtrs(m) {
		q := (*p).Detach().Add(tensor.RandnLike(*p, tensor.WithGenerator(tensor.NewGenerator(seed+uint64(i)))).MulScalar(0.3))
		*p = q.SetRequiresGrad(true)
	}
}

func TestLayerGradients(t *testing.T) {
	f64 := tensor.Of(tensor.Float64)
	gen := func(s uint64) tensor.Option { return tensor.WithGenerator(tensor.NewGenerator(s)) }

	bn := nn.NewBatchNorm2d(3, f64)
	jitter(bn, 1)
	checkLayer(t, "BatchNorm2d/train", bn, []*tensor.Tensor{randn64(2, 2, 3, 2, 3)}, func(in []*tensor.Tensor) *tensor.Tensor { return bn.Forward(in[0]) })
	bn1 := nn.NewBatchNorm1d(4, f64)
	jitter(bn1, 3)
	bn1.RunningVar = tensor.Uniform([]int{4}, 0.5, 1.5, f64, gen(4)).Keep()
	bn1.Training = false
	checkLayer(t, "BatchNorm1d/eval", bn1, []*tensor.Tensor{randn64(5, 3, 4, 2)}, func(in []*tensor.Tensor) *tensor.Tensor { return bn1.Forward(in[0]) })
	gn := nn.NewGroupNorm(2, 4, f64)
	jitter(gn, 6)
	checkLayer(t, "GroupNorm", gn, []*tensor.Tensor{randn64(7, 2, 4, 3)}, func(in []*tensor.Tensor) *tensor.Tensor { return gn.Forward(in[0]) })

	cell := nn.NewGRUCell(3, 4, f64, gen(8))
	checkLayer(t, "GRUCell", cell, []*tensor.Tensor{randn64(9, 2, 3), randn64(10, 2, 4)},
		func(in []*tensor.Tensor) *tensor.Tensor { return cell.Forward(in[0], in[1]) })
	gru := nn.NewGRU(3, 3, 2, f64, gen(11))
	checkLayer(t, "GRU", gru, []*tensor.Tensor{randn64(12, 4, 2, 3), randn64(13, 2, 2, 3)}, func(in []*tensor.Tensor) *tensor.Tensor {
		out, hn := gru.Forward(in[0], in[1])
		return tensor.Cat([]*tensor.Tensor{out, hn}, 0)
	})
	rnn := nn.NewRNN(3, 4, 2, true, f64, gen(14))
	checkLayer(t, "RNN/relu", rnn, []*tensor.Tensor{randn64(15, 3, 2, 3)}, func(in []*tensor.Tensor) *tensor.Tensor {
		out, hn := rnn.Forward(in[0], nil)
		return tensor.Cat([]*tensor.Tensor{out, hn.Square()}, 0)
	})

	mha := nn.NewMultiheadAttention(4, 2, true, f64, gen(16))
	jitter(mha, 17)
	pad := tensor.New([]bool{false, false, true, false, false, false, false, true}, 2, 4)
	checkLayer(t, "MultiheadAttention/self", mha, []*tensor.Tensor{randn64(18, 4, 2, 4)}, func(in []*tensor.Tensor) *tensor.Tensor {
		out, w := mha.Forward(in[0], in[0], in[0], nn.AttentionMasks{KeyPadding: pad, Causal: true})
		return out.Sum().Add(w.Square().Sum())
	})
	fmask := tensor.Uniform([]int{3, 5}, -1, 1, f64, gen(19))
	checkLayer(t, "MultiheadAttention/cross", mha, []*tensor.Tensor{randn64(20, 3, 1, 4), randn64(21, 5, 1, 4), randn64(22, 5, 1, 4)},
		func(in []*tensor.Tensor) *tensor.Tensor {
			out, w := mha.Forward(in[0], in[1], in[2], nn.AttentionMasks{AttnMask: fmask, PerHeadWeights: true})
			return out.Sum().Add(w.Square().Sum())
		})

	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout, cfg.NormFirst, cfg.BatchFirst, cfg.Activation = 6, 0, true, true, "gelu"
	enc := nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(4, 2, cfg, f64, gen(23)), 1, nn.NewLayerNorm([]int{4}, f64))
	jitter(enc, 24)
	checkLayer(t, "TransformerEncoder/pre-norm", enc, []*tensor.Tensor{randn64(25, 2, 3, 4)}, func(in []*tensor.Tensor) *tensor.Tensor {
		return enc.ForwardMasked(in[0], nn.AttentionMasks{Causal: true})
	})
}

// TestLayerInit: every layer starts as PyTorch initialises it.
func TestLayerInit(t *testing.T) {
	bn := nn.NewBatchNorm2d(5)
	for name, want := range map[string]float64{"weight": 1, "bias": 0, "running_mean": 0, "running_var": 1, "num_batches_tracked": 0} {
		got := nn.StateDict(bn)[name]
		for _, v := range got.Float64s() {
			if v != want {
				t.Errorf("BatchNorm2d %s = %v, want %v", name, v, want)
			}
		}
	}
	if nbt := bn.NumBatchesTracked; nbt.DType() != tensor.Int32 || nbt.Dim() != 0 {
		t.Errorf("num_batches_tracked is %v %v, want a 0-d Int32", nbt.DType(), nbt.Shape())
	}
	inBounds := func(what string, p *tensor.Tensor, bound float64) {
		t.Helper()
		lo, hi := p.Min().Item(), p.Max().Item()
		if lo < -bound || hi > bound || hi-lo < bound { // filled, and within the bound
			t.Errorf("%s drawn from [%g, %g], want U(-%g, %g)", what, lo, hi, bound, bound)
		}
	}
	gru := nn.NewGRU(7, 16, 2)
	for _, p := range nn.Parameters(gru) {
		inBounds("GRU", p, 0.25)
	}
	mha := nn.NewMultiheadAttention(24, 4, true)
	inBounds("MultiheadAttention in_proj_weight (Xavier)", mha.InProjWeight, math.Sqrt(6.0/(24+72)))
	inBounds("MultiheadAttention out_proj.weight", mha.OutProj.Weight, 1/math.Sqrt(24))
	for _, p := range []*tensor.Tensor{mha.InProjBias, mha.OutProj.Bias} {
		if p.Abs().Max().Item() != 0 {
			t.Errorf("MultiheadAttention biases must start at 0")
		}
	}
	kv := nn.NewMultiheadAttentionKV(24, 4, 40, 8, true)
	if kv.InProjWeight != nil {
		t.Error("kdim, vdim ≠ embed_dim: the projections must be separate")
	}
	inBounds("q_proj_weight", kv.QProjWeight, math.Sqrt(6.0/48))
	inBounds("k_proj_weight", kv.KProjWeight, math.Sqrt(6.0/64))
	inBounds("v_proj_weight", kv.VProjWeight, math.Sqrt(6.0/32))
	layer := nn.NewTransformerEncoderLayer(8, 2, nn.DefaultTransformerConfig())
	inBounds("linear1.weight", layer.Linear1.Weight, 1/math.Sqrt(8))
	inBounds("linear2.weight", layer.Linear2.Weight, 1/math.Sqrt(2048))
	enc := nn.NewTransformerEncoder(layer, 3, nil)
	src := nn.StateDict(layer)
	for name, p := range nn.StateDict(enc) {
		// PyTorch deep-copies the layer: every copy starts equal to it, in its own storage.
		orig := src[name[len("layers.0."):]]
		if !slices.Equal(p.Float64s(), orig.Float64s()) || p.SharesStorage(orig) {
			t.Errorf("%s: not a copy of the layer's tensor", name)
		}
	}
}
