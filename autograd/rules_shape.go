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
	// transpose is dA = G·Bᵀ, dB = Aᵀ·G. A node holds either two 3-D
	// operands of one batch or operands of at most 2 dims, where a 1-D
	// A is a row and a 1-D B a column whose dims the product dropped
	// (matmulGrads). A tangent's batch dim is one more batch dim of the
	// product.
	tensor.OpMatMul: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return matmulGrads(g, n.Input(0), n.Input(1), needs(n, 0), needs(n, 1))
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			a, b := n.Input(0), n.Input(1)
			var sum *tensor.Tensor
			if ts[0] != nil {
				sum = ts[0].MatMul(b)
			}
			if ts[1] != nil {
				var d *tensor.Tensor
				switch {
				case b.Dim() > 1:
					d = a.MatMul(ts[1])
				case a.Dim() == 1: // (B,k)·(k): the dot product per direction
					d = ts[1].MatMul(a)
				default: // (B,k)·Aᵀ = (A·tBᵢ)ᵢ
					d = ts[1].MatMul(a.Transpose(-2, -1))
				}
				if sum == nil {
					return d
				}
				sum = sum.Add(d)
			}
			return sum
		}),
	// Addmm is input + a·b: the gradient of input is g (the engine sums
	// it back to input's shape), those of a and b are MatMul's; a
	// tangent is the input's (broadcast) plus the product's.
	tensor.OpAddmm: explicit(addmmGrads, addmmTangent),
	// AddmmReLU is Addmm then ReLU: ReLU's rule (on its output), then
	// Addmm's.
	tensor.OpAddmmReLU: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return addmmGrads(tensor.ReLUBackward(g, n.Output()), n)
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return tensor.ReLUBackward(addmmTangent(ts, n), n.Output())
		}),
}

// addmmGrads returns the gradients of an Addmm node's input, a and b
// for its output's gradient g.
func addmmGrads(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
	out := matmulGrads(g, n.Input(1), n.Input(2), needs(n, 1), needs(n, 2))
	var gi *tensor.Tensor
	if needs(n, 0) {
		gi = g
	}
	return grads(gi, out[0], out[1])
}

// addmmTangent returns the tangent of input + a·b, an Addmm node's
// (before AddmmReLU's ReLU), for the tangents ts of its inputs.
func addmmTangent(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
	a, b := n.Input(1), n.Input(2)
	shape := append([]int{batchOf(ts)}, n.Output().Shape()...)
	var sum *tensor.Tensor
	plus := func(t *tensor.Tensor) {
		if sum == nil {
			sum = t
		} else {
			sum = sum.Add(t)
		}
	}
	if ts[1] != nil {
		plus(ts[1].MatMul(b))
	}
	if ts[2] != nil {
		plus(a.MatMul(ts[2]))
	}
	if ts[0] != nil {
		plus(lift(ts[0], len(shape)))
	}
	return sum.Expand(shape...) // the input's tangent alone may broadcast
}

// matmulGrads returns the gradients of A and B (nil where not wanted)
// for the product Y = A·B whose gradient is g, with MatMul's 1-D rules:
// a 1-D A is the row (1,k) and a 1-D B the column (k,1), and g lacks
// their dims.
func matmulGrads(g, a, b *tensor.Tensor, wantA, wantB bool) []*tensor.Tensor {
	out := make([]*tensor.Tensor, 2)
	switch {
	case a.Dim() == 1 && b.Dim() == 1: // a dot product: g is 0-d
		if wantA {
			out[0] = b.Mul(g)
		}
		if wantB {
			out[1] = a.Mul(g)
		}
	case b.Dim() == 1: // (m,k)·(k) → (m)
		if wantA {
			out[0] = g.Unsqueeze(1).MatMul(b.Unsqueeze(0))
		}
		if wantB {
			out[1] = a.Transpose(-2, -1).MatMul(g)
		}
	case a.Dim() == 1: // (k)·(k,n) → (n)
		if wantA {
			out[0] = b.MatMul(g)
		}
		if wantB {
			out[1] = a.Unsqueeze(1).MatMul(g.Unsqueeze(0))
		}
	default:
		if wantA {
			out[0] = productIn(a, g, b.Transpose(-2, -1))
		}
		if wantB {
			out[1] = productIn(b, a.Transpose(-2, -1), g)
		}
	}
	return out
}

// productIn returns p·q, the gradient of x, in x's layout when x is a
// transposed matrix (a column-major 2-D view, such as the weight.T()
// of nn.Linear): as (qᵀ·pᵀ)ᵀ, whose transpose — the gradient of the
// weight itself — is then contiguous and owns its memory, so the
// engine stores it as the weight's Grad without a copy. The product
// itself is the same GEMM either way.
func productIn(x, p, q *tensor.Tensor) *tensor.Tensor {
	if x.Dim() != 2 || x.IsContiguous() {
		return p.MatMul(q)
	}
	if s := x.Strides(); s[0] != 1 || s[1] != x.Size(0) {
		return p.MatMul(q)
	}
	t := q.T().MatMul(p.T())
	out := t.T()
	if !t.Context().GradEnabled() {
		t.Release() // out holds the memory; the engine releases out
	}
	return out
}
