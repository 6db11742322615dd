package nn_test

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// A causal pre-norm transformer over a batch of token embeddings, as a
// GPT's body: (batch, seq, width) in and out.
func ExampleNewTransformerEncoder() {
	cfg := nn.DefaultTransformerConfig()
	cfg.DimFeedforward, cfg.Dropout, cfg.NormFirst, cfg.BatchFirst, cfg.Activation = 64, 0.1, true, true, "gelu"
	body := nn.NewTransformerEncoder(nn.NewTransformerEncoderLayer(16, 4, cfg), 2, nn.NewLayerNorm([]int{16}))
	x := tensor.Randn([]int{3, 10, 16}) // 3 sequences of 10 tokens of width 16
	y := body.ForwardMasked(x, nn.AttentionMasks{Causal: true})
	fmt.Println(y.Shape(), len(nn.Parameters(body)))
	// Output: [3 10 16] 26
}

// Multi-head attention from 4 queries to 6 keys with a padding mask,
// sequence-first as PyTorch's default; the weights average the heads.
func ExampleMultiheadAttention_Forward() {
	mha := nn.NewMultiheadAttention(8, 2, true)
	q, kv := tensor.Randn([]int{4, 2, 8}), tensor.Randn([]int{6, 2, 8}) // (seq, batch, width)
	pad := tensor.New([]bool{false, false, false, false, true, true, false, false, false, false, false, true}, 2, 6)
	out, w := mha.Forward(q, kv, kv, nn.AttentionMasks{KeyPadding: pad})
	fmt.Println(out.Shape(), w.Shape(), w.Select(0, 0).Select(1, 4).Sum().Item()) // no query attends a padding key
	// Output: [4 2 8] [2 4 6] 0
}

// Batch norm in a convolutional net's layout: training normalises by the
// batch and moves the running statistics; evaluation uses them.
func ExampleNewBatchNorm2d() {
	bn := nn.NewBatchNorm2d(3)
	x := tensor.Randn([]int{8, 3, 5, 5}).MulScalar(2).AddScalar(1)
	y := bn.Forward(x)
	fmt.Println(y.Shape(), bn.NumBatchesTracked.Item(), math.Abs(y.Mean().Item()) < 1e-5)
	nn.Eval(bn)
	fmt.Println(bn.Forward(x).Shape(), bn.NumBatchesTracked.Item())
	// Output:
	// [8 3 5 5] 1 true
	// [8 3 5 5] 1
}
