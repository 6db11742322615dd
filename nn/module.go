package nn

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// A Module owns parameters: leaves that require grad, kept out of every
// tensor.Scope.
type Module interface {
	// Parameters returns the module's parameters, in a fixed order.
	Parameters() []*tensor.Tensor
	// To moves the parameters to dev (new leaves replace the old ones:
	// call it before handing Parameters to an optimizer). It panics with
	// ErrDevice when dev is unavailable and ErrDType for float64
	// parameters and a GPU.
	To(dev tensor.Device)
}

// A Layer is a Module that maps one tensor to one tensor, so that
// layers compose in a Sequential.
type Layer interface {
	Module
	Forward(x *tensor.Tensor) *tensor.Tensor
}

// uniformParam returns a parameter of shape drawn from U(-bound, bound)
// with opts (dtype, device, generator; Float32 on the CPU by default).
func uniformParam(shape []int, bound float64, opts []tensor.Option) *tensor.Tensor {
	return tensor.Uniform(shape, -bound, bound, opts...).SetRequiresGrad(true)
}

// moveParam replaces *p by a copy on dev that requires grad like *p.
func moveParam(p **tensor.Tensor, dev tensor.Device) {
	t := *p
	if t == nil || t.Device() == dev {
		return
	}
	var moved *tensor.Tensor
	t.Context().NoGrad(func() { moved = t.Detach().To(dev) })
	*p = moved.SetRequiresGrad(t.RequiresGrad())
}

