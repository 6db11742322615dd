package nn_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/reftensor"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// layerRun is a module built for a case of testdata/torch/layers.json
// and its forward pass over the named inputs.
type layerRun struct {
	m       nn.Module
	forward func(in map[string]*tensor.Tensor) []*tensor.Tensor
}

// attrOr returns attribute key of c as a float, or def when absent.
func attrOr(c torchref.Case, key string, def float64) float64 {
	if c.Has(key) {
		return c.Float(key)
	}
	return def
}

func boolOr(c torchref.Case, key string, def bool) bool {
	if c.Has(key) {
		return c.Bool(key)
	}
	return def
}

func one(t *tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{t} }

func layer(l nn.Layer) layerRun {
	return layerRun{l, func(in map[string]*tensor.Tensor) []*tensor.Tensor { return one(l.Forward(in["x"])) }}
}

func batchNorm(c torchref.Case, b *nn.BatchNormLayer) layerRun {
	b.Eps = attrOr(c, "eps", 1e-5)
	if v, ok := c.Attrs["momentum"]; ok && v == nil {
		b.Cumulative = true
	} else {
		b.Momentum = attrOr(c, "momentum", 0.1)
	}
	if !boolOr(c, "affine", true) {
		b.Weight, b.Bias = nil, nil
	}
	if !boolOr(c, "track_running_stats", true) {
		b.RunningMean, b.RunningVar, b.NumBatchesTracked = nil, nil, nil
	}
	return layer(b)
}

func stackOptions(c torchref.Case, o *nn.StackOptions) {
	o.BatchFirst, o.Dropout = boolOr(c, "batch_first", false), attrOr(c, "dropout", 0)
}

// recurrent runs a recurrent stack as the case does: over x directly, or,
// when the case has "lengths", packed with them (PackPadded,
// ForwardPacked, then Pad with zeros, as pad_packed_sequence).
func recurrent(c torchref.Case, m nn.Module, forward func(x, h, cell *tensor.Tensor) []*tensor.Tensor,
	packed func(x *nn.PackedSequence, h, cell *tensor.Tensor) (*nn.PackedSequence, []*tensor.Tensor)) layerRun {
	return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor {
		if !c.Has("lengths") {
			return forward(in["x"], in["h"], in["c"])
		}
		batchFirst := boolOr(c, "batch_first", false)
		out, states := packed(nn.PackPadded(in["x"], c.Ints("lengths"), batchFirst), in["h"], in["c"])
		padded, _ := out.Pad(batchFirst, 0)
		return append([]*tensor.Tensor{padded}, states...)
	}}
}

func masks(c torchref.Case, in map[string]*tensor.Tensor) nn.AttentionMasks {
	return nn.AttentionMasks{AttnMask: in["attn_mask"], KeyPadding: in["key_padding_mask"],
		Causal: boolOr(c, "causal", false), PerHeadWeights: !boolOr(c, "average_attn_weights", true)}
}

func transformerLayer(c torchref.Case, opts ...tensor.Option) *nn.TransformerEncoderLayer {
	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout = c.Int("dim_feedforward"), c.Float("dropout")
	cfg.NormFirst, cfg.BatchFirst = boolOr(c, "norm_first", false), boolOr(c, "batch_first", false)
	if c.Has("activation") {
		cfg.Activation = c.String("activation")
	}
	return nn.NewTransformerEncoderLayer(c.Int("d_model"), c.Int("nhead"), cfg, opts...)
}

