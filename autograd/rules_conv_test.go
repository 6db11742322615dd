package autograd_test

import "github.com/tessera-ml/tessera/tensor"

// The cases of the convolution primitives, Unfold and Fold, directly and
// through the convolutions and pools built on them; init adds them to
// ruleCases, which every rule test (reverse, forward, GPU) walks.
func init() {
	w := tensor.Window2d{Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: [2]int{1, 0}, Dilation: [2]int{1, 2}}
	conv := tensor.ConvOptions{Stride: [2]int{2, 1}, Padding: [2]int{1, 2}, Dilation: [2]int{1, 2}, Groups: 2}
	ruleCases[tensor.OpUnfold] = []ruleCase{
		{"2x3x7x6 strided dilated padded", func() []*T { return []*T{leaf(-2, 2, 2, 3, 7, 6)} },
			un(func(x *T) *T { return tensor.Unfold(x, w) }), zero},
		{"transposed 3-D", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5, 4))} },
			un(func(x *T) *T { return tensor.Unfold(x, tensor.Window2d{Kernel: [2]int{2, 2}}).Square() }), zero},
		{"Conv2d groups 2 with bias", func() []*T {
			return []*T{leaf(-2, 2, 2, 4, 5, 6), leaf(-1, 1, 6, 2, 2, 3), leaf(-1, 1, 6)}
		}, func(xs []*T) *T { return tensor.Conv2d(xs[0], xs[1], xs[2], conv) }, zero},
		// distinct: a near-tie in a window is a kink finite differences straddle.
		{"MaxPool2d overlapping padded", func() []*T { return []*T{distinct(2, 3, 7, 5)} },
			un(func(x *T) *T {
				return tensor.MaxPool2d(x, tensor.Window2d{Kernel: [2]int{3, 3}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}})
			}), zero},
		{"AvgPool2d ceil mode, padding excluded", func() []*T { return []*T{leaf(-2, 2, 2, 3, 7, 6)} },
			un(func(x *T) *T {
				return tensor.AvgPool2d(x, tensor.Window2d{Kernel: [2]int{3, 2}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, CeilMode: true}, false)
			}), zero},
	}
	ruleCases[tensor.OpFold] = []ruleCase{
		{"2x12x20 into 7x6", func() []*T { return []*T{leaf(-2, 2, 2, 3*3*2, 4*4)} },
			un(func(x *T) *T { return tensor.Fold(x, [2]int{7, 6}, w) }), zero},
		{"ConvTranspose2d groups 2 with bias", func() []*T {
			return []*T{leaf(-2, 2, 2, 4, 3, 4), leaf(-1, 1, 4, 3, 2, 3), leaf(-1, 1, 6)}
		}, func(xs []*T) *T {
			return tensor.ConvTranspose2d(xs[0], xs[1], xs[2], tensor.ConvOptions{Stride: [2]int{2, 3}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 2}, Groups: 2})
		}, zero},
	}
}
