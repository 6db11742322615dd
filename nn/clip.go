package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// ErrNonFinite is wrapped by the error of ClipGradNormFinite when the
// gradients' total norm is NaN or infinite.
var ErrNonFinite = errors.New("non-finite gradient norm")

// ClipGradValue clamps the gradient of every parameter that has one to
// [-clip, clip] in place, as torch.nn.utils.clip_grad_value_ (and
// min-char-rnn's np.clip). It panics with ErrArgument for a negative clip.
func ClipGradValue(params []*tensor.Tensor, clip float64) {
	if !(clip >= 0) {
		fail("ClipGradValue", tensor.ErrArgument, fmt.Sprintf("clip value must be non-negative, got %g", clip))
	}
	checkParams("ClipGradValue", params)
	for _, p := range params {
		if g := p.Grad(); g != nil {
			g.Context().NoGrad(func() { g.ClampInPlace(-clip, clip) })
		}
	}
}

// ClipGradNorm scales the gradients of params in place so that their
// total norm, the normType-norm of all of them concatenated, is at most
// maxNorm, and returns that total norm before clipping (a 0-d tensor on
// the first gradient's device, in its dtype), as
// torch.nn.utils.clip_grad_norm_: every gradient is multiplied by
// min(1, maxNorm / (total + 1e-6)). Parameters without a gradient are
// skipped; with none, the result is a float32 zero on the CPU. normType
// is p > 0 (2 is the Euclidean norm) or math.Inf(1), the largest
// absolute value. Everything runs on the gradients' devices, without
// reading back: a NaN or infinite norm makes every gradient NaN or zero,
// as in PyTorch (ClipGradNormFinite refuses it instead). It panics with
// ErrArgument for a nil parameter, a negative or NaN maxNorm (+Inf
// computes the norm without clipping) and a normType that is not
// positive.
func ClipGradNorm(params []*tensor.Tensor, maxNorm, normType float64) *tensor.Tensor {
	total, _ := clipGradNorm("ClipGradNorm", params, maxNorm, normType, false)
	return total
}

// ClipGradNormFinite is ClipGradNorm with PyTorch's
// error_if_nonfinite=True: when the total norm is NaN or infinite it
// leaves the gradients as they are and returns the norm with an error
// wrapping ErrNonFinite. It reads the norm back, waiting for the device.
func ClipGradNormFinite(params []*tensor.Tensor, maxNorm, normType float64) (*tensor.Tensor, error) {
	return clipGradNorm("ClipGradNormFinite", params, maxNorm, normType, true)
}

func clipGradNorm(op string, params []*tensor.Tensor, maxNorm, normType float64, finite bool) (*tensor.Tensor, error) {
	if !(maxNorm >= 0) {
		fail(op, tensor.ErrArgument, fmt.Sprintf("max norm must be non-negative, got %g", maxNorm))
	}
	if !(normType > 0) {
		fail(op, tensor.ErrArgument, fmt.Sprintf("norm type must be positive or +Inf, got %g", normType))
	}
	checkParams(op, params)
	var grads []*tensor.Tensor
	for _, p := range params {
		if g := p.Grad(); g != nil {
			grads = append(grads, g)
		}
	}
	if len(grads) == 0 {
		return tensor.Scalar(0, tensor.Float32, tensor.CPU), nil
	}
	var total *tensor.Tensor
	var err error
	first := grads[0]
	first.Context().NoGrad(func() {
		var tmp []*tensor.Tensor
		keep := func(t *tensor.Tensor) *tensor.Tensor { tmp = append(tmp, t); return t }
		defer func() {
			for _, t := range tmp {
				if t != total {
					t.Release()
				}
			}
		}()
		// Σ|g|ᵖ per gradient, summed, then the root: one reduction per
		// gradient and one for all.
		parts := make([]*tensor.Tensor, len(grads))
		for i, g := range grads {
			parts[i] = keep(keep(normPart(keep, g, normType)).Cast(first.DType())).To(first.Device())
			keep(parts[i])
		}
		all := keep(tensor.Stack(parts, 0))
		switch {
		case math.IsInf(normType, 1):
			total = keep(all.Amax(nil, false))
		case normType == 1:
			total = keep(all.Sum())
		case normType == 2:
			total = keep(all.Sum()).Sqrt()
		default:
			total = keep(all.Sum()).PowScalar(1 / normType)
		}
		if finite {
			if v := total.Item(); math.IsNaN(v) || math.IsInf(v, 0) {
				err = &tensor.Error{Op: "nn." + op, Err: ErrNonFinite,
					Detail: fmt.Sprintf("the total norm of order %g of the gradients is %g, so they cannot be clipped", normType, v)}
				return
			}
		}
		// min(1, maxNorm / (total + 1e-6)), as PyTorch computes it.
		coef := keep(keep(tensor.Full(nil, maxNorm, tensor.Like(total))).Div(keep(total.AddScalar(1e-6)))).ClampMax(1)
		keep(coef)
		for _, g := range grads {
			c := coef
			if g.DType() != c.DType() || g.Device() != c.Device() {
				c = keep(keep(c.Cast(g.DType())).To(g.Device()))
			}
			g.MulInPlace(c)
		}
	})
	return total, err
}

// normPart returns Σ|g|ᵖ over g (the largest |g| for p = +Inf), the part
// of the total norm one gradient contributes; keep collects temporaries.
func normPart(keep func(*tensor.Tensor) *tensor.Tensor, g *tensor.Tensor, p float64) *tensor.Tensor {
	switch {
	case p == 2:
		return keep(g.Square()).Sum()
	case p == 1:
		return keep(g.Abs()).Sum()
	case math.IsInf(p, 1):
		return keep(g.Abs()).Amax(nil, false)
	}
	return keep(keep(g.Abs()).PowScalar(p)).Sum()
}

// checkParams panics with ErrArgument for op when a parameter is nil.
func checkParams(op string, params []*tensor.Tensor) {
	for i, p := range params {
		if p == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("parameter %d is a nil *Tensor", i))
		}
	}
}
