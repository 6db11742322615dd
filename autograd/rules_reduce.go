package autograd

import "github.com/tessera-ml/tessera/tensor"

var reduceRules = map[tensor.Op]entry{
	// Sum keeps its dims (size 1), so the gradient broadcasts back.
	tensor.OpSum: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return ts[0].SumDims(batched(n.Attrs.Dims), true)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(g.Expand(n.Attrs.Shape...))
		}),
	tensor.OpAmax: explicit(amaxGrad, amaxTangent),
	tensor.OpAmin: explicit(amaxGrad, amaxTangent),
	// The derivative is that of the element that won, which the node's
	// index holds.
	tensor.OpMaxDim: explicit(indexedGrad, indexedTangent),
	tensor.OpMinDim: explicit(indexedGrad, indexedTangent),
	// d cumsum: the reverse cumulative sum, Σg - cumsum(g) + g.
	tensor.OpCumSum: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor { return ts[0].CumSum(n.Attrs.Dim + 1) },
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			d := n.Attrs.Dim
			return grads(g.SumDims([]int{d}, true).Sub(g.CumSum(d)).Add(g))
		}),
	// The Jacobian of softmax is diag(y) - y yᵀ, symmetric: dy = y ⊙ (t -
	// Σ t⊙y) forward, dx = y ⊙ (g - Σ g⊙y) back.
	tensor.OpSoftmax: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			y, d := n.Output(), n.Attrs.Dim
			return grads(y.Mul(g.Sub(g.Mul(y).SumDims([]int{d}, true))))
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			y, t := n.Output(), ts[0]
			return y.Mul(t.Sub(t.Mul(y).SumDims([]int{n.Attrs.Dim + 1}, true)))
		}),
	// The Jacobian of log-softmax is I - 1 exp(y)ᵀ: dy = t - Σ exp(y)⊙t
	// forward, dx = g - exp(y) Σg back.
	tensor.OpLogSoftmax: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			y, d := n.Output(), n.Attrs.Dim
			return grads(g.Sub(y.Exp().Mul(g.SumDims([]int{d}, true))))
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			y, t := n.Output(), ts[0]
			return t.Sub(t.Mul(y.Exp()).SumDims([]int{n.Attrs.Dim + 1}, true))
		}),
}

// amaxHits returns the elements equal to the extremum (1, else 0) and
// their count along the reduced dims.
func amaxHits(n *tensor.Node, dt tensor.DType) (hit, count *tensor.Tensor) {
	x, y := n.Input(0), n.Output()
	hit = x.Eq(y).Cast(dt)
	return hit, hit.SumDims(n.Attrs.Dims, true)
}

// amaxGrad shares the gradient evenly among the elements equal to the
// extremum, as PyTorch's amax/amin and max() do.
func amaxGrad(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	hit, count := amaxHits(n, g.DType())
	return grads(hit.Mul(g).Div(count))
}

// amaxTangent is its transpose: the mean of the tangents of the
// elements equal to the extremum.
func amaxTangent(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
	t := ts[0]
	hit, count := amaxHits(n, t.DType())
	return t.Mul(hit).SumDims(batched(n.Attrs.Dims), true).Div(count)
}

func indexedGrad(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
	return grads(z.ScatterAdd(n.Attrs.Dim, n.Attrs.Index, g))
}

// indexedTangent picks the tangent of the element that won.
func indexedTangent(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
	t := ts[0]
	return t.Gather(n.Attrs.Dim+1, batchIndex(n.Attrs.Index, batchOf(ts)))
}

// The index ops are linear in their float inputs for a fixed index.
var indexRules = map[tensor.Op]entry{
	tensor.OpIndexSelect: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return ts[0].IndexSelect(n.Attrs.Dim+1, n.Attrs.Index)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
			return grads(z.IndexAdd(n.Attrs.Dim, n.Attrs.Index, g))
		}),
	tensor.OpIndexAdd: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			if ts[1] == nil {
				return ts[0]
			}
			return tangentOr(ts, 0, n).IndexAdd(n.Attrs.Dim+1, n.Attrs.Index, ts[1])
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			if !needs(n, 1) {
				return grads(g, nil)
			}
			return grads(g, g.IndexSelect(n.Attrs.Dim, n.Attrs.Index))
		}),
	tensor.OpIndexAmax: explicit(indexAmaxGrad, indexAmaxTangent),
	tensor.OpGather: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return ts[0].Gather(n.Attrs.Dim+1, batchIndex(n.Attrs.Index, batchOf(ts)))
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
			return grads(z.ScatterAdd(n.Attrs.Dim, n.Attrs.Index, g))
		}),
	// src gets the gradient at the positions index covers, zero-padded to
	// src's shape when index is smaller than src.
	tensor.OpScatterAdd: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			if ts[1] == nil {
				return ts[0]
			}
			index := batchIndex(n.Attrs.Index, batchOf(ts))
			return tangentOr(ts, 0, n).ScatterAdd(n.Attrs.Dim+1, index, ts[1])
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			if !needs(n, 1) {
				return grads(g, nil)
			}
			gs := g.Gather(n.Attrs.Dim, n.Attrs.Index)
			want := n.Inputs[1].Shape()
			for d, size := range gs.Shape() {
				if size < want[d] {
					pad := gs.Shape()
					pad[d] = want[d] - size
					gs = tensor.Cat([]*tensor.Tensor{gs, tensor.Zeros(pad, tensor.Like(gs))}, d)
				}
			}
			return grads(g, gs)
		}),
}

// indexAmaxHits returns where x and src equal IndexAmax's result (1, else
// 0) and how many entries, of x and of src, equal each result element.
func indexAmaxHits(n *tensor.Node, dt tensor.DType) (hitX, hitSrc, count *tensor.Tensor) {
	x, src, y, d, index := n.Input(0), n.Input(1), n.Output(), n.Attrs.Dim, n.Attrs.Index
	hitX = x.Eq(y).Cast(dt)
	hitSrc = src.Eq(y.IndexSelect(d, index)).Cast(dt)
	return hitX, hitSrc, hitX.IndexAdd(d, index, hitSrc)
}

// indexAmaxGrad shares each result element's gradient evenly among the
// entries of x and src equal to it, as PyTorch's index_reduce amax.
func indexAmaxGrad(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	hitX, hitSrc, count := indexAmaxHits(n, g.DType())
	share := g.Div(count)
	return grads(share.Mul(hitX), share.IndexSelect(n.Attrs.Dim, n.Attrs.Index).Mul(hitSrc))
}

// indexAmaxTangent is its transpose: the mean of the tangents of the
// entries equal to the result.
func indexAmaxTangent(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
	t := tangentOr(ts, 0, n)
	hitX, hitSrc, count := indexAmaxHits(n, t.DType())
	t = t.Mul(hitX)
	if ts[1] != nil {
		t = t.IndexAdd(n.Attrs.Dim+1, n.Attrs.Index, ts[1].Mul(hitSrc))
	}
	return t.Div(count)
}
