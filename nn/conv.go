package nn

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// Conv2d is torch.nn.Conv2d: y = tensor.Conv2d(x, Weight, Bias, Options)
// with Weight (out, in/groups, kh, kw) and Bias (out), or no bias when
// Bias is nil. Its state-dict names are "weight" and "bias".
type Conv2d struct {
	Weight, Bias *tensor.Tensor
	Options      tensor.ConvOptions
}

// NewConv2d returns a Conv2d from in to out channels with a kernel of
// size kernel and the stride, padding, dilation and groups of o (its
// OutputPadding must be zero), with a bias when bias is true (PyTorch's
// default). It is initialised as PyTorch does (Kaiming-uniform with
// a = √5): Weight and Bias drawn from U(-1/√fan_in, 1/√fan_in), fan_in =
// in/groups·kh·kw. opts set the dtype, device and generator, as for
// NewLinear. It panics with ErrArgument for a size below 1, a negative
// padding or output padding, or channels that groups does not divide.
func NewConv2d(in, out int, kernel [2]int, o tensor.ConvOptions, bias bool, opts ...tensor.Option) *Conv2d {
	g := checkConv("NewConv2d", in, out, kernel, o)
	if o.OutputPadding != [2]int{} {
		fail("NewConv2d", tensor.ErrArgument, fmt.Sprintf("a convolution has no output padding, got %v", o.OutputPadding))
	}
	fanIn := in / g * kernel[0] * kernel[1]
	w, b := convParams([]int{out, in / g, kernel[0], kernel[1]}, out, fanIn, bias, opts)
	return &Conv2d{Weight: w, Bias: b, Options: o}
}

// Forward returns tensor.Conv2d(x, c.Weight, c.Bias, c.Options): (N, in,
// H, W) → (N, out, oh, ow).
func (c *Conv2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("Conv2d.Forward", c)
	return tensor.Conv2d(x, c.Weight, c.Bias, c.Options)
}

// Slots returns "weight" and "bias".
func (c *Conv2d) Slots() []Slot {
	receiver("Conv2d.Slots", c)
	return []Slot{Param("weight", &c.Weight), Param("bias", &c.Bias)}
}

// Children returns nil.
func (c *Conv2d) Children() []Child {
	receiver("Conv2d.Children", c)
	return nil
}

// ConvTranspose2d is torch.nn.ConvTranspose2d: y =
// tensor.ConvTranspose2d(x, Weight, Bias, Options) with Weight (in,
// out/groups, kh, kw) and Bias (out), or no bias when Bias is nil. Its
// state-dict names are "weight" and "bias".
type ConvTranspose2d struct {
	Weight, Bias *tensor.Tensor
	Options      tensor.ConvOptions
}

// NewConvTranspose2d returns a ConvTranspose2d from in to out channels,
// as NewConv2d, o's OutputPadding included. PyTorch computes fan_in from
// the weight's second dim: fan_in = out/groups·kh·kw.
func NewConvTranspose2d(in, out int, kernel [2]int, o tensor.ConvOptions, bias bool, opts ...tensor.Option) *ConvTranspose2d {
	g := checkConv("NewConvTranspose2d", in, out, kernel, o)
	fanIn := out / g * kernel[0] * kernel[1]
	w, b := convParams([]int{in, out / g, kernel[0], kernel[1]}, out, fanIn, bias, opts)
	return &ConvTranspose2d{Weight: w, Bias: b, Options: o}
}

// Forward returns tensor.ConvTranspose2d(x, c.Weight, c.Bias, c.Options).
func (c *ConvTranspose2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("ConvTranspose2d.Forward", c)
	return tensor.ConvTranspose2d(x, c.Weight, c.Bias, c.Options)
}

// Slots returns "weight" and "bias".
func (c *ConvTranspose2d) Slots() []Slot {
	receiver("ConvTranspose2d.Slots", c)
	return []Slot{Param("weight", &c.Weight), Param("bias", &c.Bias)}
}

// Children returns nil.
func (c *ConvTranspose2d) Children() []Child {
	receiver("ConvTranspose2d.Children", c)
	return nil
}

