package nn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// TestSequentialLinearReLU checks that Sequential runs a LinearLayer and
// the ReLU after it as one AddmmReLU, with the values and gradients of
// the layers run one by one, bit for bit, for each way of writing the
// ReLU; and that it leaves other pairs alone.
func TestSequentialLinearReLU(t *testing.T) {
	g := tensor.NewGenerator(3)
	opts := []tensor.Option{tensor.WithGenerator(g)}
	l1, l2 := NewLinear(33, 40, opts...), NewLinear(40, 7, opts...)
	x := tensor.Randn([]int{9, 33}, opts...)
	params := []*tensor.Tensor{l1.Weight, l1.Bias, l2.Weight, l2.Bias}
	run := func(f func() *tensor.Tensor) (out []float64, grads [][]float64) {
		for _, p := range params {
			p.SetGrad(nil)
		}
		y := f()
		autograd.Backward(y.Square().Sum())
		for _, p := range params {
			grads = append(grads, p.Grad().Float64s())
		}
		return y.Float64s(), grads
	}
	want, wantGrads := run(func() *tensor.Tensor { return l2.Forward(l1.Forward(x).ReLU()) })
	for name, relu := range map[string]Layer{"ReLU": ReLU{}, "*ReLU": &ReLU{}, "Func": Func((*tensor.Tensor).ReLU)} {
		if !isReLU(relu) {
			t.Fatalf("%s: not seen as a ReLU", name)
		}
		s := NewSequential(l1, relu, l2)
		var ops []tensor.Op
		got, grads := run(func() *tensor.Tensor {
			y := s.Forward(x)
			for n := y.Source(); n != nil; n = n.Inputs[1].Source() { // l2's Addmm, then what made its a
				ops = append(ops, n.Op)
			}
			return y
		})
		if len(ops) != 2 || ops[0] != tensor.OpAddmm || ops[1] != tensor.OpAddmmReLU {
			t.Errorf("%s: recorded %v, want [Addmm AddmmReLU]", name, ops)
		}
		if !sameBits(got, want) {
			t.Errorf("%s: values differ from the layers one by one", name)
		}
		for i := range grads {
			if !sameBits(grads[i], wantGrads[i]) {
				t.Errorf("%s: the gradient of parameter %d differs from the layers one by one", name, i)
			}
		}
	}
	for name, l := range map[string]Layer{
		"GELU": GELU{}, "a closure": Func(func(x *tensor.Tensor) *tensor.Tensor { return x.ReLU() }),
		"nil *ReLU": (*ReLU)(nil), "nil Func": Func(nil),
	} {
		if isReLU(l) {
			t.Errorf("%s: seen as a ReLU", name)
		}
	}
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// TestSequentialLinearReLUErrors checks that the fused pair fails as the
// layers one by one do: an input of the wrong width is ErrShape naming
// Linear, and a nil input ErrArgument.
func TestSequentialLinearReLUErrors(t *testing.T) {
	s := NewSequential(NewLinear(5, 4), ReLU{}, NewLinear(4, 2))
	for name, c := range map[string]struct {
		x    *tensor.Tensor
		want error
	}{
		"width": {tensor.Zeros([]int{3, 6}), tensor.ErrShape},
		"nil":   {nil, tensor.ErrArgument},
	} {
		err := tensor.Catch(func() { s.Forward(c.x) })
		unfused := tensor.Catch(func() {
			NewSequential(s.Layers[0], Func(func(x *tensor.Tensor) *tensor.Tensor { return x.ReLU() })).Forward(c.x)
		})
		if !errors.Is(err, c.want) || !errors.Is(unfused, c.want) {
			t.Errorf("%s: fused %v, unfused %v, want %v", name, err, unfused, c.want)
		}
		if c.want == tensor.ErrShape && !strings.Contains(err.Error(), "Linear") {
			t.Errorf("%s: %q does not name Linear", name, err)
		}
	}
}
