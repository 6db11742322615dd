package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// receiver panics with ErrArgument for op when its receiver p is nil.
func receiver[T any](op string, p *T) {
	if p == nil {
		fail(op, tensor.ErrArgument, fmt.Sprintf("the receiver is a nil %T", p))
	}
}

// stateless gives the layers below, which hold no tensor, their empty
// Slots and Children.
type stateless struct{}

// Slots returns nil: the layer holds no tensor.
func (stateless) Slots() []Slot { return nil }

// Children returns nil: the layer has no sub-module.
func (stateless) Children() []Child { return nil }

// ReLU is torch.nn.ReLU: max(x, 0) elementwise, any shape.
type ReLU struct{ stateless }

// Forward returns x.ReLU(), of x's shape.
func (ReLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("ReLU", "x", x)
	return x.ReLU()
}

// GELU is torch.nn.GELU: x·Φ(x) with Φ the standard normal CDF (the
// exact erf form, PyTorch's default), or its tanh approximation when
// Tanh is true (approximate='tanh'). Any shape.
type GELU struct {
	stateless
	Tanh bool
}

// Forward returns GELU(x), of x's shape.
func (g GELU) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("GELU", "x", x)
	if g.Tanh {
		return x.GELUTanh()
	}
	return x.GELU()
}

// SiLU is torch.nn.SiLU (swish): x·σ(x) elementwise, any shape.
type SiLU struct{ stateless }

// Forward returns x.SiLU(), of x's shape.
func (SiLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("SiLU", "x", x)
	return x.SiLU()
}

// Tanh is torch.nn.Tanh, elementwise, any shape.
type Tanh struct{ stateless }

// Forward returns x.Tanh(), of x's shape.
func (Tanh) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("Tanh", "x", x)
	return x.Tanh()
}

// Sigmoid is torch.nn.Sigmoid, elementwise, any shape.
type Sigmoid struct{ stateless }

// Forward returns x.Sigmoid(), of x's shape.
func (Sigmoid) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("Sigmoid", "x", x)
	return x.Sigmoid()
}

// LeakyReLU is torch.nn.LeakyReLU: x where x > 0, NegativeSlope·x
// elsewhere (PyTorch's default slope is 0.01; NewLeakyReLU sets it). Any
// shape; the gradient at 0 is NegativeSlope, as PyTorch's.
type LeakyReLU struct {
	stateless
	NegativeSlope float64
}

// NewLeakyReLU returns a LeakyReLU with PyTorch's default slope 0.01.
func NewLeakyReLU() LeakyReLU { return LeakyReLU{NegativeSlope: 0.01} }

// Forward returns LeakyReLU(x), of x's shape. It panics with ErrDType
// for a non-float x.
func (l LeakyReLU) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("LeakyReLU", "x", x)
	if !x.DType().IsFloat() {
		fail("LeakyReLU", tensor.ErrDType, "leaky_relu needs a float tensor", x)
	}
	return tensor.Where(x.GtScalar(0), x, x.MulScalar(l.NegativeSlope))
}

// Softmax is torch.nn.Softmax(dim): exp(x) normalised to sum 1 along
// Dim (negative counts from the end). Any shape.
type Softmax struct {
	stateless
	Dim int
}

// Forward returns x.Softmax(s.Dim), of x's shape.
func (s Softmax) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("Softmax", "x", x)
	return x.Softmax(s.Dim)
}

// LogSoftmax is torch.nn.LogSoftmax(dim): log of Softmax along Dim,
// computed stably. Any shape.
type LogSoftmax struct {
	stateless
	Dim int
}

// Forward returns x.LogSoftmax(s.Dim), of x's shape.
func (s LogSoftmax) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("LogSoftmax", "x", x)
	return x.LogSoftmax(s.Dim)
}

// Flatten is torch.nn.Flatten: it merges dimensions StartDim to EndDim
// (inclusive; negative counts from the end) into one. NewFlatten gives
// PyTorch's defaults 1 and -1, so (N, C, H, W) → (N, C·H·W) for the
// head of a convolutional net.
type Flatten struct {
	stateless
	StartDim, EndDim int
}

// NewFlatten returns a Flatten from dimension 1 to the last, as
// torch.nn.Flatten().
func NewFlatten() Flatten { return Flatten{StartDim: 1, EndDim: -1} }

// Forward returns x.Flatten(f.StartDim, f.EndDim).
func (f Flatten) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("Flatten", "x", x)
	return x.Flatten(f.StartDim, f.EndDim)
}

// Identity is torch.nn.Identity: it returns its input.
type Identity struct{ stateless }

// Forward returns x.
func (Identity) Forward(x *tensor.Tensor) *tensor.Tensor {
	need("Identity", "x", x)
	return x
}

// activationByName returns the layer PyTorch's transformer layers name
// by a string ("relu", "gelu"); it panics with ErrArgument for another
// name, as PyTorch raises RuntimeError.
func activationByName(op, name string) Layer {
	switch name {
	case "relu":
		return ReLU{}
	case "gelu":
		return GELU{}
	}
	fail(op, tensor.ErrArgument, fmt.Sprintf("activation should be relu/gelu, not %q", name))
	return nil
}
