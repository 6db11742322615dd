package nn

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// A Module is a layer or a model: it names the tensors it holds (its
// slots: parameters and buffers) and the modules it is made of (its
// children). Everything else (Parameters, StateDict, To, Train, Freeze,
// ...) is a function of this package that walks the tree, as
// torch.nn.Module's methods walk _parameters, _buffers and _modules.
//
// A slot points at the field that holds its tensor, so that To can
// replace a leaf by its copy on another device; a nil tensor (a layer
// built without a bias) is left out, as PyTorch leaves out a None
// parameter. Names must be non-empty, hold no ".", and be unique among a
// module's slots and children: the functions that walk a module panic
// with ErrArgument otherwise, and for a nil child or a module that
// contains itself.
type Module interface {
	// Slots returns the module's own parameters and buffers, not its
	// children's, in a fixed order.
	Slots() []Slot
	// Children returns the module's direct sub-modules in a fixed order.
	Children() []Child
}

// A Layer is a Module that maps one tensor to one tensor, so that layers
// compose in a Sequential.
type Layer interface {
	Module
	Forward(x *tensor.Tensor) *tensor.Tensor
}

// A ModeSetter is a module that behaves differently in training and in
// evaluation (dropout; batch norm's statistics). Train and Eval call
// SetTraining on every module of a tree that implements it.
type ModeSetter interface {
	SetTraining(on bool)
}

// A Slot names a field of a module that holds a tensor: a parameter (a
// leaf that requires grad, learnt by an optimizer) or, when Buffer is
// true, a buffer (state such as running statistics, saved in the state
// dict but not learnt).
type Slot struct {
	Name   string
	Ptr    **tensor.Tensor
	Buffer bool
}

// Param returns the Slot of parameter name held in *p.
func Param(name string, p **tensor.Tensor) Slot { return Slot{Name: name, Ptr: p} }

// Buffer returns the Slot of buffer name held in *b. A buffer must be
// kept out of every tensor.Scope (Keep) by the module that creates it.
func Buffer(name string, b **tensor.Tensor) Slot { return Slot{Name: name, Ptr: b, Buffer: true} }

// A Child is a named sub-module.
type Child struct {
	Name   string
	Module Module
}

// uniformParam returns a parameter of shape drawn from U(-bound, bound)
// with opts (dtype, device, generator; Float32 on the CPU by default).
func uniformParam(shape []int, bound float64, opts []tensor.Option) *tensor.Tensor {
	return tensor.Uniform(shape, -bound, bound, opts...).SetRequiresGrad(true)
}

// LinearLayer is torch.nn.Linear: y = x·Weightᵀ + Bias, with Weight
// (out, in) and Bias (out), or no bias when Bias is nil. Its state-dict
// names are "weight" and "bias".
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
func (l *LinearLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("LinearLayer.Forward", l)
	return Linear(x, l.Weight, l.Bias)
}

// Slots returns "weight" and "bias".
func (l *LinearLayer) Slots() []Slot {
	receiver("LinearLayer.Slots", l)
	return []Slot{Param("weight", &l.Weight), Param("bias", &l.Bias)}
}

// Children returns nil: a linear layer has none.
func (l *LinearLayer) Children() []Child {
	receiver("LinearLayer.Children", l)
	return nil
}

// EmbeddingLayer is torch.nn.Embedding: a lookup table Weight
// (num, dim) indexed by Int32 indices; its state-dict name is "weight".
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
	receiver("EmbeddingLayer.Forward", e)
	return Embedding(e.Weight, indices)
}

// Slots returns "weight".
func (e *EmbeddingLayer) Slots() []Slot {
	receiver("EmbeddingLayer.Slots", e)
	return []Slot{Param("weight", &e.Weight)}
}

// Children returns nil.
func (e *EmbeddingLayer) Children() []Child {
	receiver("EmbeddingLayer.Children", e)
	return nil
}

// LayerNormLayer is torch.nn.LayerNorm over the trailing dimensions
// Shape, with elementwise Weight (ones) and Bias (zeros) of that shape,
// or none when they are nil; their state-dict names are "weight" and
// "bias".
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
	receiver("LayerNormLayer.Forward", l)
	return LayerNorm(x, l.Shape, l.Weight, l.Bias, l.Eps)
}

// Slots returns "weight" and "bias".
func (l *LayerNormLayer) Slots() []Slot {
	receiver("LayerNormLayer.Slots", l)
	return []Slot{Param("weight", &l.Weight), Param("bias", &l.Bias)}
}

// Children returns nil.
func (l *LayerNormLayer) Children() []Child {
	receiver("LayerNormLayer.Children", l)
	return nil
}

// DropoutLayer is torch.nn.Dropout: Dropout(x, P, Training, Gen).
// Training starts true; Train and Eval switch it.
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
	receiver("DropoutLayer.Forward", d)
	return Dropout(x, d.P, d.Training, d.Gen)
}

// Slots returns nil: dropout holds no tensor.
func (d *DropoutLayer) Slots() []Slot {
	receiver("DropoutLayer.Slots", d)
	return nil
}

// Children returns nil.
func (d *DropoutLayer) Children() []Child {
	receiver("DropoutLayer.Children", d)
	return nil
}

// SetTraining switches between training (true) and evaluation.
func (d *DropoutLayer) SetTraining(on bool) {
	receiver("DropoutLayer.SetTraining", d)
	d.Training = on
}

// Func adapts a function without parameters, such as
// (*tensor.Tensor).ReLU, to a Layer.
type Func func(x *tensor.Tensor) *tensor.Tensor

// Forward returns f(x).
func (f Func) Forward(x *tensor.Tensor) *tensor.Tensor {
	if f == nil {
		fail("Func.Forward", tensor.ErrArgument, "the receiver is a nil Func")
	}
	return f(x)
}

// Slots returns nil.
func (f Func) Slots() []Slot { return nil }

// Children returns nil.
func (f Func) Children() []Child { return nil }
