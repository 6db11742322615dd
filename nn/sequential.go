package nn

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// Sequential applies its layers in order, as torch.nn.Sequential. Its
// children are the layers, named by Names (PyTorch's
// Sequential(OrderedDict(...))) or, when Names is nil, by their indices
// "0", "1", …; a state dict then reads "0.weight", "2.bias", … as
// PyTorch's does for the same architecture.
type Sequential struct {
	Layers []Layer
	Names  []string // nil, or one name per layer
}

// NewSequential returns a Sequential of layers named "0", "1", ….
func NewSequential(layers ...Layer) *Sequential { return &Sequential{Layers: layers} }

// Add appends l under name and returns s, as add_module on PyTorch's
// Sequential (or an entry of its OrderedDict): name "" means the
// layer's index, as PyTorch's append names it. It panics with
// ErrArgument for a name that holds a "." or is already taken.
func (s *Sequential) Add(name string, l Layer) *Sequential {
	receiver("Sequential.Add", s)
	if name == "" {
		name = strconv.Itoa(len(s.Layers))
	}
	if s.Names == nil {
		s.Names = make([]string, len(s.Layers))
		for i := range s.Layers {
			s.Names[i] = strconv.Itoa(i)
		}
	}
	if strings.Contains(name, ".") || slices.Contains(s.Names, name) {
		fail("Sequential.Add", tensor.ErrArgument, fmt.Sprintf("layer name %q holds a \".\" or is already taken (names %q)", name, s.Names))
	}
	s.Layers = append(s.Layers, l)
	s.Names = append(s.Names, name)
	return s
}

// Forward feeds x through every layer in turn. A LinearLayer with a
// bias followed by a ReLU (the ReLU layer, or a Func of the method
// (*tensor.Tensor).ReLU itself) on a matrix x runs as one op,
// tensor.AddmmReLU: the same values and gradients, with the bias and the
// ReLU applied as the CPU's GEMM stores the product. It panics with
// ErrArgument for a nil layer.
func (s *Sequential) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("Sequential.Forward", s)
	for i := 0; i < len(s.Layers); i++ {
		l := s.Layers[i]
		if l == nil {
			fail("Sequential", tensor.ErrArgument, fmt.Sprintf("layer %d is nil", i))
		}
		if lin, ok := l.(*LinearLayer); ok && lin != nil && lin.Bias != nil && x != nil && x.Dim() == 2 &&
			i+1 < len(s.Layers) && isReLU(s.Layers[i+1]) {
			x = linearReLU(x, lin.Weight, lin.Bias)
			i++
			continue
		}
		x = l.Forward(x)
	}
	return x
}

// reluMethod is the code of (*tensor.Tensor).ReLU, which isReLU looks
// for in a Func.
var reluMethod = reflect.ValueOf((*tensor.Tensor).ReLU).Pointer()

// isReLU reports whether l is a ReLU: the ReLU layer, or a Func of the
// method (*tensor.Tensor).ReLU (NewMLP's activation).
func isReLU(l Layer) bool {
	switch l := l.(type) {
	case ReLU:
		return true
	case *ReLU:
		return l != nil
	case Func:
		return l != nil && reflect.ValueOf(l).Pointer() == reluMethod
	}
	return false
}

// Slots returns nil: a Sequential holds its layers' tensors, not its
// own.
func (s *Sequential) Slots() []Slot {
	receiver("Sequential.Slots", s)
	return nil
}

// Children returns the layers under their names. It panics with
// ErrArgument when Names is neither nil nor one name per layer.
func (s *Sequential) Children() []Child {
	receiver("Sequential.Children", s)
	if s.Names != nil && len(s.Names) != len(s.Layers) {
		fail("Sequential", tensor.ErrArgument, fmt.Sprintf("%d names for %d layers", len(s.Names), len(s.Layers)))
	}
	out := make([]Child, len(s.Layers))
	for i, l := range s.Layers {
		name := strconv.Itoa(i)
		if s.Names != nil {
			name = s.Names[i]
		}
		out[i] = Child{Name: name, Module: l}
	}
	return out
}

// NewMLP returns a multi-layer perceptron: LinearLayers from sizes[i] to
// sizes[i+1] with activation between them (not after the last); a nil
// activation means none. Its state-dict names are those of
// torch.nn.Sequential(Linear, act, Linear, ...): "0.weight", "0.bias",
// "2.weight", …. opts are those of NewLinear. It panics with ErrArgument
// when sizes has fewer than two entries.
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
