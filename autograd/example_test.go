package autograd_test

import (
	"fmt"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// y = Σ x² + 5x + 4, so dy/dx = 2x + 5.
func ExampleBackward() {
	x := tensor.New([]float64{3, 1, 4}).SetRequiresGrad(true)
	y := x.Square().Add(x.MulScalar(5)).AddScalar(4).Sum()
	autograd.Backward(y)
	fmt.Println(y.Item(), x.Grad().Float64s())
	// Output: 78 [11 7 13]
}

// Grad returns gradients without touching Grad(); CreateGraph makes them
// differentiable again: for y = x³, dy/dx = 3x² and d²y/dx² = 6x.
func ExampleGrad() {
	x := tensor.New([]float64{1, 2}).SetRequiresGrad(true)
	y := x.PowScalar(3).Sum()
	dx := autograd.Grad(y, []*tensor.Tensor{x}, autograd.CreateGraph())[0]
	d2x := autograd.Grad(dx.Sum(), []*tensor.Tensor{x})[0]
	fmt.Println(dx.Float64s(), d2x.Float64s(), x.Grad())
	// Output: [3 12] [6 12] <nil>
}

// Check compares the gradients of a function of several inputs with
// central finite differences; f may return a non-scalar.
func ExampleCheck() {
	a := tensor.New([]float64{0.5, -1, 2, 0.25, -0.75, 1.5}, 2, 3).SetRequiresGrad(true)
	b := tensor.New([]float64{1, -2, 0.5}, 3).SetRequiresGrad(true)
	f := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].Mul(xs[1]).Tanh() }
	fmt.Println(autograd.Check(f, []*tensor.Tensor{a, b}, autograd.CheckOptions{}))
	fmt.Println(autograd.CheckSecondOrder(f, []*tensor.Tensor{a, b}, autograd.CheckOptions{}))
	// Output:
	// <nil>
	// <nil>
}

// JVP pushes a tangent forward: for y = x², J·v = 2x⊙v.
func ExampleJVP() {
	x := tensor.New([]float64{1, 2, 3})
	v := tensor.New([]float64{1, 0.5, -1})
	square := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].Square() }
	y, jv := autograd.JVP(square, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	fmt.Println(y.Float64s(), jv.Float64s())
	// Output: [1 4 9] [2 2 -6]
}

// Hessian and HVP of f = Σ x³: H = diag(6x).
func ExampleHessian() {
	x := tensor.New([]float64{1, 2})
	cubes := func(xs []*tensor.Tensor) *tensor.Tensor { return xs[0].PowScalar(3).Sum() }
	h := autograd.Hessian(cubes, []*tensor.Tensor{x})
	_, hv := autograd.HVP(cubes, []*tensor.Tensor{x}, []*tensor.Tensor{tensor.New([]float64{1, 1})})
	fmt.Println(h[0][0].Shape(), h[0][0].Float64s(), hv[0].Float64s())
	// Output: [2 2] [6 0 0 12] [6 12]
}
