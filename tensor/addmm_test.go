package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
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

// TestAddmmErrors checks Addmm's typed errors for bad shapes.
func TestAddmmErrors(t *testing.T) {
	x := func(s ...int) *tensor.Tensor { return tensor.Zeros(s) }
	for name, f := range map[string]func(){
		"1-D a":         func() { tensor.Addmm(x(3), x(3), x(3, 3)) },
		"inner dims":    func() { tensor.Addmm(x(3), x(2, 4), x(3, 3)) },
		"input too big": func() { tensor.Addmm(x(2, 2, 3), x(2, 4), x(4, 3)) },
		"input columns": func() { tensor.Addmm(x(4), x(2, 4), x(4, 3)) },
	} {
		err := tensor.Catch(f)
		if !errors.Is(err, tensor.ErrShape) {
			t.Errorf("%s: %v, want ErrShape", name, err)
		}
	}
}
