package nn

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/tessera-ml/tessera/tensor"
)

// TransformerConfig holds the arguments of
// torch.nn.TransformerEncoderLayer after d_model and nhead.
// DefaultTransformerConfig gives PyTorch's defaults; the zero value is
// not one.
type TransformerConfig struct {
	DimFeedforward int     // width of the feed-forward block (2048)
	Dropout        float64 // after attention, inside and after the feed-forward block (0.1)
	Activation     string  // "relu" (the default) or "gelu"
	LayerNormEps   float64 // 1e-5
	BatchFirst     bool    // inputs (batch, seq, d_model) rather than (seq, batch, d_model)
	NormFirst      bool    // pre-norm (true) or post-norm (PyTorch's default, false)
	Bias           bool    // biases in the linear and attention projections (true; absent from PyTorch 1.13's arguments)
}

// DefaultTransformerConfig returns PyTorch's defaults:
// dim_feedforward 2048, dropout 0.1, relu, layer_norm_eps 1e-5,
// batch_first and norm_first false, biases on.
func DefaultTransformerConfig() TransformerConfig {
	return TransformerConfig{DimFeedforward: 2048, Dropout: 0.1, Activation: "relu", LayerNormEps: 1e-5, Bias: true}
}

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer:
// self-attention and a feed-forward block, each with a residual
// connection and a layer norm, after the block (post-norm) or, with
// NormFirst, before it (pre-norm, as GPT-2):
//
//	pre-norm:  x = x + SA(norm1(x));  x = x + FF(norm2(x))
//	post-norm: x = norm1(x + SA(x));  x = norm2(x + FF(x))
//	SA(x) = dropout1(self_attn(x, x, x))
//	FF(x) = dropout2(linear2(dropout(activation(linear1(x)))))
//
// Its children carry PyTorch's names, so its state dict reads
// "self_attn.in_proj_weight", "linear1.weight", "norm2.bias", ….
type TransformerEncoderLayer struct {
	SelfAttn           *MultiheadAttention
	Linear1, Linear2   *LinearLayer
	Norm1, Norm2       *LayerNormLayer
	Drop, Drop1, Drop2 *DropoutLayer
	Activation         Layer
	NormFirst          bool
	config             TransformerConfig
	dModel, nHead      int
	opts               []tensor.Option
}

// NewTransformerEncoderLayer returns a TransformerEncoderLayer of width
// dModel with nHead heads and cfg, initialised as PyTorch: self_attn as
// NewMultiheadAttention, linear1 (dModel → DimFeedforward) and linear2
// (back) as NewLinear, the norms ones and zeros. opts set the dtype,
// device and generator. It panics with ErrArgument when nHead does not
// divide dModel, a size is not positive, the dropout is outside [0, 1]
// or the activation is neither "relu" nor "gelu".
func NewTransformerEncoderLayer(dModel, nHead int, cfg TransformerConfig, opts ...tensor.Option) *TransformerEncoderLayer {
	const op = "NewTransformerEncoderLayer"
	if cfg.DimFeedforward <= 0 {
		fail(op, tensor.ErrArgument, fmt.Sprintf("dim_feedforward must be positive, got %d", cfg.DimFeedforward))
	}
	act := activationByName(op, cfg.Activation)
	l := &TransformerEncoderLayer{
		SelfAttn:   NewMultiheadAttention(dModel, nHead, cfg.Bias, opts...),
		Linear1:    NewLinear(dModel, cfg.DimFeedforward, opts...),
		Linear2:    NewLinear(cfg.DimFeedforward, dModel, opts...),
		Norm1:      NewLayerNorm([]int{dModel}, opts...),
		Norm2:      NewLayerNorm([]int{dModel}, opts...),
		Drop:       NewDropout(cfg.Dropout),
		Drop1:      NewDropout(cfg.Dropout),
		Drop2:      NewDropout(cfg.Dropout),
		Activation: act,
		NormFirst:  cfg.NormFirst,
		config:     cfg,
		dModel:     dModel,
		nHead:      nHead,
		opts:       opts,
	}
	l.SelfAttn.Dropout, l.SelfAttn.BatchFirst = cfg.Dropout, cfg.BatchFirst
	if !cfg.Bias {
		l.Linear1.Bias, l.Linear2.Bias = nil, nil
	}
	l.Norm1.Eps, l.Norm2.Eps = cfg.LayerNormEps, cfg.LayerNormEps
	return l
}

