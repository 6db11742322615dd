package autograd_test

import "github.com/tessera-ml/tessera/tensor"

// The cases of the segmented attention: ragged segments (of 1, 7 and 33
// rows, and one empty), causal and not, a transposed input and the dense
// single segment; init adds them to ruleCases, which every rule test
// (reverse, forward, second order, GPU) walks. The reverse checks run the
// fused backward op; second order and forward mode the composite rule.
func init() {
	attend := func(o tensor.AttentionOptions) func([]*T) *T {
		return func(xs []*T) *T { return tensor.ScaledDotProductAttention(xs[0], xs[1], xs[2], o) }
	}
	qkv := func(n, h, d int) func() []*T {
		return func() []*T { return []*T{leaf(-2, 2, n, h, d), leaf(-2, 2, n, h, d), leaf(-2, 2, n, h, d)} }
	}
	ruleCases[tensor.OpScaledDotProductAttention] = []ruleCase{
		{"segments 1, 7, 33 of 1x3", qkv(41, 1, 3), attend(tensor.AttentionOptions{Offsets: tensor.Offsets(1, 7, 33)}), zero},
		{"causal segments 5, 0, 9 of 2x4, k transposed", func() []*T {
			return []*T{leaf(-2, 2, 14, 2, 4), transposed(leaf(-2, 2, 4, 2, 14)).Permute(2, 1, 0), leaf(-2, 2, 14, 2, 4)}
		}, attend(tensor.AttentionOptions{Offsets: tensor.Offsets(5, 0, 9), Causal: true, Scale: 0.7}), zero},
		{"dense causal 9x3x2", qkv(9, 3, 2), attend(tensor.AttentionOptions{Causal: true}), zero},
	}
}
