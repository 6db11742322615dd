package autograd

import (
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// The attention's derivative. With P = softmax(S), S = scale·QKᵀ
// masked to each segment (and causally), out = PV:
//
//	reverse: dV = Pᵀg, dS = P ⊙ (gVᵀ - rowsum(gVᵀ ⊙ P)), dQ = scale·dS K, dK = scale·dSᵀQ
//	forward: dS = scale·(tQ Kᵀ + Q tKᵀ), tOut = (P ⊙ (dS - rowsum(P ⊙ dS))) V + P tV
//
// Reverse mode runs the fused backward op (tensor.
// ScaledDotProductAttentionBackward), which recomputes P row by row from
// the saved logsumexp and never forms it. That op has no derivative of
// its own, so under CreateGraph (a gradient to be differentiated again,
// HVP) and in forward mode the rule writes the formulas above in
// differentiable tensor ops over the dense masked (H, N, N) weights:
// correct in every mode, at the memory a padded attention takes.
var attentionRules = map[tensor.Op]entry{
	tensor.OpScaledDotProductAttention: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			q, k, v := n.Input(0), n.Input(1), n.Input(2)
			if !g.Context().GradEnabled() {
				dq, dk, dv := tensor.ScaledDotProductAttentionBackward(q, k, v, n.Output(), n.Attrs.Index, g, attentionOptions(n))
				return grads(dq, dk, dv)
			}
			a := denseAttention(n)
			gh := g.Permute(1, 0, 2)
			dp := gh.MatMul(a.v.Transpose(1, 2))
			ds := a.p.Mul(dp.Sub(dp.Mul(a.p).SumDims([]int{2}, true))).MulScalar(a.scale)
			back := func(t *tensor.Tensor) *tensor.Tensor { return t.Permute(1, 0, 2) }
			return grads(back(ds.MatMul(a.k)), back(ds.Transpose(1, 2).MatMul(a.q)), back(a.p.Transpose(1, 2).MatMul(gh)))
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			a := denseAttention(n)
			heads := func(t *tensor.Tensor) *tensor.Tensor { return t.Permute(0, 2, 1, 3) } // (B, N, H, D) -> (B, H, N, D)
			var out, ds *tensor.Tensor
			if ts[0] != nil {
				ds = heads(ts[0]).MatMul(a.k.Transpose(1, 2))
			}
			if ts[1] != nil {
				d := a.q.MatMul(heads(ts[1]).Transpose(2, 3))
				ds = sumOrFirst(ds, d)
			}
			if ds != nil {
				ds = ds.MulScalar(a.scale)
				pd := a.p.Mul(ds)
				out = pd.Sub(a.p.Mul(pd.SumDims([]int{3}, true))).MatMul(a.v)
			}
			if ts[2] != nil {
				out = sumOrFirst(out, a.p.MatMul(heads(ts[2])))
			}
			return out.Permute(0, 2, 1, 3)
		}),
}

// sumOrFirst returns a + b, or b when a is nil.
func sumOrFirst(a, b *tensor.Tensor) *tensor.Tensor {
	if a == nil {
		return b
	}
	return a.Add(b)
}

// attentionOptions returns the options the attention node n ran with.
func attentionOptions(n *tensor.Node) tensor.AttentionOptions {
	return tensor.AttentionOptions{Offsets: n.Attrs.Offsets, Causal: n.Attrs.Causal, Scale: n.Attrs.Scalars[0]}
}

// dense is an attention node's operands by head, q, k, v (H, N, D), and
// its masked weights p (H, N, N).
type dense struct {
	q, k, v, p *tensor.Tensor
	scale      float64
}

// denseAttention recomputes the weights of the attention node n as a
// dense masked (H, N, N) softmax, in differentiable ops.
func denseAttention(n *tensor.Node) dense {
	q, k, v := n.Input(0), n.Input(1), n.Input(2)
	a := dense{q: q.Permute(1, 0, 2), k: k.Permute(1, 0, 2), v: v.Permute(1, 0, 2), scale: n.Attrs.Scalars[0]}
	s := a.q.MatMul(a.k.Transpose(1, 2)).MulScalar(a.scale)
	a.p = s.MaskedFill(segmentMask(n.Attrs.Offsets, n.Attrs.Causal, q), math.Inf(-1)).Softmax(2)
	return a
}

// segmentMask returns the (N, N) Bool mask, on q's device, that is true
// where row i may not see row j: j outside i's segment, or after i when
// causal.
func segmentMask(offsets []int, causal bool, q *tensor.Tensor) *tensor.Tensor {
	n := q.Shape()[0]
	if offsets == nil {
		offsets = []int{0, n}
	}
	m := make([]bool, n*n)
	for i := range m {
		m[i] = true
	}
	for s := 0; s+1 < len(offsets); s++ {
		for i := offsets[s]; i < offsets[s+1]; i++ {
			hi := offsets[s+1]
			if causal {
				hi = i + 1
			}
			for j := offsets[s]; j < hi; j++ {
				m[i*n+j] = false
			}
		}
	}
	return tensor.From(m, []int{n, n}, tensor.On(q.Device()), tensor.In(q.Context()))
}