// Forward returns the layer applied to x, (seq, batch, dModel) or
// (batch, seq, dModel) with BatchFirst, without masks; the result has
// x's shape. A nil dropout layer means none; any other nil part panics
// with ErrArgument.
func (l *TransformerEncoderLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	return l.ForwardMasked(x, AttentionMasks{})
}

// ForwardMasked is Forward with attention masks (src_mask as
// masks.AttnMask or masks.Causal, src_key_padding_mask as
// masks.KeyPadding); PerHeadWeights and SkipWeights are ignored. It
// panics as MultiheadAttention.Forward.
func (l *TransformerEncoderLayer) ForwardMasked(x *tensor.Tensor, masks AttentionMasks) *tensor.Tensor {
	receiver("TransformerEncoderLayer", l)
	need("TransformerEncoderLayer", "x", x)
	return l.forward(x, func(x *tensor.Tensor) *tensor.Tensor {
		masks.SkipWeights = true
		out, _ := l.SelfAttn.Forward(x, x, x, masks)
		return out
	})
}

// forward runs the layer on x with attend as its self-attention.
func (l *TransformerEncoderLayer) forward(x *tensor.Tensor, attend func(x *tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
	if l.SelfAttn == nil || l.Linear1 == nil || l.Linear2 == nil || l.Norm1 == nil || l.Norm2 == nil || l.Activation == nil {
		fail("TransformerEncoderLayer", tensor.ErrArgument, "self_attn, linear1, linear2, norm1, norm2 and the activation must not be nil", x)
	}
	drop := func(d *DropoutLayer, x *tensor.Tensor) *tensor.Tensor {
		if d == nil {
			return x
		}
		return d.Forward(x)
	}
	sa := func(x *tensor.Tensor) *tensor.Tensor { return drop(l.Drop1, attend(x)) }
	ff := func(x *tensor.Tensor) *tensor.Tensor {
		return drop(l.Drop2, l.Linear2.Forward(drop(l.Drop, l.Activation.Forward(l.Linear1.Forward(x)))))
	}
	if l.NormFirst {
		x = x.Add(sa(l.Norm1.Forward(x)))
		return x.Add(ff(l.Norm2.Forward(x)))
	}
	x = l.Norm1.Forward(x.Add(sa(x)))
	return l.Norm2.Forward(x.Add(ff(x)))
}

// Slots returns nil: the layer's tensors belong to its children.
func (l *TransformerEncoderLayer) Slots() []Slot { return nil }

// Children returns "self_attn", "linear1", "dropout", "linear2",
// "norm1", "norm2", "dropout1", "dropout2", PyTorch's names and order.
func (l *TransformerEncoderLayer) Children() []Child {
	receiver("TransformerEncoderLayer.Children", l)
	return []Child{{"self_attn", l.SelfAttn}, {"linear1", l.Linear1}, {"dropout", l.Drop}, {"linear2", l.Linear2},
		{"norm1", l.Norm1}, {"norm2", l.Norm2}, {"dropout1", l.Drop1}, {"dropout2", l.Drop2}}
}

// clone returns a new layer of l's configuration holding copies of l's
// parameters, on their device (PyTorch's copy.deepcopy in _get_clones).
func (l *TransformerEncoderLayer) clone() *TransformerEncoderLayer {
	c := NewTransformerEncoderLayer(l.dModel, l.nHead, l.config, l.opts...)
	c.Activation, c.NormFirst = l.Activation, l.NormFirst
	src := StateDict(l)
	for prefix, m := range NamedModules(c) {
		for _, s := range m.Slots() {
			name := join(prefix, s.Name)
			t := src[name]
			if (t == nil) != (*s.Ptr == nil) {
				fail("NewTransformerEncoder", tensor.ErrArgument, fmt.Sprintf("the layer to copy and a new one differ in %q", name))
			}
			if t != nil {
				t.Context().NoGrad(func() { *s.Ptr = t.Detach().Clone().Keep().SetRequiresGrad(t.RequiresGrad()) })
			}
		}
	}
	return c
}

// TransformerEncoder is torch.nn.TransformerEncoder: Layers applied in
// turn, then Norm when it is not nil. Its state dict reads
// "layers.0.self_attn.in_proj_weight", …, "norm.weight".
type TransformerEncoder struct {
	Layers []*TransformerEncoderLayer
	Norm   *LayerNormLayer
}

// NewTransformerEncoder returns torch.nn.TransformerEncoder(layer,
// numLayers, norm): numLayers copies of layer (each starting from
// layer's parameters, as PyTorch deep-copies it), then norm (nil for
// none). It panics with ErrArgument when layer is nil or numLayers < 1,
// and with ErrOutOfMemory when the copies would exceed the CPU budget.
func NewTransformerEncoder(layer *TransformerEncoderLayer, numLayers int, norm *LayerNormLayer) *TransformerEncoder {
	if layer == nil || numLayers < 1 {
		fail("NewTransformerEncoder", tensor.ErrArgument, fmt.Sprintf("need a layer and at least one copy of it, got %d", numLayers))
	}
	bytes := big.NewInt(0)
	for _, t := range StateDict(layer) {
		bytes.Add(bytes, big.NewInt(int64(t.Numel()*t.DType().Size())))
	}
	if budget, err := tensor.CPUBudget(); err == nil && bytes.Mul(bytes, big.NewInt(int64(numLayers))).Cmp(big.NewInt(budget)) > 0 {
		fail("NewTransformerEncoder", tensor.ErrOutOfMemory, fmt.Sprintf("%d copies of the layer (%v bytes) exceed the CPU budget of %d bytes", numLayers, bytes, budget))
	}
	e := &TransformerEncoder{Norm: norm}
	for range numLayers {
		e.Layers = append(e.Layers, layer.clone())
	}
	return e
}

// Forward returns the encoder applied to x without masks: x's shape.
func (e *TransformerEncoder) Forward(x *tensor.Tensor) *tensor.Tensor {
	return e.ForwardMasked(x, AttentionMasks{})
}

// ForwardMasked is Forward with masks applied in every layer (mask and
// src_key_padding_mask in PyTorch). It panics with ErrArgument for a nil
// layer and as MultiheadAttention.Forward.
func (e *TransformerEncoder) ForwardMasked(x *tensor.Tensor, masks AttentionMasks) *tensor.Tensor {
	receiver("TransformerEncoder", e)
	return e.each(x, func(l *TransformerEncoderLayer, x *tensor.Tensor) *tensor.Tensor { return l.ForwardMasked(x, masks) })
}

// each applies layer to x with every layer in turn, then the norm.
func (e *TransformerEncoder) each(x *tensor.Tensor, layer func(l *TransformerEncoderLayer, x *tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
	for i, l := range e.Layers {
		if l == nil {
			fail("TransformerEncoder", tensor.ErrArgument, fmt.Sprintf("layer %d is nil", i))
		}
		x = layer(l, x)
	}
	if e.Norm != nil {
		x = e.Norm.Forward(x)
	}
	return x
}

// Slots returns nil.
func (e *TransformerEncoder) Slots() []Slot { return nil }

// Children returns the layers as "layers" (whose children are "0",
// "1", …, as a torch.nn.ModuleList) and Norm as "norm" when not nil.
func (e *TransformerEncoder) Children() []Child {
	receiver("TransformerEncoder.Children", e)
	out := []Child{{Name: "layers", Module: moduleList[*TransformerEncoderLayer](e.Layers)}}
	if e.Norm != nil {
		out = append(out, Child{Name: "norm", Module: e.Norm})
	}
	return out
}

// moduleList is torch.nn.ModuleList: children named by their indices.
type moduleList[M Module] []M

func (moduleList[M]) Slots() []Slot { return nil }

func (l moduleList[M]) Children() []Child {
	out := make([]Child, len(l))
	for i, m := range l {
		out[i] = Child{Name: strconv.Itoa(i), Module: m}
	}
	return out
}
