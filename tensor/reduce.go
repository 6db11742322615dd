package tensor

import (
	"math"
	"slices"
)

// reduceDims normalises dims (all dims when empty), rejecting repeats.
func (x *Tensor) reduceDims(op string, dims []int) []int {
	if len(dims) == 0 {
		all := make([]int, x.Dim())
		for i := range all {
			all[i] = i
		}
		return all
	}
	seen := make([]bool, max(x.Dim(), 1))
	out := make([]int, 0, len(dims))
	for _, d := range dims {
		d = x.normDim(op, d)
		if seen[d] {
			failf(op, ErrArgument, []*Tensor{x}, "dim %d appears more than once in %v", d, dims)
		}
		seen[d] = true
		if x.Dim() > 0 {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// emptyDim returns a reduced dim of x (of dims, as reduceDims returns
// them) that has size 0, and whether there is one: a reduction without
// an identity (max, min) is undefined over it, while an empty dim that
// is not reduced just gives an empty result, as in PyTorch.
func emptyDim(x *Tensor, dims []int) (int, bool) {
	for _, d := range dims {
		if x.shape[d] == 0 {
			return d, true
		}
	}
	return 0, false
}

// reducedCount returns the number of elements each output of a
// reduction of x over dims (all when empty) combines.
func (x *Tensor) reducedCount(op string, dims []int) int {
	n := 1
	for _, d := range x.reduceDims(op, dims) {
		n *= x.shape[d]
	}
	return n
}

// keptShape returns x's shape with size 1 on dims.
func keptShape(shape, dims []int) []int {
	out := slices.Clone(shape)
	for _, d := range dims {
		out[d] = 1
	}
	return out
}

// squeezeDims drops the given dims (each of size 1) from t, as a view.
func squeezeDims(t *Tensor, dims []int) *Tensor {
	var shape []int
	for i, d := range t.shape {
		if !slices.Contains(dims, i) {
			shape = append(shape, d)
		}
	}
	return t.Reshape(shape...)
}

// reduce runs a reduction (OpSum, OpAmax, OpAmin) over dims.
func (x *Tensor) reduce(op Op, dims []int, keepDim bool) *Tensor {
	name := op.String()
	defer allocatedFor(name)
	x.nonNil(name, 0)
	x.storage(name)
	dims = x.reduceDims(name, dims)
	dt := op.info().computeType(x.dtype, true)
	x = x.Cast(dt)
	if d, ok := emptyDim(x, dims); !op.info().reduce.emptyOK && ok {
		failf(name, ErrShape, []*Tensor{x}, "%s is undefined over an empty dimension: the reduction has no identity (dimension %d has size 0)", name, d)
	}
	ins := []*Tensor{x}
	out := newResult(dt, keptShape(x.shape, dims), x.Device(), ins)
	backendOf(x.Device()).reduce(op, out, x)
	out = record(out, op, Attrs{Dims: dims, KeepDim: true, Shape: slices.Clone(x.shape)}, ins...)
	if keepDim {
		return out
	}
	return squeezeDims(out, dims)
}

// Sum returns the sum over dims (every dim when none is given), dropping
// the reduced dims. Integer and bool tensors sum to Int32 (PyTorch: int64).
func (x *Tensor) Sum(dims ...int) *Tensor { return x.reduce(OpSum, dims, false) }

// SumDims is Sum with torch's keepdim: reduced dims stay with size 1.
func (x *Tensor) SumDims(dims []int, keepDim bool) *Tensor { return x.reduce(OpSum, dims, keepDim) }

// Mean returns the mean over dims (every dim when none is given).
// Integer tensors give Float32.
func (x *Tensor) Mean(dims ...int) *Tensor { return x.MeanDims(dims, false) }

// MeanDims is Mean with keepdim.
func (x *Tensor) MeanDims(dims []int, keepDim bool) *Tensor {
	x.nonNil("Mean", 0)
	x = x.Cast(floatType(x.dtype))
	n := x.reducedCount("Mean", dims)
	return x.SumDims(dims, keepDim).DivScalar(float64(n))
}

// Max returns the largest element as a 0-d tensor (NaN if any is NaN).
// Its gradient is shared evenly among tied maxima, as in PyTorch.
func (x *Tensor) Max() *Tensor { return x.reduce(OpAmax, nil, false) }

// Min returns the smallest element as a 0-d tensor.
func (x *Tensor) Min() *Tensor { return x.reduce(OpAmin, nil, false) }

// Amax returns the maximum over dims, as torch.amax.
func (x *Tensor) Amax(dims []int, keepDim bool) *Tensor { return x.reduce(OpAmax, dims, keepDim) }

// Amin returns the minimum over dims, as torch.amin.
func (x *Tensor) Amin(dims []int, keepDim bool) *Tensor { return x.reduce(OpAmin, dims, keepDim) }

// argReduce runs MaxDim/MinDim: values and Int32 indices along dim.
func (x *Tensor) argReduce(op Op, dim int, keepDim, wantValues bool) (*Tensor, *Tensor) {
	name := op.String()
	x.nonNil(name, 0)
	x.storage(name)
	x = x.Cast(op.info().computeType(x.dtype, true))
	d := x.normDim(name, dim)
	if x.Dim() == 0 {
		x = x.Reshape(1)
	}
	if x.shape[d] == 0 {
		fail(name, ErrShape, "cannot reduce over an empty dimension", x)
	}
	shape := keptShape(x.shape, []int{d})
	idx := newTensor(Int32, shape, x.Device())
	var vals *Tensor
	if wantValues {
		vals = newTensor(x.dtype, shape, x.Device())
	}
	backendOf(x.Device()).argReduce(op, vals, idx, x, d)
	settle(idx, []*Tensor{x}, nil)
	if vals != nil {
		vals = record(vals, op, Attrs{Dim: d, Index: idx, Shape: slices.Clone(x.shape)}, x)
	}
	if !keepDim {
		idx = squeezeDims(idx, []int{d})
		if vals != nil {
			vals = squeezeDims(vals, []int{d})
		}
	}
	return vals, idx
}

// MaxDim returns the maximum along dim and its index (Int32; PyTorch
// returns int64), the first on ties; NaN counts as the maximum.
func (x *Tensor) MaxDim(dim int, keepDim bool) (values, indices *Tensor) {
	return x.argReduce(OpMaxDim, dim, keepDim, true)
}

// MinDim returns the minimum along dim and its Int32 index.
func (x *Tensor) MinDim(dim int, keepDim bool) (values, indices *Tensor) {
	return x.argReduce(OpMinDim, dim, keepDim, true)
}

// ArgMax returns the Int32 index of the maximum of the flattened tensor.
func (x *Tensor) ArgMax() *Tensor {
	x.nonNil("ArgMax", 0)
	_, i := x.Reshape(-1).argReduce(OpArgMax, 0, false, false)
	return i
}

// ArgMin returns the Int32 index of the minimum of the flattened tensor.
func (x *Tensor) ArgMin() *Tensor {
	x.nonNil("ArgMin", 0)
	_, i := x.Reshape(-1).argReduce(OpArgMin, 0, false, false)
	return i
}

// ArgMaxDim returns the Int32 indices of the maxima along dim.
func (x *Tensor) ArgMaxDim(dim int, keepDim bool) *Tensor {
	_, i := x.argReduce(OpArgMax, dim, keepDim, false)
	return i
}

// ArgMinDim returns the Int32 indices of the minima along dim.
func (x *Tensor) ArgMinDim(dim int, keepDim bool) *Tensor {
	_, i := x.argReduce(OpArgMin, dim, keepDim, false)
	return i
}

// Var returns the variance over dims (all when dims is empty) with
// Bessel's correction: Σ(x-mean)²/max(N-correction, 0). correction 1 is
// PyTorch's default (sample variance); 0 is NumPy's population variance.
// As in PyTorch, a correction of N or more gives +Inf (NaN where every
// deviation is 0), and an empty reduction gives NaN.
func (x *Tensor) Var(dims []int, correction int, keepDim bool) *Tensor {
	x.nonNil("Var", 0)
	x = x.Cast(floatType(x.dtype))
	n := x.reducedCount("Var", dims)
	d := x.Sub(x.MeanDims(dims, true))
	return d.Square().SumDims(dims, keepDim).DivScalar(float64(max(n-correction, 0)))
}

// Std returns the square root of Var. Where the deviation is 0 its
// gradient is 0, as in PyTorch (not the infinite slope of √ at 0).
func (x *Tensor) Std(dims []int, correction int, keepDim bool) *Tensor {
	x.nonNil("Std", 0)
	return sqrtZeroGrad(x.Var(dims, correction, keepDim))
}

// sqrtZeroGrad returns √v whose gradient is 0 where v is 0, the
// convention of PyTorch's std and norm backward. The zeros go through √1
// so that no 0/0 appears in the gradient.
func sqrtZeroGrad(v *Tensor) *Tensor {
	zero := v.Detach().EqScalar(0)
	return v.MaskedFill(zero, 1).Sqrt().MaskedFill(zero, 0)
}

// LogSumExp returns log Σ exp(x) over dims, computed stably by
// subtracting the maximum (rows of -inf give -inf, as in PyTorch).
func (x *Tensor) LogSumExp(dims []int, keepDim bool) *Tensor {
	x.nonNil("LogSumExp", 0)
	x = x.Cast(floatType(x.dtype))
	rd := x.reduceDims("LogSumExp", dims)
	var m *Tensor
	if x.Numel() == 0 { // no max to subtract: an empty sum's log is -inf
		m = Zeros(keptShape(x.shape, rd), Of(x.dtype), On(x.Device()))
	} else {
		m = x.Detach().Amax(dims, true)
		m = m.MaskedFill(m.Abs().EqScalar(math.Inf(1)), 0)
	}
	out := x.Sub(m).Exp().SumDims(dims, true).Log().Add(m)
	if keepDim {
		return out
	}
	return squeezeDims(out, rd)
}

// Norm returns the p-norm over dims (all when empty): (Σ|x|ᵖ)^(1/p),
// with p = +Inf the largest |x|, as torch.linalg.vector_norm. The
// gradient of the 2-norm of a zero vector is 0, as in PyTorch.
func (x *Tensor) Norm(p float64, dims []int, keepDim bool) *Tensor {
	x.nonNil("Norm", 0)
	x = x.Cast(floatType(x.dtype))
	switch {
	case p == 2:
		return sqrtZeroGrad(x.Square().SumDims(dims, keepDim))
	case p == 1:
		return x.Abs().SumDims(dims, keepDim)
	case math.IsInf(p, 1):
		return x.Abs().Amax(dims, keepDim)
	case !(p > 0):
		failf("Norm", ErrArgument, []*Tensor{x}, "p must be positive, got %g", p)
	}
	return x.Abs().PowScalar(p).SumDims(dims, keepDim).PowScalar(1 / p)
}

// CumSum returns the inclusive cumulative sum along dim.
func (x *Tensor) CumSum(dim int) *Tensor {
	x.nonNil("CumSum", 0)
	x.storage("CumSum")
	if x.dtype == Bool {
		x = x.Cast(Int32)
	}
	d := x.normDim("CumSum", dim)
	if x.Dim() == 0 {
		return x.Clone()
	}
	out := newTensor(x.dtype, x.shape, x.Device())
	backendOf(x.Device()).cumsum(out, x, d)
	return record(out, OpCumSum, Attrs{Dim: d}, x)
}

// softmax runs OpSoftmax, or OpLogSoftmax when log is set, along dim.
func (x *Tensor) softmax(log bool, dim int) *Tensor {
	op := OpSoftmax
	if log {
		op = OpLogSoftmax
	}
	x.nonNil(op.String(), 0)
	x.storage(op.String())
	x = x.Cast(floatType(x.dtype))
	d := x.normDim(op.String(), dim)
	out := newTensor(x.dtype, x.shape, x.Device())
	backendOf(x.Device()).softmax(log, out, x, d)
	return record(out, op, Attrs{Dim: d}, x)
}

// Softmax returns exp(x)/Σexp(x) along dim, computed stably.
func (x *Tensor) Softmax(dim int) *Tensor {
	x.nonNil("Softmax", 0)
	if x.Dim() == 0 {
		return x.Reshape(1).softmax(false, 0).Reshape()
	}
	return x.softmax(false, dim)
}

// LogSoftmax returns x - LogSumExp(x) along dim, computed stably.
func (x *Tensor) LogSoftmax(dim int) *Tensor {
	x.nonNil("LogSoftmax", 0)
	if x.Dim() == 0 {
		return x.Reshape(1).softmax(true, 0).Reshape()
	}
	return x.softmax(true, dim)
}
