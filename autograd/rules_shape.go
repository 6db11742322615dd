package autograd

import "github.com/tessera-ml/tessera/tensor"

// withBatch returns shape with a leading batch dim b.
func withBatch(b int, shape []int) []int { return append([]int{b}, shape...) }

var shapeRules = map[tensor.Op]entry{
	tensor.OpReshape: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return ts[0].Reshape(withBatch(batchOf(ts), n.Output().Shape())...)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(g.Reshape(n.Attrs.Shape...))
		}),
	// The inverse permutation puts each dim back.
	tensor.OpPermute: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return ts[0].Permute(append([]int{0}, batched(n.Attrs.Dims)...)...)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			inv := make([]int, len(n.Attrs.Dims))
			for i, d := range n.Attrs.Dims {
				inv[d] = i
			}
			return grads(g.Permute(inv...))
		}),
	tensor.OpSlice: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			a := n.Attrs
			return ts[0].Slice(a.Dim+1, a.Start, a.End, a.Step)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			a := n.Attrs
			return grads(tensor.SliceScatter(g, a.Shape, a.Dim, a.Start, a.End, a.Step))
		}),
	tensor.OpSliceScatter: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			a := n.Attrs
			return tensor.SliceScatter(ts[0], withBatch(batchOf(ts), a.Shape), a.Dim+1, a.Start, a.End, a.Step)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			a := n.Attrs
			return grads(g.Slice(a.Dim, a.Start, a.End, a.Step))
		}),
	// The engine sums the gradient over the expanded dims.
	tensor.OpExpand: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			out := n.Output().Shape()
			return lift(ts[0], 1+len(out)).Expand(withBatch(batchOf(ts), out)...)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g) }),
	tensor.OpCat: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			pieces := make([]*tensor.Tensor, len(ts))
			for i := range ts {
				pieces[i] = tangentOr(ts, i, n)
			}
			return tensor.Cat(pieces, n.Attrs.Dim+1)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			out := make([]*tensor.Tensor, len(n.Inputs))
			at := 0
			for i, size := range n.Attrs.Sizes {
				if needs(n, i) {
					out[i] = g.Narrow(n.Attrs.Dim, at, size)
				}
				at += size
			}
			return out
		}),
	// MatMul is bilinear: for Y = A·B (batched), dY = dA·B + A·dB, whose
	// transpose is dA = G·Bᵀ, dB = Aᵀ·G. A tangent's batch dim is one
	// more batch dim of the product.
	tensor.OpMatMul: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			out := make([]*tensor.Tensor, 2)
			if needs(n, 0) {
				out[0] = g.MatMul(n.Input(1).Transpose(1, 2))
			}
			if needs(n, 1) {
				out[1] = n.Input(0).Transpose(1, 2).MatMul(g)
			}
			return out
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			var sum *tensor.Tensor
			if ts[0] != nil {
				sum = ts[0].MatMul(n.Input(1))
			}
			if ts[1] != nil {
				d := n.Input(0).MatMul(ts[1])
				if sum == nil {
					return d
				}
				sum = sum.Add(d)
			}
			return sum
		}),
}
