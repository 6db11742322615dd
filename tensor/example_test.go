package tensor_test

import (
	"errors"
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// Misuse panics with an *Error; Catch turns the panic into an error that
// names the op, the operands and the kind of mistake.
func ExampleCatch() {
	a := tensor.Zeros([]int{2, 3})
	b := tensor.Zeros([]int{4, 5})
	err := tensor.Catch(func() { a.MatMul(b) })
	fmt.Println(err)
	fmt.Println(errors.Is(err, tensor.ErrShape))

	err = tensor.Catch(func() { a.Select(0, 2) })
	fmt.Println(err)

	fmt.Println(tensor.Catch(func() { a.MatMul(b.T()) }))
	// Output:
	// tensor.MatMul: shape mismatch: inner dimensions differ: 3 and 4 (operands [2 3] float32 on cpu, [4 5] float32 on cpu)
	// true
	// tensor.Select: index out of range: index 2 is out of bounds for dimension 0 with size 2 (operands [2 3] float32 on cpu)
	// tensor.MatMul: shape mismatch: inner dimensions differ: 3 and 5 (operands [2 3] float32 on cpu, [5 4] float32 on cpu)
}

// A Scope releases the temporaries of a step when it ends; what it
// returns, and parameters, survive.
func ExampleScopeResult() {
	w := tensor.New([]float32{1, 2, 3, 4}, 2, 2).SetRequiresGrad(true) // a parameter: never released by a Scope
	var tmp *tensor.Tensor
	y := tensor.ScopeResult(func() *tensor.Tensor {
		tmp = w.MatMul(w)
		return tmp.Sum()
	})
	fmt.Println(y.Item())
	fmt.Println(w.Sum().Item())
	fmt.Println(errors.Is(tensor.Catch(func() { tmp.Sum() }), tensor.ErrReleased))
	// Output:
	// 54
	// 10
	// true
}

// Integer ranges are Int32, Tessera's integer type (PyTorch: int64).
func ExampleArange() {
	fmt.Println(tensor.Arange(0, 5, 1))
	fmt.Println(tensor.Arange(0, 1, 0.25))
	// Output:
	// tensor([0, 1, 2, 3, 4], dtype=int32)
	// tensor([0.0000, 0.2500, 0.5000, 0.7500])
}
