package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// ForwardPacked is self-attention over a ragged batch: x (N, E) holds
// sequences of different lengths packed one after another, sequence s
// being rows offsets[s] to offsets[s+1]-1 (tensor.Offsets builds them
// from lengths; nil means one sequence), and each row attends only to
// the rows of its own sequence (up to itself when causal), with no
// padding and no score matrix (tensor.ScaledDotProductAttention). The
// result is (N, E): what Forward returns for each sequence alone, or for
// the padded batch with a key-padding mask, at its rows. Dropout on the
// attention weights is not supported: in training with Dropout > 0 it
// panics with ErrArgument, as it does for keys or values of their own
// sizes (kdim, vdim ≠ E); it panics with ErrShape unless x is (N, E),
// and as ScaledDotProductAttention for bad offsets.
func (m *MultiheadAttention) ForwardPacked(x *tensor.Tensor, offsets []int, causal bool) *tensor.Tensor {
	receiver("MultiheadAttention", m)
	const op = "MultiheadAttention.ForwardPacked"
	need(op, "x", x)
	kdim, vdim := m.check()
	e, h := m.EmbedDim, m.NumHeads
	if kdim != e || vdim != e {
		fail(op, tensor.ErrArgument, fmt.Sprintf("self-attention needs kdim and vdim equal to embed_dim %d, got %d and %d", e, kdim, vdim))
	}
	if m.Training && m.Dropout > 0 {
		fail(op, tensor.ErrArgument, fmt.Sprintf("attention dropout %v is not supported on packed rows (set Dropout to 0 or call SetTraining(false))", m.Dropout))
	}
	if x.Dim() != 2 || x.Size(1) != e {
		fail(op, tensor.ErrShape, fmt.Sprintf("want packed rows (N, %d)", e), x)
	}
	n := x.Size(0)
	q, k, v := m.project(x, x, x, true)
	heads := func(t *tensor.Tensor) *tensor.Tensor { return t.Reshape(n, h, e/h) }
	att := tensor.ScaledDotProductAttention(heads(q), heads(k), heads(v), tensor.AttentionOptions{Offsets: offsets, Causal: causal})
	return m.OutProj.Forward(att.Reshape(n, e))
}

// ForwardPacked is the layer over a ragged batch of sequences packed
// one after another in x (N, dModel), with offsets as
// MultiheadAttention.ForwardPacked: self-attention stays within each
// sequence (and causal when asked), everything else works row by row.
// The result is (N, dModel). It panics as ForwardMasked and
// MultiheadAttention.ForwardPacked.
func (l *TransformerEncoderLayer) ForwardPacked(x *tensor.Tensor, offsets []int, causal bool) *tensor.Tensor {
	receiver("TransformerEncoderLayer", l)
	need("TransformerEncoderLayer", "x", x)
	return l.forward(x, func(x *tensor.Tensor) *tensor.Tensor { return l.SelfAttn.ForwardPacked(x, offsets, causal) })
}

// ForwardPacked is the encoder over a ragged batch packed in x (N,
// dModel), every layer attending within the sequences that offsets
// delimit (TransformerEncoderLayer.ForwardPacked).
func (e *TransformerEncoder) ForwardPacked(x *tensor.Tensor, offsets []int, causal bool) *tensor.Tensor {
	receiver("TransformerEncoder", e)
	return e.each(x, func(l *TransformerEncoderLayer, x *tensor.Tensor) *tensor.Tensor {
		return l.ForwardPacked(x, offsets, causal)
	})
}