// layerBuilders builds each op of layers.json as PyTorch built it.
var layerBuilders = map[string]func(c torchref.Case, opts ...tensor.Option) layerRun{
	"batchnorm1d": func(c torchref.Case, o ...tensor.Option) layerRun {
		return batchNorm(c, nn.NewBatchNorm1d(c.Int("num_features"), o...))
	},
	"batchnorm2d": func(c torchref.Case, o ...tensor.Option) layerRun {
		return batchNorm(c, nn.NewBatchNorm2d(c.Int("num_features"), o...))
	},
	"groupnorm": func(c torchref.Case, o ...tensor.Option) layerRun {
		g := nn.NewGroupNorm(c.Int("num_groups"), c.Int("num_channels"), o...)
		g.Eps = attrOr(c, "eps", 1e-5)
		if !boolOr(c, "affine", true) {
			g.Weight, g.Bias = nil, nil
		}
		return layer(g)
	},
	"rnn_cell": func(c torchref.Case, o ...tensor.Option) layerRun {
		m := nn.NewRNNCell(c.Int("input_size"), c.Int("hidden_size"), o...)
		m.ReLU = c.String("nonlinearity") == "relu"
		return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor { return one(m.Forward(in["x"], in["h"])) }}
	},
	"gru_cell": func(c torchref.Case, o ...tensor.Option) layerRun {
		m := nn.NewGRUCell(c.Int("input_size"), c.Int("hidden_size"), o...)
		return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor { return one(m.Forward(in["x"], in["h"])) }}
	},
	"rnn": func(c torchref.Case, o ...tensor.Option) layerRun {
		relu := c.Has("nonlinearity") && c.String("nonlinearity") == "relu"
		m := nn.NewRNN(c.Int("input_size"), c.Int("hidden_size"), c.Int("num_layers"), relu, o...)
		stackOptions(c, &m.StackOptions)
		return recurrent(c, m, func(x, h, _ *tensor.Tensor) []*tensor.Tensor {
			out, hn := m.Forward(x, h)
			return []*tensor.Tensor{out, hn}
		}, func(x *nn.PackedSequence, h, _ *tensor.Tensor) (*nn.PackedSequence, []*tensor.Tensor) {
			out, hn := m.ForwardPacked(x, h)
			return out, []*tensor.Tensor{hn}
		})
	},
	"gru": func(c torchref.Case, o ...tensor.Option) layerRun {
		m := nn.NewGRU(c.Int("input_size"), c.Int("hidden_size"), c.Int("num_layers"), o...)
		stackOptions(c, &m.StackOptions)
		return recurrent(c, m, func(x, h, _ *tensor.Tensor) []*tensor.Tensor {
			out, hn := m.Forward(x, h)
			return []*tensor.Tensor{out, hn}
		}, func(x *nn.PackedSequence, h, _ *tensor.Tensor) (*nn.PackedSequence, []*tensor.Tensor) {
			out, hn := m.ForwardPacked(x, h)
			return out, []*tensor.Tensor{hn}
		})
	},
	"lstm": func(c torchref.Case, o ...tensor.Option) layerRun {
		m := nn.NewLSTM(c.Int("input_size"), c.Int("hidden_size"), c.Int("num_layers"), o...)
		stackOptions(c, &m.StackOptions)
		return recurrent(c, m, func(x, h, cell *tensor.Tensor) []*tensor.Tensor {
			out, hn, cn := m.Forward(x, h, cell)
			return []*tensor.Tensor{out, hn, cn}
		}, func(x *nn.PackedSequence, h, cell *tensor.Tensor) (*nn.PackedSequence, []*tensor.Tensor) {
			out, hn, cn := m.ForwardPacked(x, h, cell)
			return out, []*tensor.Tensor{hn, cn}
		})
	},
	"mha": func(c torchref.Case, o ...tensor.Option) layerRun {
		e := c.Int("embed_dim")
		m := nn.NewMultiheadAttentionKV(e, c.Int("num_heads"), int(attrOr(c, "kdim", float64(e))), int(attrOr(c, "vdim", float64(e))), boolOr(c, "bias", true), o...)
		m.BatchFirst = boolOr(c, "batch_first", false)
		return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor {
			q, k, v := in["query"], in["key"], in["value"]
			if x := in["x"]; x != nil {
				q, k, v = x, x, x
			}
			out, w := m.Forward(q, k, v, masks(c, in))
			return []*tensor.Tensor{out, w}
		}}
	},
	"transformer_encoder_layer": func(c torchref.Case, o ...tensor.Option) layerRun {
		m := transformerLayer(c, o...)
		return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor {
			return one(m.ForwardMasked(in["x"], masks(c, in)))
		}}
	},
	"transformer_encoder": func(c torchref.Case, o ...tensor.Option) layerRun {
		var norm *nn.LayerNormLayer
		if boolOr(c, "norm", false) {
			norm = nn.NewLayerNorm([]int{c.Int("d_model")}, o...)
		}
		m := nn.NewTransformerEncoder(transformerLayer(c, o...), c.Int("num_layers"), norm)
		return layerRun{m, func(in map[string]*tensor.Tensor) []*tensor.Tensor {
			return one(m.ForwardMasked(in["x"], masks(c, in)))
		}}
	},
	"gelu": func(c torchref.Case, _ ...tensor.Option) layerRun {
		return layer(nn.GELU{Tanh: c.String("approximate") == "tanh"})
	},
	"silu": func(c torchref.Case, _ ...tensor.Option) layerRun { return layer(nn.SiLU{}) },
	"leaky_relu": func(c torchref.Case, _ ...tensor.Option) layerRun {
		return layer(nn.LeakyReLU{NegativeSlope: c.Float("negative_slope")})
	},
}

// layerResult is a case's outputs (forward, then buffers) and the
// gradients of its inputs (nil where the case has none), on the host.
type layerResult struct {
	outs  []*tensor.Tensor
	grads []*tensor.Tensor
}

// refInput returns reference tensor r on the CPU, floats cast to dt.
func refInput(t *testing.T, r torchref.Tensor, dt tensor.DType) *tensor.Tensor {
	t.Helper()
	b, err := reftensor.Base(r)
	if err != nil {
		t.Fatal(err)
	}
	if b.DType().IsFloat() {
		b = b.Cast(dt)
	}
	return b
}

