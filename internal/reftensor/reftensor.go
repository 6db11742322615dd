// Package reftensor turns the PyTorch reference tensors of
// internal/torchref into Tessera tensors, for the reference tests of
// every package: the base tensor of an input, and its view chain applied
// with Tessera's own view methods so that views and their gradients are
// exercised the way the reference computed them.
package reftensor

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

// DType returns the Tessera dtype of a reference dtype name; int64
// becomes Int32, Tessera's index type.
func DType(name string) (tensor.DType, error) {
	switch name {
	case "float32":
		return tensor.Float32, nil
	case "float64":
		return tensor.Float64, nil
	case "int32", "int64":
		return tensor.Int32, nil
	case "bool":
		return tensor.Bool, nil
	}
	return 0, fmt.Errorf("reftensor: unknown reference dtype %q", name)
}

// Base returns x's data as a contiguous CPU tensor of x's shape and
// dtype: the base of an input, before its view chain.
func Base(x torchref.Tensor) (*tensor.Tensor, error) {
	dt, err := DType(x.DType)
	if err != nil {
		return nil, err
	}
	// Non-nil even when empty: tensor.New reads a nil shape as 1-D and
	// an empty one as 0-d.
	shape := append(make([]int, 0, len(x.Shape)), x.Shape...)
	switch dt {
	case tensor.Float32:
		return tensor.New(x.Float32s(), shape...), nil
	case tensor.Float64:
		return tensor.New(append([]float64(nil), x.Data...), shape...), nil
	case tensor.Int32:
		return tensor.FromInt64s(x.Int64s(), shape...), nil
	}
	return tensor.New(x.Bools(), shape...), nil
}

// Views applies x's view chain to base with Tessera's view methods.
func Views(base *tensor.Tensor, x torchref.Tensor) (*tensor.Tensor, error) {
	ops, err := x.ViewOps()
	if err != nil {
		return nil, err
	}
	v := base
	for _, op := range ops {
		a := op.Args
		switch op.Kind {
		case "transpose":
			v = v.Transpose(a[0], a[1])
		case "slice":
			v = v.Slice(a[0], a[1], a[2], a[3])
		case "expand":
			v = v.Expand(a...)
		case "select":
			v = v.Select(a[0], a[1])
		case "narrow":
			v = v.Narrow(a[0], a[1], a[2])
		case "permute":
			v = v.Permute(a...)
		case "unsqueeze":
			v = v.Unsqueeze(a[0])
		default:
			return nil, fmt.Errorf("reftensor: unknown view step %q", op.Kind)
		}
	}
	return v, nil
}
