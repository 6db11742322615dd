package opspec

import "github.com/tessera-ml/tessera/tensor"

// convSpecs are the specs of the convolution primitives (im2col and
// col2im); Conv2d, ConvTranspose2d and the pools are composed from them
// and MatMul. The coverage matrix's operands are 2×3: one channel of a
// 2×3 image, and, for tensor.Fold, one 2-row column matrix of a (1, 2) kernel.
var convSpecs = []Spec{
	{Op: tensor.OpUnfold, Family: "conv", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor {
		return tensor.Unfold(x.Reshape(1, 1, 2, 3), tensor.Window2d{Kernel: [2]int{2, 2}})
	}, Torch: torch("unfold", "conv2d", "max_pool2d", "avg_pool2d")},
	{Op: tensor.OpFold, Family: "conv", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor {
		return tensor.Fold(x.Reshape(1, 2, 3), [2]int{1, 4}, tensor.Window2d{Kernel: [2]int{1, 2}})
	}, Torch: torch("fold", "conv_transpose2d")},
}
