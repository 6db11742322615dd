package tensor

import (
	"fmt"
	"math"
	"slices"
)

// AttentionOptions configure ScaledDotProductAttention.
type AttentionOptions struct {
	// Offsets splits the N packed rows into segments (sequences), as
	// FlashAttention's cu_seqlens: segment s is rows Offsets[s] to
	// Offsets[s+1]-1, Offsets starting at 0, never decreasing (a segment
	// may be empty) and ending at N. nil means one segment of all N
	// rows. Offsets(lengths...) builds it from sequence lengths.
	Offsets []int
	// Causal lets row i of a segment attend only to the rows of its
	// segment up to and including i (is_causal in PyTorch).
	Causal bool
	// Scale multiplies the scores q·k; 0 means 1/√D.
	Scale float64
}

// Offsets returns the offsets of segments of the given lengths packed
// one after another: 0, l0, l0+l1, ..., as AttentionOptions.Offsets
// wants. It panics with ErrArgument for a negative length or lengths
// whose sum overflows an int.
func Offsets(lengths ...int) []int {
	out := make([]int, len(lengths)+1)
	for i, l := range lengths {
		if l < 0 || out[i] > math.MaxInt-l {
			failf("Offsets", ErrArgument, nil, "length %d at %d is negative or takes the sum past MaxInt", l, i)
		}
		out[i+1] = out[i] + l
	}
	return out
}

// attnShape is one attention's geometry, as the backends take it: N rows
// of H heads of D values, the longest segment, the scale and the mask.
type attnShape struct {
	n, h, d, maxSpan int
	scale            float64
	causal           bool
}

// ScaledDotProductAttention returns softmax(Scale·QKᵀ)·V computed per
// segment of packed rows, as FlashAttention's varlen kernels and
// PyTorch's scaled_dot_product_attention on nested tensors do: q, k and
// v are (N, H, D), the rows of every sequence (segment) packed one
// after another and H heads of D values each, and row i of the result
// (N, H, D) is, per head,
//
//	out[i] = Σ_j softmax_j(Scale·q[i]·k[j]) v[j]
//
// over the rows j of i's segment (j ≤ i when o.Causal). No score matrix
// is formed: each row streams over its segment's keys with an online
// softmax and keeps only its logsumexp for the backward, which
// recomputes the weights. It runs a fixed number of kernels whatever the
// number of segments (more only for segments longer than a GPU kernel's
// loop budget). Dense batched attention (B, L, H, D) is the case of B
// equal segments: reshape to (B·L, H, D) with Offsets of B lengths L.
// Integer inputs are computed in Float32.
//
// It panics with ErrShape when q is not 3-D or k and v differ from its
// shape, ErrDevice when they are on different devices, and ErrArgument
// for bad offsets (not starting at 0, decreasing, or not ending at N)
// or a scale that is not finite.
func ScaledDotProductAttention(q, k, v *Tensor, o AttentionOptions) *Tensor {
	const op = "ScaledDotProductAttention"
	argsNonNil(op, 1, q, k, v)
	a, q, k, v := attentionArgs(op, q, k, v, o)
	out := newTensor(q.dtype, q.shape, q.Device())
	lse := newTensor(q.dtype, q.shape[:2], q.Device())
	seg := segTable(o.Offsets, a.n, q.Device())
	defer seg.Release()
	backendOf(q.Device()).attention(out, lse, q, k, v, seg, a)
	settle(lse, []*Tensor{q, k, v}, nil)
	return record(out, OpScaledDotProductAttention, Attrs{Offsets: clone(o.Offsets), Causal: a.causal, Scalars: []float64{a.scale}, Index: lse}, q, k, v)
}

