package autograd

import "github.com/tessera-ml/tessera/tensor"

// convRules differentiate the two primitives that convolution and
// pooling are made of (tensor/unfold.go). Both are linear, and each is
// the other's adjoint: Unfold's transpose is Fold with the same window,
// and Fold's is Unfold. Unfold's padding value (the max pool reads -Inf
// there) is a constant, so its tangent is the Unfold of the input's
// tangent with zero padding. Tangents fold their batch dim into N.
var convRules = map[tensor.Op]entry{
	tensor.OpUnfold: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			s := ts[0].Shape() // (B, N, C, H, W)
			cols := tensor.Unfold(ts[0].Reshape(s[0]*s[1], s[2], s[3], s[4]), n.Attrs.Window)
			return cols.Reshape(withBatch(s[0], n.Output().Shape())...)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			in := n.Attrs.Shape
			return grads(tensor.Fold(g, [2]int{in[2], in[3]}, n.Attrs.Window))
		}),
	tensor.OpFold: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			s := ts[0].Shape() // (B, N, C·kh·kw, L)
			out := n.Attrs.Shape
			img := tensor.Fold(ts[0].Reshape(s[0]*s[1], s[2], s[3]), [2]int{out[2], out[3]}, n.Attrs.Window)
			return img.Reshape(withBatch(s[0], out)...)
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(tensor.Unfold(g, n.Attrs.Window))
		}),
}
