package autograd

import "github.com/tessera-ml/tessera/tensor"

var reduceRules = map[tensor.Op]rule{
	// Sum keeps its dims (size 1), so the gradient broadcasts back.
	tensor.OpSum: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Expand(n.Attrs.Shape...))
	},
	tensor.OpAmax: amaxGrad,
	tensor.OpAmin: amaxGrad,
	// The gradient goes to the index that won.
	tensor.OpMaxDim: indexedGrad,
	tensor.OpMinDim: indexedGrad,
	// d cumsum: the reverse cumulative sum, Σg - cumsum(g) + g.
	tensor.OpCumSum: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		d := n.Attrs.Dim
		return grads(g.SumDims([]int{d}, true).Sub(g.CumSum(d)).Add(g))
	},
	// dx = y ⊙ (g - Σ g⊙y)
	tensor.OpSoftmax: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		y, d := n.Output(), n.Attrs.Dim
		return grads(y.Mul(g.Sub(g.Mul(y).SumDims([]int{d}, true))))
	},
	// dx = g - exp(y) Σg
	tensor.OpLogSoftmax: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		y, d := n.Output(), n.Attrs.Dim
		return grads(g.Sub(y.Exp().Mul(g.SumDims([]int{d}, true))))
	},
}

// amaxGrad shares the gradient evenly among the elements equal to the
// extremum, as PyTorch's amax/amin and max() do.
func amaxGrad(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	x, y := n.Input(0), n.Output()
	hit := x.Eq(y).Cast(g.DType())
	count := hit.SumDims(n.Attrs.Dims, true)
	return grads(hit.Mul(g).Div(count))
}

func indexedGrad(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
	return grads(z.ScatterAdd(n.Attrs.Dim, n.Attrs.Index, g))
}

var indexRules = map[tensor.Op]rule{
	tensor.OpIndexSelect: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
		return grads(z.IndexAdd(n.Attrs.Dim, n.Attrs.Index, g))
	},
	tensor.OpIndexAdd: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g, g.IndexSelect(n.Attrs.Dim, n.Attrs.Index))
	},
	tensor.OpGather: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		z := tensor.Zeros(n.Attrs.Shape, tensor.Like(g))
		return grads(z.ScatterAdd(n.Attrs.Dim, n.Attrs.Index, g))
	},
	// src gets the gradient at the positions index covers, zero-padded to
	// src's shape when index is smaller than src.
	tensor.OpScatterAdd: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
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
	},
}
