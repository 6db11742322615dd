package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// TestAddmmMatchesMatMulAdd checks that Addmm (and AddmmReLU) on the CPU
// give, bit for bit, MatMul followed by Add (and ReLU), and the same
// gradients: for bias rows that
// go through the GEMM's epilogue (Float32, more than 16 columns, the
// linear layer's transposed weight among them) and inputs that do not
// (a full or column input, 10 columns, Float64), with NaN and Inf in the
// bias.
func TestAddmmMatchesMatMulAdd(t *testing.T) {
	g := tensor.NewGenerator(5)
	for _, c := range []struct {
		input   []int
		m, k, n int
		wT      bool // b is the transpose of an (n, k) weight
		dt      tensor.DType
	}{
		{[]int{65}, 7, 33, 65, false, tensor.Float32},
		{[]int{20}, 65, 33, 20, true, tensor.Float32},
		{[]int{1, 33}, 9, 7, 33, false, tensor.Float32},
		{[]int{512}, 33, 129, 512, true, tensor.Float32}, // split across goroutines
		{[]int{10}, 33, 65, 10, true, tensor.Float32},
		{[]int{7, 33}, 7, 5, 33, false, tensor.Float32},
		{[]int{7, 1}, 7, 5, 33, false, tensor.Float32},
		{[]int{65}, 7, 33, 65, true, tensor.Float64},
	} {
		t.Run(fmt.Sprintf("%v+%dx%dx%d,wT=%v,%v", c.input, c.m, c.k, c.n, c.wT, c.dt), func(t *testing.T) {
			opts := []tensor.Option{tensor.Of(c.dt), tensor.WithGenerator(g)}
			in := tensor.Randn(c.input, opts...)
			if len(c.input) == 1 {
				vals := in.Float64s()
				vals[0], vals[len(vals)/2] = math.NaN(), math.Inf(-1)
				in = tensor.New(vals, c.input...).Cast(c.dt)
			}
			a := tensor.Randn([]int{c.m, c.k}, opts...)
			b := tensor.Randn([]int{c.k, c.n}, opts...)
			if c.wT {
				b = tensor.Randn([]int{c.n, c.k}, opts...).T()
			}
			leaves := []*tensor.Tensor{in.SetRequiresGrad(true), a.SetRequiresGrad(true), b.Detach().SetRequiresGrad(true)}
			run := func(f func(in, a, b *tensor.Tensor) *tensor.Tensor) (out []float64, grads [][]float64) {
				xs := []*tensor.Tensor{leaves[0].Detach().SetRequiresGrad(true), leaves[1].Detach().SetRequiresGrad(true), leaves[2].Detach().SetRequiresGrad(true)}
				bb := xs[2]
				if c.wT {
					bb = bb.Contiguous().T().Contiguous().T() // the (n, k) weight's transpose, as in a linear layer
				}
				y := f(xs[0], xs[1], bb)
				autograd.Backward(y.Square().Sum())
				for _, x := range xs {
					grads = append(grads, x.Grad().Float64s())
				}
				return y.Float64s(), grads
			}
			same := func(x, y []float64) bool {
				return slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) || p != p && q != q })
			}
			for _, f := range []struct {
				name      string
				fused, by func(in, a, b *tensor.Tensor) *tensor.Tensor
			}{
				{"Addmm", tensor.Addmm, func(in, a, b *tensor.Tensor) *tensor.Tensor { return a.MatMul(b).Add(in) }},
				{"AddmmReLU", tensor.AddmmReLU, func(in, a, b *tensor.Tensor) *tensor.Tensor { return a.MatMul(b).Add(in).ReLU() }},
			} {
				got, gg := run(f.fused)
				want, wg := run(f.by)
				if !same(got, want) {
					t.Fatalf("%s differs from the ops one by one", f.name)
				}
				for i := range gg {
					if !same(gg[i], wg[i]) {
						t.Fatalf("%s: the gradient of input %d differs from the ops one by one", f.name, i)
					}
				}
			}
		})
	}
}

// TestAddmmErrors checks the typed errors of Addmm and AddmmReLU for bad
// shapes and a nil operand, each naming the op.
func TestAddmmErrors(t *testing.T) {
	x := func(s ...int) *tensor.Tensor { return tensor.Zeros(s) }
	for _, op := range []struct {
		name string
		f    func(input, a, b *tensor.Tensor) *tensor.Tensor
	}{{"Addmm", tensor.Addmm}, {"AddmmReLU", tensor.AddmmReLU}} {
		for name, c := range map[string]struct {
			input, a, b *tensor.Tensor
			want        error
		}{
			"1-D a":         {x(3), x(3), x(3, 3), tensor.ErrShape},
			"inner dims":    {x(3), x(2, 4), x(3, 3), tensor.ErrShape},
			"input too big": {x(2, 2, 3), x(2, 4), x(4, 3), tensor.ErrShape},
			"input columns": {x(4), x(2, 4), x(4, 3), tensor.ErrShape},
			"nil b":         {x(3), x(2, 4), nil, tensor.ErrArgument},
		} {
			err := tensor.Catch(func() { op.f(c.input, c.a, c.b) })
			if !errors.Is(err, c.want) {
				t.Errorf("%s %s: %v, want %v", op.name, name, err, c.want)
			} else if !strings.Contains(err.Error(), op.name) {
				t.Errorf("%s %s: %q does not name the op", op.name, name, err)
			}
		}
	}
}
