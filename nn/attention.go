package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// AttentionMasks are the optional masks of MultiheadAttention.Forward,
// as torch.nn.MultiheadAttention's keyword arguments. With L the target
// (query) length, S the source (key) length, N the batch and H the
// number of heads:
//
//   - AttnMask (attn_mask) is (L, S) or (N·H, L, S): a Bool mask where
//     true marks a position that may not be attended, or a float mask
//     added to the attention scores.
//   - KeyPadding (key_padding_mask) is (N, S): a Bool mask where true
//     marks a padding key that no query attends, or a float mask added
//     to the scores of each key.
//   - Causal masks every key after the query's position (j > i), as an
//     AttnMask of CausalMask(L, S) would; it combines with the others.
//   - PerHeadWeights returns the attention weights of each head,
//     (N, H, L, S), rather than their mean over the heads, (N, L, S)
//     (average_attn_weights=False).
//   - SkipWeights returns no weights (nil; need_weights=False).
//
// A query row whose every key is masked gets NaN weights and output, as
// in PyTorch.
type AttentionMasks struct {
	AttnMask, KeyPadding *tensor.Tensor
	Causal               bool
	PerHeadWeights       bool
	SkipWeights          bool
}

// CausalMask returns the Bool (L, S) mask that is true where key j lies
// after query i (j > i): the upper triangle that
// nn.Transformer.generate_square_subsequent_mask fills with -inf. opts
// set the device.
func CausalMask(l, s int, opts ...tensor.Option) *tensor.Tensor {
	checkSizes("CausalMask", l, s)
	opts = append(slices.Clone(opts), tensor.Of(tensor.Int32))
	rows := tensor.Arange(0, float64(l), 1, opts...).Unsqueeze(1)
	cols := tensor.Arange(0, float64(s), 1, opts...).Unsqueeze(0)
	return cols.Gt(rows)
}

// MultiheadAttention is torch.nn.MultiheadAttention without bias_k,
// bias_v or zero attention. Each head h attends with queries, keys and
// values projected by the rows of InProjWeight (3·E, E) and InProjBias
// (3·E) (q, k, v stacked, as PyTorch) or, when keys and values have
// their own sizes (kdim, vdim ≠ E), by QProjWeight (E, E), KProjWeight
// (E, kdim) and VProjWeight (E, vdim) with InProjWeight nil; then scaled
// dot products and a softmax over the keys; OutProj (E → E) mixes the
// heads:
//
//	head_h = softmax(q_h·k_hᵀ/√(E/H) + masks)·v_h
//	out = concat(head_1, …, head_H)·W_oᵀ + b_o
//
// Dropout (p = Dropout, from Gen or the default generator) applies to
// the attention weights in training. Its state-dict names are PyTorch's:
// "in_proj_weight" (or "q_proj_weight", "k_proj_weight",
// "v_proj_weight"), "in_proj_bias", "out_proj.weight", "out_proj.bias".
type MultiheadAttention struct {
	EmbedDim, NumHeads                    int
	InProjWeight, InProjBias              *tensor.Tensor
	QProjWeight, KProjWeight, VProjWeight *tensor.Tensor
	OutProj                               *LinearLayer
	Dropout                               float64
	BatchFirst, Training                  bool
	Gen                                   *tensor.Generator // nil: the default generator
}

// NewMultiheadAttention returns torch.nn.MultiheadAttention(embedDim,
// numHeads, bias=bias): no dropout, inputs (seq, batch, E) (set
// BatchFirst for (batch, seq, E)), in training mode, initialised as
// PyTorch: InProjWeight Xavier-uniform, U(±√(6/(E + 3E))); InProjBias
// and OutProj.Bias zeros; OutProj.Weight as NewLinear, U(±1/√E). With
// bias false both biases are nil. opts set the dtype, device and
// generator. It panics with ErrArgument unless embedDim > 0 and numHeads
// divides it.
func NewMultiheadAttention(embedDim, numHeads int, bias bool, opts ...tensor.Option) *MultiheadAttention {
	return NewMultiheadAttentionKV(embedDim, numHeads, embedDim, embedDim, bias, opts...)
}

