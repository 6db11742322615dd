package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// A Reduction says how a loss combines its per-element values.
type Reduction uint8

// The reductions of torch's reduction= argument.
const (
	ReduceMean Reduction = iota // the mean (PyTorch's default)
	ReduceSum                   // the sum
	ReduceNone                  // no reduction: one loss per element
)

// String returns torch's name of the reduction: "mean", "sum" or "none".
func (r Reduction) String() string {
	switch r {
	case ReduceMean:
		return "mean"
	case ReduceSum:
		return "sum"
	case ReduceNone:
		return "none"
	}
	return fmt.Sprintf("Reduction(%d)", uint8(r))
}

// A LossOption changes how a loss is computed; the defaults are
// PyTorch's (mean reduction, ignore index -100, no weight).
type LossOption func(*lossConfig)

type lossConfig struct {
	reduction Reduction
	ignore    int
	weight    *tensor.Tensor
	set       map[string]bool
}

// Reduce sets the reduction (default ReduceMean).
func Reduce(r Reduction) LossOption {
	return func(c *lossConfig) { c.reduction = r; c.set["Reduce"] = true }
}

// IgnoreIndex sets the target value whose positions contribute neither
// to the loss nor to the mean's denominator (default -100). It applies to
// CrossEntropy and NLLLoss.
func IgnoreIndex(i int) LossOption {
	return func(c *lossConfig) { c.ignore = i; c.set["IgnoreIndex"] = true }
}

// Weight rescales the loss: for CrossEntropy and NLLLoss, w is a 1-D
// tensor of one weight per class (the mean then divides by the summed
// weights of the non-ignored targets, as in PyTorch); for
// BinaryCrossEntropyWithLogits, w broadcasts to the per-element loss.
func Weight(w *tensor.Tensor) LossOption {
	return func(c *lossConfig) { c.weight = w; c.set["Weight"] = true }
}

// lossOptions applies opts for op, panicking with ErrArgument when one
// of them does not apply to op.
func lossOptions(op string, opts []LossOption, allowed ...string) lossConfig {
	c := lossConfig{reduction: ReduceMean, ignore: -100, set: map[string]bool{}}
	for i, o := range opts {
		if o == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("option %d is nil", i))
		}
		o(&c)
	}
	for name := range c.set {
		if !slices.Contains(allowed, name) {
			fail(op, tensor.ErrArgument, "option "+name+" does not apply to "+op)
		}
	}
	if c.reduction > ReduceNone {
		fail(op, tensor.ErrArgument, "unknown reduction "+c.reduction.String())
	}
	return c
}

// reduce applies r to the per-element loss l.
func reduce(l *tensor.Tensor, r Reduction) *tensor.Tensor {
	switch r {
	case ReduceSum:
		return l.Sum()
	case ReduceNone:
		return l
	}
	return l.Mean()
}

// CrossEntropy returns the cross-entropy between logits and class
// indices, as torch.nn.functional.cross_entropy: NLLLoss of the log-
// softmax over the class dimension. logits is (N, C), (C), or
// (N, C, d1, ...) with the classes on dim 1; target holds Int32 class
// indices of shape (N), () or (N, d1, ...). Options: Reduce (mean over
// the non-ignored targets by default; all ignored gives NaN, as in
// PyTorch), IgnoreIndex (default -100) and Weight (per class). The
// result is 0-d, or target's shape with ReduceNone (0 at ignored
// positions). It panics with ErrDType for non-float logits or a
// non-Int32 target, ErrShape for mismatched shapes, and ErrIndex for a
// target outside [0, C) that is not the ignore index.
func CrossEntropy(logits, target *tensor.Tensor, opts ...LossOption) *tensor.Tensor {
	need("CrossEntropy", "logits, target", logits, target)
	checkClassInput("CrossEntropy", logits, target)
	return nll("CrossEntropy", logits.LogSoftmax(classDim(logits)), target, opts)
}

// NLLLoss returns the negative log-likelihood loss of log-probabilities
// logp for class indices target, as torch.nn.functional.nll_loss:
// -w[y]·logp[y] per position, reduced. Shapes, options and panics are
// those of CrossEntropy, whose input it takes after a LogSoftmax.
func NLLLoss(logp, target *tensor.Tensor, opts ...LossOption) *tensor.Tensor {
	need("NLLLoss", "logp, target", logp, target)
	checkClassInput("NLLLoss", logp, target)
	return nll("NLLLoss", logp, target, opts)
}

func classDim(x *tensor.Tensor) int {
	if x.Dim() == 1 {
		return 0
	}
	return 1
}

// checkClassInput validates the input and target of CrossEntropy and
// NLLLoss.
func checkClassInput(op string, x, target *tensor.Tensor) {
	if !x.DType().IsFloat() {
		fail(op, tensor.ErrDType, "the input must be a float tensor", x, target)
	}
	if target.DType() != tensor.Int32 {
		fail(op, tensor.ErrDType, "the target must hold Int32 class indices", x, target)
	}
	if x.Device() != target.Device() {
		fail(op, tensor.ErrDevice, "input and target are on different devices", x, target)
	}
	var want []int
	switch x.Dim() {
	case 0:
		fail(op, tensor.ErrShape, "the input needs a class dimension: (C), (N, C) or (N, C, d1, ...)", x, target)
	case 1:
		want = []int{}
	default:
		want = append([]int{x.Size(0)}, x.Shape()[2:]...)
	}
	if !slices.Equal(target.Shape(), want) {
		fail(op, tensor.ErrShape, fmt.Sprintf("the target must have shape %v for this input", want), x, target)
	}
}

