package tensor

// convSpecs are the specs of the convolution primitives (im2col and
// col2im); Conv2d, ConvTranspose2d and the pools are composed from them
// and MatMul. The coverage matrix's operands are 2×3: one channel of a
// 2×3 image, and, for Fold, one 2-row column matrix of a (1, 2) kernel.
var convSpecs = []OpSpec{
	{Op: OpUnfold, Family: "conv", Cover: func(x, _ *Tensor) *Tensor {
		return Unfold(x.Reshape(1, 1, 2, 3), Window2d{Kernel: [2]int{2, 2}})
	}, Torch: torch("unfold", "conv2d", "max_pool2d", "avg_pool2d")},
	{Op: OpFold, Family: "conv", Cover: func(x, _ *Tensor) *Tensor {
		return Fold(x.Reshape(1, 2, 3), [2]int{1, 4}, Window2d{Kernel: [2]int{1, 2}})
	}, Torch: torch("fold", "conv_transpose2d")},
}