// NewMultiheadAttentionKV is NewMultiheadAttention with keys of kdim and
// values of vdim features (kdim=, vdim= in PyTorch). When either differs
// from embedDim the projections are separate, each Xavier-uniform:
// QProjWeight U(±√(6/2E)), KProjWeight U(±√(6/(E+kdim))), VProjWeight
// U(±√(6/(E+vdim))). It panics as NewMultiheadAttention, and with
// ErrArgument for a kdim or vdim below 1.
func NewMultiheadAttentionKV(embedDim, numHeads, kdim, vdim int, bias bool, opts ...tensor.Option) *MultiheadAttention {
	if embedDim <= 0 || numHeads <= 0 || embedDim%numHeads != 0 || kdim <= 0 || vdim <= 0 {
		fail("NewMultiheadAttention", tensor.ErrArgument, fmt.Sprintf("embed_dim %d must be positive and divisible by num_heads %d; kdim %d and vdim %d positive", embedDim, numHeads, kdim, vdim))
	}
	e := embedDim
	xavier := func(out, in int) *tensor.Tensor {
		return uniformParam([]int{out, in}, math.Sqrt(6/(float64(out)+float64(in))), opts)
	}
	m := &MultiheadAttention{EmbedDim: e, NumHeads: numHeads, Training: true}
	if kdim == e && vdim == e {
		m.InProjWeight = xavier(3*e, e)
	} else {
		m.QProjWeight, m.KProjWeight, m.VProjWeight = xavier(e, e), xavier(e, kdim), xavier(e, vdim)
	}
	m.OutProj = NewLinear(e, e, opts...)
	if bias {
		m.InProjBias = tensor.Zeros([]int{3 * e}, opts...).SetRequiresGrad(true)
		m.OutProj.Bias = tensor.Zeros([]int{e}, opts...).SetRequiresGrad(true)
	} else {
		m.OutProj.Bias = nil
	}
	return m
}

// Forward attends from query to key and value and returns the output
// and the attention weights. Batched inputs are query (L, N, E), key
// (S, N, kdim) and value (S, N, vdim), or (N, L, E), (N, S, kdim) and
// (N, S, vdim) with BatchFirst; unbatched ones have no N. out has the
// query's shape; weights are (N, L, S) averaged over the heads, or
// (N, H, L, S) with masks.PerHeadWeights, without N for unbatched
// inputs, or nil with masks.SkipWeights. When query, key and value are
// one tensor (self-attention) the three packed projections are one
// matrix product. It panics with ErrShape for mismatched shapes or masks,
// ErrDType for a mask neither Bool nor float, and ErrArgument for
// missing or mis-shaped weights.
func (m *MultiheadAttention) Forward(query, key, value *tensor.Tensor, masks AttentionMasks) (out, weights *tensor.Tensor) {
	receiver("MultiheadAttention", m)
	const op = "MultiheadAttention"
	need(op, "query, key, value", query, key, value)
	kdim, vdim := m.check()
	e, h := m.EmbedDim, m.NumHeads
	batched := query.Dim() == 3
	if !batched && query.Dim() != 2 || key.Dim() != query.Dim() || value.Dim() != query.Dim() ||
		!slices.Equal(key.Shape()[:key.Dim()-1], value.Shape()[:value.Dim()-1]) ||
		query.Size(-1) != e || key.Size(-1) != kdim || value.Size(-1) != vdim {
		fail(op, tensor.ErrShape, fmt.Sprintf("want query (L, N, %d), key (S, N, %d) and value (S, N, %d) (batch first: (N, ·, ·); unbatched: no N)", e, kdim, vdim), query, key, value)
	}
	q, k, v := query, key, value
	switch {
	case !batched:
		q, k, v = q.Unsqueeze(0), k.Unsqueeze(0), v.Unsqueeze(0)
	case !m.BatchFirst:
		q, k, v = q.Transpose(0, 1), k.Transpose(0, 1), v.Transpose(0, 1)
	}
	if q.Size(0) != k.Size(0) {
		fail(op, tensor.ErrShape, "query and key must have the same batch size", query, key)
	}
	n, l, s := q.Size(0), q.Size(1), k.Size(1)
	q, k, v = m.project(q, k, v, query == key && key == value)
	d := e / h
	heads := func(t *tensor.Tensor) *tensor.Tensor { return t.Reshape(n, t.Size(1), h, d).Transpose(1, 2) }
	scores := heads(q).DivScalar(math.Sqrt(float64(d))).MatMul(heads(k).Transpose(2, 3)) // (N, H, L, S)
	scores = m.mask(scores, masks, n, l, s)
	attn := Dropout(scores.Softmax(-1), m.Dropout, m.Training, m.Gen)
	out = m.OutProj.Forward(attn.MatMul(heads(v)).Transpose(1, 2).Reshape(n, l, e))
	switch {
	case masks.SkipWeights:
	case masks.PerHeadWeights:
		weights = attn
	default:
		weights = attn.MeanDims([]int{1}, false)
	}
	switch {
	case !batched:
		out = out.Squeeze(0)
		if weights != nil {
			weights = weights.Squeeze(0)
		}
	case !m.BatchFirst:
		out = out.Transpose(0, 1)
	}
	return out, weights
}