// params returns the non-nil tensors of ps.
func params(ps ...*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, 0, len(ps))
	for _, p := range ps {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// LinearLayer is torch.nn.Linear: y = x·Weightᵀ + Bias, with Weight
// (out, in) and Bias (out), or no bias when Bias is nil.
type LinearLayer struct {
	Weight, Bias *tensor.Tensor
}

// NewLinear returns a LinearLayer from in to out features, initialised as
// PyTorch does (Kaiming-uniform with a = √5): Weight and Bias are drawn
// from U(-1/√in, 1/√in) (the bias bound is 0 when in is 0). opts set the
// dtype, device and generator (tensor.Of, tensor.On,
// tensor.WithGenerator); the default is Float32 on the CPU. It panics
// with ErrArgument for a negative size.
func NewLinear(in, out int, opts ...tensor.Option) *LinearLayer {
	checkSizes("NewLinear", in, out)
	bound := 0.0
	if in > 0 {
		bound = 1 / math.Sqrt(float64(in))
	}
	return &LinearLayer{
		Weight: uniformParam([]int{out, in}, bound, opts),
		Bias:   uniformParam([]int{out}, bound, opts),
	}
}

// Forward returns Linear(x, l.Weight, l.Bias): (..., in) → (..., out).
func (l *LinearLayer) Forward(x *tensor.Tensor) *tensor.Tensor { return Linear(x, l.Weight, l.Bias) }

// Parameters returns Weight and, if present, Bias.
func (l *LinearLayer) Parameters() []*tensor.Tensor { return params(l.Weight, l.Bias) }

// To moves the parameters to dev.
func (l *LinearLayer) To(dev tensor.Device) { moveParam(&l.Weight, dev); moveParam(&l.Bias, dev) }

// EmbeddingLayer is torch.nn.Embedding: a lookup table Weight
// (num, dim) indexed by Int32 indices.
type EmbeddingLayer struct {
	Weight *tensor.Tensor
}

// NewEmbedding returns an EmbeddingLayer of num vectors of size dim drawn
// from N(0, 1), as PyTorch initialises it. opts are those of NewLinear.
// It panics with ErrArgument for a negative size.
func NewEmbedding(num, dim int, opts ...tensor.Option) *EmbeddingLayer {
	checkSizes("NewEmbedding", num, dim)
	return &EmbeddingLayer{Weight: tensor.Normal([]int{num, dim}, 0, 1, opts...).SetRequiresGrad(true)}
}

// Forward returns Embedding(e.Weight, indices): shape indices + (dim).
func (e *EmbeddingLayer) Forward(indices *tensor.Tensor) *tensor.Tensor {
	return Embedding(e.Weight, indices)
}

// Parameters returns Weight.
func (e *EmbeddingLayer) Parameters() []*tensor.Tensor { return params(e.Weight) }

// To moves the parameters to dev.
func (e *EmbeddingLayer) To(dev tensor.Device) { moveParam(&e.Weight, dev) }

// LayerNormLayer is torch.nn.LayerNorm over the trailing dimensions
// Shape, with elementwise Weight (ones) and Bias (zeros) of that shape,
// or none when they are nil.
type LayerNormLayer struct {
	Shape        []int
	Weight, Bias *tensor.Tensor
	Eps          float64
}

// NewLayerNorm returns a LayerNormLayer over shape with eps 1e-5 and
// affine parameters initialised to ones and zeros. opts set the dtype
// and device. It panics with ErrArgument for a negative size.
func NewLayerNorm(shape []int, opts ...tensor.Option) *LayerNormLayer {
	checkSizes("NewLayerNorm", shape...)
	return &LayerNormLayer{
		Shape:  append([]int(nil), shape...),
		Weight: tensor.Ones(shape, opts...).SetRequiresGrad(true),
		Bias:   tensor.Zeros(shape, opts...).SetRequiresGrad(true),
		Eps:    1e-5,
	}
}

// Forward returns LayerNorm(x, l.Shape, l.Weight, l.Bias, l.Eps).
func (l *LayerNormLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	return LayerNorm(x, l.Shape, l.Weight, l.Bias, l.Eps)
}

// Parameters returns Weight and Bias, those that are not nil.
func (l *LayerNormLayer) Parameters() []*tensor.Tensor { return params(l.Weight, l.Bias) }

// To moves the parameters to dev.
func (l *LayerNormLayer) To(dev tensor.Device) { moveParam(&l.Weight, dev); moveParam(&l.Bias, dev) }

// DropoutLayer is torch.nn.Dropout: Dropout(x, P, Training, Gen).
// Training starts true; Sequential.SetTraining switches it.
type DropoutLayer struct {
	P        float64
	Training bool
	Gen      *tensor.Generator // nil: the default generator
}

// NewDropout returns a DropoutLayer with probability p, in training mode.
// It panics with ErrArgument unless 0 <= p <= 1, as torch.nn.Dropout.
func NewDropout(p float64) *DropoutLayer {
	if !(p >= 0 && p <= 1) {
		fail("NewDropout", tensor.ErrArgument, fmt.Sprintf("dropout probability has to be between 0 and 1, but got %g", p))
	}
	return &DropoutLayer{P: p, Training: true}
}

// Forward returns Dropout(x, d.P, d.Training, d.Gen).
func (d *DropoutLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	return Dropout(x, d.P, d.Training, d.Gen)
}

// Parameters returns nil: dropout has none.
func (d *DropoutLayer) Parameters() []*tensor.Tensor { return nil }

// To does nothing: dropout has no parameters.
func (d *DropoutLayer) To(tensor.Device) {}

// SetTraining switches between training (true) and evaluation.
func (d *DropoutLayer) SetTraining(on bool) { d.Training = on }

// Func adapts a function without parameters, such as
// (*tensor.Tensor).ReLU, to a Layer.
type Func func(x *tensor.Tensor) *tensor.Tensor

// Forward returns f(x).
func (f Func) Forward(x *tensor.Tensor) *tensor.Tensor { return f(x) }

// Parameters returns nil.
func (f Func) Parameters() []*tensor.Tensor { return nil }

// To does nothing.
func (f Func) To(tensor.Device) {}

// Sequential applies its layers in order, as torch.nn.Sequential.
type Sequential struct {
	Layers []Layer
}

// NewSequential returns a Sequential of layers.
func NewSequential(layers ...Layer) *Sequential { return &Sequential{Layers: layers} }

// Forward feeds x through every layer in turn.
func (s *Sequential) Forward(x *tensor.Tensor) *tensor.Tensor {
	for i, l := range s.Layers {
		if l == nil {
			fail("Sequential", tensor.ErrArgument, fmt.Sprintf("layer %d is nil", i))
		}
		x = l.Forward(x)
	}
	return x
}

// Parameters returns the parameters of every layer, in layer order.
func (s *Sequential) Parameters() []*tensor.Tensor {
	var out []*tensor.Tensor
	for _, l := range s.Layers {
		out = append(out, l.Parameters()...)
	}
	return out
}

// To moves every layer to dev.
func (s *Sequential) To(dev tensor.Device) {
	for _, l := range s.Layers {
		l.To(dev)
	}
}

// SetTraining switches every layer that has a training mode (dropout,
// nested Sequentials) to training (true) or evaluation (false).
func (s *Sequential) SetTraining(on bool) {
	for _, l := range s.Layers {
		if t, ok := l.(interface{ SetTraining(bool) }); ok {
			t.SetTraining(on)
		}
	}
}

// NewMLP returns a multi-layer perceptron: LinearLayers from sizes[i] to
// sizes[i+1] with activation between them (not after the last); a nil
// activation means none. opts are those of NewLinear. It panics with
// ErrArgument when sizes has fewer than two entries.
func NewMLP(sizes []int, activation func(*tensor.Tensor) *tensor.Tensor, opts ...tensor.Option) *Sequential {
	if len(sizes) < 2 {
		fail("NewMLP", tensor.ErrArgument, "an MLP needs at least an input and an output size")
	}
	s := &Sequential{}
	for i := 0; i+1 < len(sizes); i++ {
		if i > 0 && activation != nil {
			s.Layers = append(s.Layers, Func(activation))
		}
		s.Layers = append(s.Layers, NewLinear(sizes[i], sizes[i+1], opts...))
	}
	return s
}
