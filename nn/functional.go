package nn

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// Linear returns x·wᵀ + b, as torch.nn.functional.linear: x is
// (..., in) or (in), w is (out, in), b is (out) or nil (no bias); the
// result is (..., out) or (out). A matrix x with a bias goes through
// tensor.Addmm, as in PyTorch, which on the CPU adds the bias as the
// product is stored. It panics with ErrShape when w is not 2-D, b is
// not (out), or x's last dimension is not in.
func Linear(x, w, b *tensor.Tensor) *tensor.Tensor {
	checkLinear("Linear", x, w, b)
	if b == nil {
		return x.MatMul(w.T())
	}
	if x.Dim() == 2 {
		return tensor.Addmm(b, x, w.T())
	}
	return x.MatMul(w.T()).Add(b)
}

// linearReLU returns Linear(x, w, b).ReLU() for a matrix x and a bias b
// as one op, tensor.AddmmReLU (Sequential's Linear then ReLU).
func linearReLU(x, w, b *tensor.Tensor) *tensor.Tensor {
	checkLinear("Linear", x, w, b)
	return tensor.AddmmReLU(b, x, w.T())
}

// checkLinear panics as Linear does for operands it cannot take.
func checkLinear(op string, x, w, b *tensor.Tensor) {
	need(op, "x, w", x, w)
	if w.Dim() != 2 || x.Dim() == 0 || x.Size(-1) != w.Size(1) {
		fail(op, tensor.ErrShape, "want x (..., in) and weight (out, in)", x, w, b)
	}
	if b != nil && (b.Dim() != 1 || b.Size(0) != w.Size(0)) {
		fail(op, tensor.ErrShape, fmt.Sprintf("the bias must have shape [%d]", w.Size(0)), x, w, b)
	}
}

// Embedding returns the rows of weight (V, D) at indices (Int32, any
// shape), as torch.nn.functional.embedding(indices, weight): the result
// has shape indices.Shape() + (D). The gradient with respect to weight
// accumulates over repeated indices. It panics with ErrShape when weight
// is not 2-D, ErrDType when indices are not Int32, and ErrIndex for an
// index outside [0, V).
func Embedding(weight, indices *tensor.Tensor) *tensor.Tensor {
	need("Embedding", "weight, indices", weight, indices)
	if weight.Dim() != 2 {
		fail("Embedding", tensor.ErrShape, "the weight must be (num_embeddings, embedding_dim)", weight, indices)
	}
	if indices.DType() != tensor.Int32 {
		fail("Embedding", tensor.ErrDType, "indices must be an Int32 tensor", weight, indices)
	}
	rows := weight.IndexSelect(0, indices.Reshape(-1))
	return rows.Reshape(append(indices.Shape(), weight.Size(1))...)
}

// Dropout zeroes each element of x with probability p and scales the
// others by 1/(1-p) when train is true, as torch.nn.functional.dropout;
// in evaluation (train false) or with p = 0 it returns x itself. The
// mask is drawn from gen, or from the default generator (seeded by
// tensor.ManualSeed) when gen is nil. The result has x's shape and
// dtype. It panics with ErrArgument unless 0 <= p <= 1 (or for a nil x)
// and ErrDType for a non-float x.
func Dropout(x *tensor.Tensor, p float64, train bool, gen *tensor.Generator) *tensor.Tensor {
	need("Dropout", "x", x)
	if !(p >= 0 && p <= 1) {
		fail("Dropout", tensor.ErrArgument, fmt.Sprintf("dropout probability has to be between 0 and 1, but got %g", p), x)
	}
	if !x.DType().IsFloat() {
		fail("Dropout", tensor.ErrDType, "dropout needs a float tensor", x)
	}
	if !train || p == 0 {
		return x
	}
	if p == 1 {
		return x.MulScalar(0)
	}
	keep := tensor.FullLike(x.Detach(), 1-p)
	mask := tensor.Bernoulli(keep, tensor.WithGenerator(gen)).MulScalar(1 / (1 - p))
	return x.Mul(mask)
}

// LayerNorm normalises x over its last len(normalizedShape) dimensions,
// which must equal normalizedShape, to zero mean and unit (biased)
// variance, then applies the elementwise affine weight and bias when they
// are not nil (each of shape normalizedShape), as
// torch.nn.functional.layer_norm:
//
//	y = (x - E[x]) / √(Var[x] + eps) · weight + bias
//
// The result has x's shape. It panics with ErrShape on a shape mismatch.
func LayerNorm(x *tensor.Tensor, normalizedShape []int, weight, bias *tensor.Tensor, eps float64) *tensor.Tensor {
	need("LayerNorm", "x", x)
	k := len(normalizedShape)
	if k == 0 || k > x.Dim() || !slices.Equal(x.Shape()[x.Dim()-k:], normalizedShape) {
		fail("LayerNorm", tensor.ErrShape, fmt.Sprintf("the input's trailing dimensions must be %v", normalizedShape), x)
	}
	for _, p := range []*tensor.Tensor{weight, bias} {
		if p != nil && !slices.Equal(p.Shape(), normalizedShape) {
			fail("LayerNorm", tensor.ErrShape, fmt.Sprintf("weight and bias must have shape %v", normalizedShape), x, p)
		}
	}
	dims := make([]int, k)
	for i := range dims {
		dims[i] = x.Dim() - k + i
	}
	d := x.Sub(x.MeanDims(dims, true))
	rstd := d.Square().MeanDims(dims, true).AddScalar(eps).Rsqrt()
	y := d.Mul(rstd)
	if weight != nil {
		y = y.Mul(weight)
	}
	if bias != nil {
		y = y.Add(bias)
	}
	return y
}