// check panics with ErrArgument unless m's sizes and tensors fit
// together, and returns the key and value sizes.
func (m *MultiheadAttention) check() (kdim, vdim int) {
	const op = "MultiheadAttention"
	e, h := m.EmbedDim, m.NumHeads
	if e <= 0 || h <= 0 || e%h != 0 {
		fail(op, tensor.ErrArgument, fmt.Sprintf("embed_dim %d must be positive and divisible by num_heads %d", e, h))
	}
	if m.OutProj == nil || m.OutProj.Weight == nil || !slices.Equal(m.OutProj.Weight.Shape(), []int{e, e}) {
		fail(op, tensor.ErrArgument, fmt.Sprintf("out_proj.weight must be [%d %d]", e, e))
	}
	if b := m.InProjBias; b != nil && !slices.Equal(b.Shape(), []int{3 * e}) {
		fail(op, tensor.ErrArgument, fmt.Sprintf("in_proj_bias must be [%d]", 3*e), b)
	}
	if w := m.InProjWeight; w != nil {
		if !slices.Equal(w.Shape(), []int{3 * e, e}) {
			fail(op, tensor.ErrArgument, fmt.Sprintf("in_proj_weight must be [%d %d]", 3*e, e), w)
		}
		return e, e
	}
	q, k, v := m.QProjWeight, m.KProjWeight, m.VProjWeight
	if q == nil || k == nil || v == nil || !slices.Equal(q.Shape(), []int{e, e}) || k.Dim() != 2 || k.Size(0) != e || v.Dim() != 2 || v.Size(0) != e {
		fail(op, tensor.ErrArgument, fmt.Sprintf("need in_proj_weight [%d %d], or q_proj_weight [%d %d], k_proj_weight [%d kdim] and v_proj_weight [%d vdim]", 3*e, e, e, e, e, e), q, k, v)
	}
	return k.Size(1), v.Size(1)
}

// project applies the input projections to q, k, v (N, ·, ·): as one
// product when they are the same tensor and the weights are packed.
func (m *MultiheadAttention) project(q, k, v *tensor.Tensor, self bool) (pq, pk, pv *tensor.Tensor) {
	if self && m.InProjWeight != nil {
		p := Linear(q, m.InProjWeight, m.InProjBias).Chunk(3, -1)
		return p[0], p[1], p[2]
	}
	e := m.EmbedDim
	part := func(x *tensor.Tensor, i int, w *tensor.Tensor) *tensor.Tensor {
		var b *tensor.Tensor
		if m.InProjBias != nil {
			b = m.InProjBias.Narrow(0, i*e, e)
		}
		if m.InProjWeight != nil {
			w = m.InProjWeight.Narrow(0, i*e, e)
		}
		return Linear(x, w, b)
	}
	return part(q, 0, m.QProjWeight), part(k, 1, m.KProjWeight), part(v, 2, m.VProjWeight)
}

// mask applies masks to scores (N, H, L, S).
func (m *MultiheadAttention) mask(scores *tensor.Tensor, masks AttentionMasks, n, l, s int) *tensor.Tensor {
	const op = "MultiheadAttention"
	apply := func(what string, mk *tensor.Tensor, shape ...int) {
		switch {
		case mk.DType() == tensor.Bool:
			scores = scores.MaskedFill(mk.Reshape(shape...), math.Inf(-1))
		case mk.DType().IsFloat():
			scores = scores.Add(mk.Reshape(shape...).Cast(scores.DType()))
		default:
			fail(op, tensor.ErrDType, what+" must be Bool or float", mk)
		}
	}
	if a := masks.AttnMask; a != nil {
		switch {
		case slices.Equal(a.Shape(), []int{l, s}):
			apply("attn_mask", a, l, s)
		case slices.Equal(a.Shape(), []int{n * m.NumHeads, l, s}):
			apply("attn_mask", a, n, m.NumHeads, l, s)
		default:
			fail(op, tensor.ErrShape, fmt.Sprintf("attn_mask must be (%d, %d) or (%d, %d, %d)", l, s, n*m.NumHeads, l, s), a)
		}
	}
	if kp := masks.KeyPadding; kp != nil {
		if !slices.Equal(kp.Shape(), []int{n, s}) && !(n == 1 && slices.Equal(kp.Shape(), []int{s})) {
			fail(op, tensor.ErrShape, fmt.Sprintf("key_padding_mask must be (%d, %d)", n, s), kp)
		}
		apply("key_padding_mask", kp, n, 1, 1, s)
	}
	if masks.Causal {
		scores = scores.MaskedFill(CausalMask(l, s, tensor.On(scores.Device()), tensor.In(scores.Context())), math.Inf(-1))
	}
	return scores
}

// Slots returns "in_proj_weight", "q_proj_weight", "k_proj_weight",
// "v_proj_weight" and "in_proj_bias", PyTorch's order (nil ones are
// left out, as PyTorch's None).
func (m *MultiheadAttention) Slots() []Slot {
	receiver("MultiheadAttention.Slots", m)
	return []Slot{Param("in_proj_weight", &m.InProjWeight), Param("q_proj_weight", &m.QProjWeight),
		Param("k_proj_weight", &m.KProjWeight), Param("v_proj_weight", &m.VProjWeight), Param("in_proj_bias", &m.InProjBias)}
}

// Children returns OutProj as "out_proj".
func (m *MultiheadAttention) Children() []Child {
	receiver("MultiheadAttention.Children", m)
	return []Child{{Name: "out_proj", Module: m.OutProj}}
}

// SetTraining switches attention dropout on (training) or off.
func (m *MultiheadAttention) SetTraining(on bool) {
	receiver("MultiheadAttention.SetTraining", m)
	m.Training = on
}