// runLayerCase builds c's module in dt, loads PyTorch's state by the
// state-dict names, moves it to dev, runs the train steps, the measured
// pass in c's mode and the backward pass, and returns the results
// copied to the CPU.
func runLayerCase(t *testing.T, c torchref.Case, dev tensor.Device, dt tensor.DType) layerResult {
	t.Helper()
	build := layerBuilders[c.Op]
	if build == nil {
		t.Fatalf("no builder for %s", c.Op)
	}
	run := build(c, tensor.Of(dt))
	args, state := strs(c.Attrs["args"]), strs(c.Attrs["state"])
	sd := nn.StateDict(run.m)
	if got := slices.Sorted(maps.Keys(sd)); !slices.Equal(got, slices.Sorted(slices.Values(state))) {
		t.Fatalf("state-dict names %q, PyTorch's %q", got, state)
	}
	var params, buffers []string // PyTorch's orders, which optimizers' state follows
	for i, name := range state {
		if c.Inputs[len(args)+i].RequiresGrad {
			params = append(params, name)
		} else {
			buffers = append(buffers, name)
		}
	}
	if got := names(nn.NamedParameters(run.m)); !slices.Equal(got, params) {
		t.Errorf("parameters in the order %q, PyTorch's %q", got, params)
	}
	if got := names(nn.NamedBuffers(run.m)); !slices.Equal(got, buffers) {
		t.Errorf("buffers in the order %q, PyTorch's %q", got, buffers)
	}
	for i, name := range state {
		src := refInput(t, c.Inputs[len(args)+i], dt)
		dst := sd[name]
		if !slices.Equal(src.Shape(), dst.Shape()) {
			t.Fatalf("%s: shape %v, PyTorch's %v", name, dst.Shape(), src.Shape())
		}
		tensor.NoGrad(func() { dst.CopyFrom(src.Cast(dst.DType())) })
	}
	nn.To(run.m, dev)
	in := map[string]*tensor.Tensor{}
	for i, name := range args {
		x := refInput(t, c.Inputs[i], dt).To(dev)
		if c.Inputs[i].RequiresGrad {
			x.SetRequiresGrad(true)
		}
		in[name] = x
	}
	nn.Train(run.m)
	for _, r := range c.Inputs[len(args)+len(state):] {
		run.forward(map[string]*tensor.Tensor{"x": refInput(t, r, dt).To(dev)})
	}
	if c.String("mode") == "eval" {
		nn.Eval(run.m)
	}
	outs := run.forward(in)
	sd = nn.StateDict(run.m)
	var res layerResult
	for _, o := range outs {
		res.outs = append(res.outs, o.Detach().To(tensor.CPU))
	}
	for _, name := range strs(c.Attrs["buffers_after"]) {
		res.outs = append(res.outs, sd[name].To(tensor.CPU))
	}
	var loss *tensor.Tensor
	for i, g := range c.GradOutputs {
		term := outs[i].Mul(refInput(t, g, dt).To(dev)).Sum()
		if loss == nil {
			loss = term
		} else {
			loss = loss.Add(term)
		}
	}
	autograd.Backward(loss)
	for i := range c.Inputs {
		var g *tensor.Tensor
		switch {
		case i < len(args):
			g = in[args[i]].Grad()
		case i < len(args)+len(state):
			g = sd[state[i-len(args)]].Grad()
		}
		if g != nil {
			g = g.To(tensor.CPU)
		}
		res.grads = append(res.grads, g)
	}
	return res
}

// TestTorchLayers runs every case of layers.json in float64 on the CPU:
// PyTorch's weights loaded through the state dict, outputs, running
// statistics, input and parameter gradients compared with PyTorch's.
func TestTorchLayers(t *testing.T) {
	worst := diffStats{}
	for _, c := range torchref.MustLoad(t, "layers") {
		t.Run(c.Name, func(t *testing.T) {
			res := runLayerCase(t, c, tensor.CPU, tensor.Float64)
			if len(res.outs) != len(c.Outputs) {
				t.Fatalf("%d outputs, PyTorch %d", len(res.outs), len(c.Outputs))
			}
			tl := tol{1e-11, 1e-9}
			for i, o := range res.outs {
				worst.add(c.Op+" fwd", compare(t, fmt.Sprintf("output[%d]", i), o, c.Outputs[i], tl))
			}
			for i, want := range c.Grads {
				switch {
				case want == nil:
				case res.grads[i] == nil:
					t.Errorf("input %d: no gradient, PyTorch has one", i)
				default:
					worst.add(c.Op+" bwd", compare(t, fmt.Sprintf("grad[%d]", i), res.grads[i], *want, tl))
				}
			}
		})
	}
	for _, op := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("%-32s max |diff| %.2e (rel %.2e)", op, worst[op][0], worst[op][1])
	}
}

// TestTorchLayersComplete fails when layers.json has an op without a
// builder here, or a builder has no case.
func TestTorchLayersComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range torchref.MustLoad(t, "layers") {
		seen[c.Op] = true
		if layerBuilders[c.Op] == nil {
			t.Errorf("case %s: op %q has no builder", c.Name, c.Op)
		}
	}
	for op := range layerBuilders {
		if !seen[op] {
			t.Errorf("builder %q has no case in layers.json", op)
		}
	}
}
