package bench

import (
	"fmt"

	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// convSize is a conv2d problem: a batch of n (cin, hw, hw) images, cout
// filters of k×k, stride 1 and padding k/2 (the output keeps hw×hw).
func convSize(n, cin, hw, cout, k int) Size {
	return Size{Label: fmt.Sprintf("%d×%d×%d² → %d, k%d", n, cin, hw, cout, k), X: float64(n * cin * hw * hw), Dims: []int{n, cin, hw, cout, k}}
}

var conv2d = Workload{
	Name: "conv2d", Family: "Conv2d forward", Unit: GFLOPs,
	Sizes: []Size{convSize(32, 64, 56, 64, 3), convSize(32, 128, 28, 128, 3), convSize(32, 256, 14, 256, 3)},
	Quick: []Size{convSize(8, 16, 32, 32, 3), convSize(4, 64, 28, 64, 3)},
	Peers: []string{"torch"},
	Doc: "conv2d: tensor.Conv2d (im2col + GEMM) of n×cin×hw×hw float32 images with cout k×k filters, bias, " +
		"stride 1, padding k/2; 2·n·cout·hw²·cin·k² flops (torch: F.conv2d)",
	Work: func(s Size) float64 {
		d := s.Dims
		return 2 * float64(d[0]*d[3]*d[2]*d[2]*d[1]*d[4]*d[4])
	},
	Setup: func(dev tensor.Device, s Size) Case {
		n, cin, hw, cout, k := s.Dims[0], s.Dims[1], s.Dims[2], s.Dims[3], s.Dims[4]
		x := tensor.Randn([]int{n, cin, hw, hw}, tensor.On(dev))
		w := tensor.Randn([]int{cout, cin, k, k}, tensor.On(dev))
		b := tensor.Randn([]int{cout}, tensor.On(dev))
		o := tensor.ConvOptions{Padding: [2]int{k / 2, k / 2}}
		return Case{Step: scoped(func() { tensor.Realize(tensor.Conv2d(x, w, b, o)) }), Release: released(x, w, b)}
	},
}

// cnnSize is a batch of 28×28 single-channel images through the LeNet-
// style network of cnnStep with c1 and c2 channels.
func cnnSize(batch, c1, c2 int) Size {
	return Size{Label: fmt.Sprintf("1-%d-%d-10 on 28², batch %d", c1, c2, batch), X: float64(batch), Dims: []int{batch, c1, c2}}
}

var cnnStep = Workload{
	Name: "cnn_step", Family: "CNN training step", Unit: StepsPS,
	Sizes: []Size{cnnSize(64, 16, 32)},
	Quick: []Size{cnnSize(8, 16, 32)},
	Peers: []string{"torch"},
	Doc: "cnn_step: one training step of conv5×5(pad 2)→relu→maxpool2→conv5×5(pad 2)→relu→maxpool2→linear on a fixed " +
		"random 28×28 batch: cross-entropy, backward, SGD (lr 0.01), zero grad, loss read back every step",
	Work: oneStep,
	Setup: func(dev tensor.Device, s Size) Case {
		batch, c1, c2 := s.Dims[0], s.Dims[1], s.Dims[2]
		pad2 := tensor.ConvOptions{Padding: [2]int{2, 2}}
		pool := nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{2, 2}}}
		model := nn.NewSequential(
			nn.NewConv2d(1, c1, [2]int{5, 5}, pad2, true, tensor.On(dev)), nn.Func((*tensor.Tensor).ReLU), pool,
			nn.NewConv2d(c1, c2, [2]int{5, 5}, pad2, true, tensor.On(dev)), nn.Func((*tensor.Tensor).ReLU), pool,
			nn.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(1, -1) }),
			nn.NewLinear(c2*7*7, 10, tensor.On(dev)),
		)
		x := tensor.Randn([]int{batch, 1, 28, 28}, tensor.On(dev))
		y := tensor.RandInt(0, 10, []int{batch}, tensor.On(dev))
		return classifierStep(model, x, y)
	},
}