// checkConv checks a convolution layer's sizes and returns its groups.
func checkConv(op string, in, out int, kernel [2]int, o tensor.ConvOptions) int {
	g := max(o.Groups, 1)
	switch {
	case in < 1 || out < 1 || kernel[0] < 1 || kernel[1] < 1 || o.Groups < 0:
		fail(op, tensor.ErrArgument, fmt.Sprintf("channels (%d, %d), kernel %v and groups %d must be positive", in, out, kernel, o.Groups))
	case in%g != 0 || out%g != 0:
		fail(op, tensor.ErrArgument, fmt.Sprintf("groups %d must divide the channels (%d, %d)", g, in, out))
	case min(o.Padding[0], o.Padding[1], o.OutputPadding[0], o.OutputPadding[1], o.Stride[0], o.Stride[1], o.Dilation[0], o.Dilation[1]) < 0:
		fail(op, tensor.ErrArgument, fmt.Sprintf("negative stride, padding or dilation in %+v", o))
	}
	return g
}

// convParams draws a convolution's weight of shape and its bias (out),
// or nil when !bias, from U(-1/√fanIn, 1/√fanIn).
func convParams(shape []int, out, fanIn int, bias bool, opts []tensor.Option) (w, b *tensor.Tensor) {
	bound := 1 / math.Sqrt(float64(fanIn))
	w = uniformParam(shape, bound, opts)
	if bias {
		b = uniformParam([]int{out}, bound, opts)
	}
	return w, b
}

// MaxPool2d is torch.nn.MaxPool2d: tensor.MaxPool2d over Window (a zero
// Stride means Kernel). It holds no tensors.
type MaxPool2d struct{ Window tensor.Window2d }

// Forward returns tensor.MaxPool2d(x, p.Window).
func (p MaxPool2d) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.MaxPool2d(x, p.Window) }

// Slots returns nil.
func (MaxPool2d) Slots() []Slot { return nil }

// Children returns nil.
func (MaxPool2d) Children() []Child { return nil }

// AvgPool2d is torch.nn.AvgPool2d: tensor.AvgPool2d over Window with
// CountIncludePad. NewAvgPool2d sets PyTorch's default, true. It holds
// no tensors.
type AvgPool2d struct {
	Window          tensor.Window2d
	CountIncludePad bool
}

// NewAvgPool2d returns an AvgPool2d over w that counts the padding, as
// torch.nn.AvgPool2d's default.
func NewAvgPool2d(w tensor.Window2d) AvgPool2d { return AvgPool2d{Window: w, CountIncludePad: true} }

// Forward returns tensor.AvgPool2d(x, p.Window, p.CountIncludePad).
func (p AvgPool2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.AvgPool2d(x, p.Window, p.CountIncludePad)
}

// Slots returns nil.
func (AvgPool2d) Slots() []Slot { return nil }

// Children returns nil.
func (AvgPool2d) Children() []Child { return nil }

// AdaptiveAvgPool2d is torch.nn.AdaptiveAvgPool2d: tensor.AdaptiveAvgPool2d
// to Size (oh, ow). It holds no tensors.
type AdaptiveAvgPool2d struct{ Size [2]int }

// Forward returns tensor.AdaptiveAvgPool2d(x, p.Size).
func (p AdaptiveAvgPool2d) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.AdaptiveAvgPool2d(x, p.Size)
}

// Slots returns nil.
func (AdaptiveAvgPool2d) Slots() []Slot { return nil }

// Children returns nil.
func (AdaptiveAvgPool2d) Children() []Child { return nil }

// Unfold is torch.nn.Unfold: tensor.Unfold over Window, (N, C, H, W) →
// (N, C·kh·kw, L). It holds no tensors.
type Unfold struct{ Window tensor.Window2d }

// Forward returns tensor.Unfold(x, u.Window).
func (u Unfold) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.Unfold(x, u.Window) }

// Slots returns nil.
func (Unfold) Slots() []Slot { return nil }

// Children returns nil.
func (Unfold) Children() []Child { return nil }

// Fold is torch.nn.Fold: tensor.Fold into Size over Window, (N,
// C·kh·kw, L) → (N, C, Size[0], Size[1]). It holds no tensors.
type Fold struct {
	Size   [2]int
	Window tensor.Window2d
}

// Forward returns tensor.Fold(x, f.Size, f.Window).
func (f Fold) Forward(x *tensor.Tensor) *tensor.Tensor { return tensor.Fold(x, f.Size, f.Window) }

// Slots returns nil.
func (Fold) Slots() []Slot { return nil }

// Children returns nil.
func (Fold) Children() []Child { return nil }
