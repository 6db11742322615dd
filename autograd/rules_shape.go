package autograd

import "github.com/tessera-ml/tessera/tensor"

var shapeRules = map[tensor.Op]rule{
	tensor.OpReshape: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Reshape(n.Attrs.Shape...))
	},
	// The inverse permutation puts each dim back.
	tensor.OpPermute: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		inv := make([]int, len(n.Attrs.Dims))
		for i, d := range n.Attrs.Dims {
			inv[d] = i
		}
		return grads(g.Permute(inv...))
	},
	tensor.OpSlice: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		a := n.Attrs
		return grads(tensor.SliceScatter(g, a.Shape, a.Dim, a.Start, a.End, a.Step))
	},
	tensor.OpSliceScatter: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		a := n.Attrs
		return grads(g.Slice(a.Dim, a.Start, a.End, a.Step))
	},
	// The engine sums the gradient over the expanded dims.
	tensor.OpExpand: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g) },
	tensor.OpCat: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(n.Inputs))
		at := 0
		for i, size := range n.Attrs.Sizes {
			out[i] = g.Narrow(n.Attrs.Dim, at, size)
			at += size
		}
		return out
	},
	// For Y = A·B (batched): dA = G·Bᵀ, dB = Aᵀ·G.
	tensor.OpMatMul: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		a, b := n.Input(0), n.Input(1)
		return grads(g.MatMul(b.Transpose(1, 2)), a.Transpose(1, 2).MatMul(g))
	},
}