// ScaledDotProductAttentionBackward returns the gradients of q, k and v
// for the gradient g of out = ScaledDotProductAttention(q, k, v, o),
// given out and lse, the logsumexp of each row's scaled scores (N, H)
// that the forward recorded (its Node's Attrs.Index). It recomputes the
// attention weights from q, k and lse, never forming a score matrix, in
// a fixed number of kernels. Autograd's rule calls it; it records no
// graph (differentiating it again goes through autograd's composite
// rule). It panics as ScaledDotProductAttention, and with ErrShape when
// out or g differ from q's shape or lse is not (N, H).
func ScaledDotProductAttentionBackward(q, k, v, out, lse, g *Tensor, o AttentionOptions) (dq, dk, dv *Tensor) {
	const op = "ScaledDotProductAttentionBackward"
	argsNonNil(op, 1, q, k, v, out, lse, g)
	a, q, k, v := attentionArgs(op, q, k, v, o)
	out, g = out.Cast(q.dtype).Contiguous(), g.Cast(q.dtype).Contiguous()
	lse = lse.Cast(q.dtype).Contiguous()
	for _, t := range []*Tensor{out, g, lse} {
		t.storage(op)
		if t.Device() != q.Device() {
			fail(op, ErrDevice, "operands are on different devices", q, t)
		}
	}
	if !slices.Equal(out.shape, q.shape) || !slices.Equal(g.shape, q.shape) || !slices.Equal(lse.shape, q.shape[:2]) {
		fail(op, ErrShape, "out and g must have q's shape (N, H, D) and lse (N, H)", q, out, g, lse)
	}
	res := newTensor(q.dtype, append([]int{3}, q.shape...), q.Device())
	seg := segTable(o.Offsets, a.n, q.Device())
	defer seg.Release()
	backendOf(q.Device()).attentionBackward(res, q, k, v, out, lse, g, seg, a)
	res = record(res, OpScaledDotProductAttentionBackward, Attrs{Offsets: clone(o.Offsets), Causal: a.causal, Scalars: []float64{a.scale}, Index: lse}, q, k, v, out, g)
	return res.Select(0, 0), res.Select(0, 1), res.Select(0, 2)
}

// attentionArgs checks q, k, v and o for op and returns the geometry and
// the operands cast to their float type, contiguous.
func attentionArgs(op string, q, k, v *Tensor, o AttentionOptions) (attnShape, *Tensor, *Tensor, *Tensor) {
	for _, t := range []*Tensor{q, k, v} {
		t.storage(op)
	}
	if q.Device() != k.Device() || q.Device() != v.Device() {
		fail(op, ErrDevice, "q, k and v are on different devices", q, k, v)
	}
	if q.Dim() != 3 || !slices.Equal(k.shape, q.shape) || !slices.Equal(v.shape, q.shape) {
		fail(op, ErrShape, "want q, k and v of one shape (N, H, D)", q, k, v)
	}
	n, h, d := q.shape[0], q.shape[1], q.shape[2]
	if h < 1 || d < 1 {
		fail(op, ErrShape, "want at least one head of at least one value", q, k, v)
	}
	scale := o.Scale
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(d))
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		failf(op, ErrArgument, []*Tensor{q}, "scale %v is not finite", o.Scale)
	}
	maxSpan, err := checkOffsets(o.Offsets, n)
	if err != "" {
		fail(op, ErrArgument, err, q)
	}
	dt := floatType(PromoteTypes(PromoteTypes(q.dtype, k.dtype), v.dtype))
	q, k, v = q.Cast(dt).Contiguous(), k.Cast(dt).Contiguous(), v.Cast(dt).Contiguous()
	return attnShape{n: n, h: h, d: d, maxSpan: maxSpan, scale: scale, causal: o.Causal}, q, k, v
}

// checkOffsets returns the longest segment of offsets over n rows, or
// what is wrong with them.
func checkOffsets(offsets []int, n int) (int, string) {
	if offsets == nil {
		return n, ""
	}
	if len(offsets) < 2 || offsets[0] != 0 || offsets[len(offsets)-1] != n {
		return 0, fmt.Sprintf("offsets %v must start at 0 and end at N = %d", short(offsets), n)
	}
	longest := 0
	for s := 1; s < len(offsets); s++ {
		// Compared as offsets, not as differences, which could wrap
		// past MaxInt and look non-negative.
		if offsets[s] < offsets[s-1] || offsets[s] > n {
			return 0, fmt.Sprintf("offsets %v leave 0 … N = %d or decrease at %d (%d after %d)", short(offsets), n, s, offsets[s], offsets[s-1])
		}
		longest = max(longest, offsets[s]-offsets[s-1])
	}
	return longest, ""
}

// short abbreviates a long list of offsets for a message.
func short(offsets []int) string {
	if len(offsets) <= 12 {
		return fmt.Sprint(offsets)
	}
	return fmt.Sprintf("%v ... %v (%d)", offsets[:6], offsets[len(offsets)-3:], len(offsets))
}

// segTable returns the (2N) int32 table of every row's segment [start,
// end) on dev, which the kernels read.
func segTable(offsets []int, n int, dev Device) *Tensor {
	if offsets == nil {
		offsets = []int{0, n}
	}
	seg := make([]int32, 2*n)
	for s := 0; s+1 < len(offsets); s++ {
		for i := offsets[s]; i < offsets[s+1]; i++ {
			seg[2*i], seg[2*i+1] = int32(offsets[s]), int32(offsets[s+1])
		}
	}
	t := newTensor(Int32, []int{2 * n}, dev)
	if n > 0 {
		backendOf(dev).write(t, seg)
	}
	return t
}
