package bench

import (
	"fmt"

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
		return Case{Step: scoped(func() { tensor.Conv2d(x, w, b, o) }), Release: released(x, w, b)}
	},
}
