package opspec

import "github.com/tessera-ml/tessera/tensor"

// attentionSpecs are the specs of the segmented attention and its
// backward. The coverage matrix's operands are 2×3: two rows of one head
// of three values, in two segments of one row (q = v = x, k = y).
var attentionSpecs = []Spec{
	{Op: tensor.OpScaledDotProductAttention, Family: "attention", Cover: func(x, y *tensor.Tensor) *tensor.Tensor {
		x3, y3 := x.Reshape(2, 1, 3), y.Reshape(2, 1, 3)
		return tensor.ScaledDotProductAttention(x3, y3, x3, tensor.AttentionOptions{Offsets: []int{0, 1, 2}})
	}, Torch: torch("scaled_dot_product_attention")},
	{Op: tensor.OpScaledDotProductAttentionBackward, Family: "attention", Cover: func(x, y *tensor.Tensor) *tensor.Tensor {
		x3, y3 := x.Reshape(2, 1, 3), y.Reshape(2, 1, 3)
		lse := tensor.Zeros([]int{2, 1}, tensor.Like(x))
		dq, _, _ := tensor.ScaledDotProductAttentionBackward(x3, y3, x3, x3, lse, y3, tensor.AttentionOptions{})
		return dq
	}, Via: &RefExemption{Via: torch("scaled_dot_product_attention"), Note: "scaled_dot_product_attention gradients"}},
}
