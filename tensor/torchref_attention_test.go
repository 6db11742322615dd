package tensor_test

// PyTorch reference tests of ScaledDotProductAttention: the cases of
// testdata/torch/attention.json (tools/torchref/attention.py, each
// segment's softmax(QKᵀ·scale + mask)·V written out, as PyTorch 1.13 has
// no F.scaled_dot_product_attention) run through the machinery of
// torchref_test.go on the CPU and torchref_gpu_test.go on the GPU,
// forward and backward.

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

func TestTorchRefAttention(t *testing.T)    { runTorchFamily(t, "attention") }
func TestTorchRefGPUAttention(t *testing.T) { runTorchFamilyGPU(t, "attention") }

func init() {
	torchOps["scaled_dot_product_attention"] = func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		o := tensor.AttentionOptions{Offsets: c.Ints("offsets"), Causal: c.Bool("causal")}
		if c.Has("scale") {
			o.Scale = c.Float("scale")
		}
		return one(tensor.ScaledDotProductAttention(in[0], in[1], in[2], o))
	}
	// Sums of products and exponentials, summed in another order.
	opTolClass["scaled_dot_product_attention"] = tolInexact
}
