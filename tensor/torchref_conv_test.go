package tensor_test

// PyTorch reference tests of convolution and pooling: the cases of
// testdata/torch/conv.json (tools/torchref/conv.py) run through the
// machinery of torchref_test.go on the CPU and torchref_gpu_test.go on
// the GPU, forward and backward. The specs of Unfold and Fold are in
// spec_conv_test.go.

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

func TestTorchRefConv(t *testing.T)    { runTorchFamily(t, "conv") }
func TestTorchRefGPUConv(t *testing.T) { runTorchFamilyGPU(t, "conv") }

func init() {
	for op, f := range convTorchOps {
		torchOps[op] = f
		// Sums of products, summed in another order than torch's.
		opTolClass[op] = tolInexact
	}
}

// pair2 returns the 2-element list attribute key as a pair.
func pair2(c torchref.Case, key string) [2]int {
	v := c.Ints(key)
	return [2]int{v[0], v[1]}
}

// window2d returns the sliding window a case's attrs describe.
func window2d(c torchref.Case) tensor.Window2d {
	w := tensor.Window2d{Kernel: pair2(c, "kernel_size"), Stride: pair2(c, "stride"), Padding: pair2(c, "padding")}
	if c.Has("dilation") {
		w.Dilation = pair2(c, "dilation")
	}
	if c.Has("ceil_mode") {
		w.CeilMode = c.Bool("ceil_mode")
	}
	return w
}

// convOptions returns the convolution arguments of a case's attrs.
func convOptions(c torchref.Case) tensor.ConvOptions {
	o := tensor.ConvOptions{Stride: pair2(c, "stride"), Padding: pair2(c, "padding"), Dilation: pair2(c, "dilation"), Groups: c.Int("groups")}
	if c.Has("output_padding") {
		o.OutputPadding = pair2(c, "output_padding")
	}
	return o
}

// optional returns in[i], or nil past the end (no bias).
func optional(in []*tensor.Tensor, i int) *tensor.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

var convTorchOps = map[string]torchOp{
	"conv2d": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Conv2d(in[0], in[1], optional(in, 2), convOptions(c)))
	},
	"conv_transpose2d": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.ConvTranspose2d(in[0], in[1], optional(in, 2), convOptions(c)))
	},
	"unfold": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Unfold(in[0], window2d(c)))
	},
	"fold": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Fold(in[0], pair2(c, "output_size"), window2d(c)))
	},
	"max_pool2d": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		v, i := tensor.MaxPool2dWithIndices(in[0], window2d(c))
		return []*tensor.Tensor{v, i}
	},
	"avg_pool2d": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.AvgPool2d(in[0], window2d(c), c.Bool("count_include_pad")))
	},
	"adaptive_avg_pool2d": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.AdaptiveAvgPool2d(in[0], pair2(c, "output_size")))
	},
}