// nll is NLLLoss after validation.
func nll(op string, logp, target *tensor.Tensor, opts []LossOption) *tensor.Tensor {
	c := lossOptions(op, opts, "Reduce", "IgnoreIndex", "Weight")
	dev, dt := logp.Device(), logp.DType()
	cd := classDim(logp)
	valid := target.NeScalar(float64(c.ignore))
	// Ignored positions read class 0, then are masked out.
	safe := tensor.Where(valid, target, tensor.Full(nil, 0, tensor.Like(target)))
	idx := safe.Unsqueeze(cd)
	picked := logp.Gather(cd, idx).Squeeze(cd) // target's shape
	var w *tensor.Tensor
	if c.weight != nil {
		classes := logp.Size(cd)
		if c.weight.Dim() != 1 || c.weight.Size(0) != classes || c.weight.Device() != dev {
			fail(op, tensor.ErrShape, fmt.Sprintf("the class weight must be a 1-D tensor of %d elements on the input's device", classes), logp, c.weight)
		}
		w = c.weight.Cast(dt).IndexSelect(0, safe.Reshape(-1)).Reshape(target.Shape()...)
		picked = picked.Mul(w)
	}
	zero := tensor.Full(nil, 0, tensor.Like(logp))
	loss := tensor.Where(valid, picked.Neg(), zero)
	switch c.reduction {
	case ReduceNone:
		return loss
	case ReduceSum:
		return loss.Sum()
	}
	// Mean over the (weighted) non-ignored targets; 0/0 = NaN when all
	// are ignored, as in PyTorch.
	var denom *tensor.Tensor
	if w != nil {
		denom = tensor.Where(valid, w, zero).Sum()
	} else {
		denom = valid.Cast(dt).Sum()
	}
	return loss.Sum().Div(denom)
}

// MSELoss returns the mean squared error (x - y)², reduced (Reduce;
// default mean), as torch.nn.functional.mse_loss. x and y must have the
// same shape: PyTorch broadcasts with a warning, which in Go would be a
// silent bug, so MSELoss panics with ErrShape instead. Mixed float dtypes
// promote.
func MSELoss(x, y *tensor.Tensor, opts ...LossOption) *tensor.Tensor {
	need("MSELoss", "x, y", x, y)
	c := lossOptions("MSELoss", opts, "Reduce")
	if !slices.Equal(x.Shape(), y.Shape()) {
		fail("MSELoss", tensor.ErrShape, "input and target must have the same shape", x, y)
	}
	return reduce(x.Sub(y).Square(), c.reduction)
}

// BinaryCrossEntropyWithLogits returns the binary cross-entropy between
// sigmoid(x) and targets y in [0, 1], computed stably from the logits as
// (1-y)·x + softplus(-x), as torch.nn.functional.
// binary_cross_entropy_with_logits. Its gradient with respect to x is
// σ(x) - y everywhere. x and y have the same shape; Weight (optional)
// broadcasts to it and multiplies each element's loss. Reduce: mean over
// all elements (default), sum, or none (x's shape). It panics with
// ErrShape for mismatched shapes and ErrDType for non-float inputs.
func BinaryCrossEntropyWithLogits(x, y *tensor.Tensor, opts ...LossOption) *tensor.Tensor {
	const op = "BinaryCrossEntropyWithLogits"
	need(op, "x, y", x, y)
	c := lossOptions(op, opts, "Reduce", "Weight")
	if !x.DType().IsFloat() || !y.DType().IsFloat() {
		fail(op, tensor.ErrDType, "logits and targets must be float tensors", x, y)
	}
	if !slices.Equal(x.Shape(), y.Shape()) {
		fail(op, tensor.ErrShape, "logits and targets must have the same shape", x, y)
	}
	// softplus(z) is exactly z above 40 in float64 (e⁻⁴⁰ is below half an
	// ulp), and e⁴⁰ fits in float32, so the threshold costs no accuracy.
	l := y.RSub(1).Mul(x).Add(x.Neg().Softplus(1, 40))
	if c.weight != nil {
		w := c.weight
		if tensor.Catch(func() { w.Expand(x.Shape()...) }) != nil {
			fail(op, tensor.ErrShape, "the weight must broadcast to the logits' shape", x, w)
		}
		l = l.Mul(w)
	}
	return reduce(l, c.reduction)
}

// need panics with ErrArgument when a tensor op needs is nil; names
// lists the parameters ts stand for, as the doc comment names them
// ("x, w").
func need(op, names string, ts ...*tensor.Tensor) {
	for i, t := range ts {
		if t == nil {
			fail(op, tensor.ErrArgument, fmt.Sprintf("%s (argument %d) is a nil *Tensor", strings.Split(names, ", ")[i], i+1))
		}
	}
}

// checkSizes panics with ErrArgument for op when a layer size is
// negative.
func checkSizes(op string, sizes ...int) {
	for _, n := range sizes {
		if n < 0 {
			fail(op, tensor.ErrArgument, fmt.Sprintf("layer sizes must be non-negative, got %v", sizes))
		}
	}
}

// fail panics with a *tensor.Error naming op in package nn.
func fail(op string, kind error, detail string, ts ...*tensor.Tensor) {
	panic(tensor.NewError("nn."+op, kind, detail, ts...))
}
