package tensor_test

import (
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

// TestScatterAddSmallIndexSrcGrad checks the src gradient of ScatterAdd
// when index is smaller than src, which torch 1.13 gets wrong (so the
// reference case scatter_add/f64_index_smaller_than_src has none): it is
// the upstream gradient gathered at index, zero where index does not
// reach.
func TestScatterAddSmallIndexSrcGrad(t *testing.T) {
	var c torchref.Case
	for _, k := range torchref.ByOp(torchref.MustLoad(t, "index"), "scatter_add") {
		if k.Name == "scatter_add/f64_index_smaller_than_src" {
			c = k
		}
	}
	if c.Name == "" {
		t.Fatal("reference case scatter_add/f64_index_smaller_than_src is gone")
	}
	if c.Int("dim") != 0 || len(c.Inputs[1].Shape) != 2 {
		t.Fatalf("case changed: dim %d, index shape %v", c.Int("dim"), c.Inputs[1].Shape)
	}
	x := torchTensor(t, c.Inputs[0]).SetRequiresGrad(true)
	idx := torchTensor(t, c.Inputs[1])
	src := torchTensor(t, c.Inputs[2]).SetRequiresGrad(true)
	out := x.ScatterAdd(0, idx, src)
	compareTorch(t, "output", out, c.Outputs[0], tolerance{})
	g := c.GradOutputs[0]
	autograd.Backward(out.Mul(torchTensor(t, g)).Sum())

	rows, cols := c.Inputs[1].Shape[0], c.Inputs[1].Shape[1]
	sShape := c.Inputs[2].Shape
	want := make([]float64, sShape[0]*sShape[1])
	index := c.Inputs[1].Ints()
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			want[i*sShape[1]+j] = g.Data[index[i*cols+j]*g.Shape[1]+j]
		}
	}
	if gs := src.Grad(); gs == nil || !slices.Equal(gs.Shape(), sShape) || !slices.Equal(gs.Float64s(), want) {
		t.Errorf("src grad = %v, want %v %v", gs, sShape, want)
	}
	compareTorch(t, "x grad", x.Grad(), *c.Grads[0], tolerance{})

	// Finite differences agree, for both inputs.
	err := autograd.Check(func(xs []*tensor.Tensor) *tensor.Tensor {
		return xs[0].ScatterAdd(0, idx, xs[1])
	}, []*tensor.Tensor{x, src}, autograd.CheckOptions{})
	if err != nil {
		t.Error(err)
	}
}
