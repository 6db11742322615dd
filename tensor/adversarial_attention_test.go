package tensor_test

import (
	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/tensor"
)

// attentionOpts are adversarial AttentionOptions for 5 rows: offsets
// empty, short, decreasing, negative, huge, and scales not finite.
func attentionOpts() []tensor.AttentionOptions {
	out := []tensor.AttentionOptions{{}, {Offsets: []int{}}, {Offsets: []int{0, 3, 2, 5}}, {Offsets: []int{0, -1, 5}, Causal: true}}
	for _, v := range A.Ints {
		out = append(out, tensor.AttentionOptions{Offsets: []int{0, v, 5}}, tensor.AttentionOptions{Offsets: []int{0, v}})
	}
	for _, f := range A.Floats {
		out = append(out, tensor.AttentionOptions{Scale: f, Causal: true})
	}
	return out
}

func adversarialAttention() []A.Case {
	qkv := func() *T { return tensor.Rand([]int{5, 2, 3}) }
	return []A.Case{
		A.C("Offsets", A.One(func() {
			for _, v := range A.Ints {
				tensor.Offsets(v, 2, v)
			}
		})),
		A.C("ScaledDotProductAttention", func(try A.Try) {
			A.Triples(func(q, k, v *T) { tensor.ScaledDotProductAttention(q, k, v, tensor.AttentionOptions{}) })(try)
			for _, o := range attentionOpts() {
				try("options", func() { tensor.ScaledDotProductAttention(qkv(), qkv(), qkv(), o) })
			}
		}),
		A.C("ScaledDotProductAttentionBackward", func(try A.Try) {
			A.Triples(func(x, lse, g *T) {
				tensor.ScaledDotProductAttentionBackward(x, x, x, x, lse, g, tensor.AttentionOptions{})
			})(try)
			for _, o := range attentionOpts() {
				try("options", func() {
					tensor.ScaledDotProductAttentionBackward(qkv(), qkv(), qkv(), qkv(), tensor.Zeros([]int{5, 2}), qkv(), o)
				})
			}
		}),
	}
}
