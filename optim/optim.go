// Package optim updates parameters from their gradients with PyTorch's
// optimizers: SGD (momentum, dampening, Nesterov), Adam, AdamW, Adagrad
// and RMSProp, each following torch.optim's single-tensor update formulas
// (PyTorch 1.13) step for step.
//
// Updates run in place, under NoGrad in each parameter's context
// (tensor.Context), with the fused in-place ops
// (AddInPlace, AddcmulInPlace, AddcdivInPlace), so they run on whatever
// device the parameters live on. Optimizer state (momentum buffers,
// moment estimates) is created on the first Step, on the parameter's
// device, and marked Keep so that no tensor.Scope releases it.
//
// Hyper-parameters are options with PyTorch's defaults:
//
//	opt := optim.NewAdam(model.Parameters(), optim.LR(3e-4), optim.WeightDecay(0.01))
//	opt := optim.NewRMSProp(params, optim.LR(1e-4), optim.Alpha(0.99), optim.Eps(1e-5), optim.Maximize())
//
// An option that the optimizer does not have (Nesterov for Adam, say)
// panics with tensor.ErrArgument, as do out-of-range values (PyTorch's
// checks) and values that are not finite.
package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// An Optimizer updates the parameters it was given from their
// gradients.
type Optimizer interface {
	// Step updates every parameter that has a gradient; parameters
	// without one (Grad() == nil) are skipped, as in PyTorch.
	Step()
	// ZeroGrad clears every parameter's gradient (sets it to nil, as
	// PyTorch's zero_grad(set_to_none=True), releasing its memory).
	ZeroGrad()
}

// An Option sets a hyper-parameter of an optimizer.
type Option func(*config)

type config struct {
	lr, momentum, dampening, weightDecay float64
	beta1, beta2, eps, alpha, lrDecay    float64
	initAcc                              float64
	nesterov, amsgrad, centered          bool
	maximize                             bool
	set                                  []string
}

func (c *config) mark(name string) { c.set = append(c.set, name) }

// LR sets the learning rate.
func LR(lr float64) Option { return func(c *config) { c.lr = lr; c.mark("LR") } }

// Momentum sets the momentum factor (SGD, RMSProp; default 0).
func Momentum(m float64) Option { return func(c *config) { c.momentum = m; c.mark("Momentum") } }

// Dampening sets SGD's dampening of the momentum (default 0).
func Dampening(d float64) Option { return func(c *config) { c.dampening = d; c.mark("Dampening") } }

// WeightDecay sets the L2 penalty added to the gradient (decoupled decay
// for AdamW; default 0, or 0.01 for AdamW).
func WeightDecay(wd float64) Option {
	return func(c *config) { c.weightDecay = wd; c.mark("WeightDecay") }
}

// Nesterov enables Nesterov momentum (SGD; needs Momentum > 0 and zero
// Dampening).
func Nesterov() Option { return func(c *config) { c.nesterov = true; c.mark("Nesterov") } }

// Betas sets Adam's coefficients of the running averages of the gradient
// and its square (default 0.9, 0.999).
func Betas(b1, b2 float64) Option {
	return func(c *config) { c.beta1, c.beta2 = b1, b2; c.mark("Betas") }
}

// Eps sets the term added to the denominator (default 1e-8; Adagrad's is
// 1e-10). PyTorch adds it after the square root, as do these optimizers.
func Eps(eps float64) Option { return func(c *config) { c.eps = eps; c.mark("Eps") } }

// AMSGrad uses the maximum of past squared-gradient averages (Adam, AdamW).
func AMSGrad() Option { return func(c *config) { c.amsgrad = true; c.mark("AMSGrad") } }

// Alpha sets RMSProp's smoothing constant (decay rate; default 0.99).
func Alpha(a float64) Option { return func(c *config) { c.alpha = a; c.mark("Alpha") } }

// Centered normalises RMSProp's update by the estimated variance of the
// gradient instead of its second moment.
func Centered() Option { return func(c *config) { c.centered = true; c.mark("Centered") } }

// LRDecay sets Adagrad's learning-rate decay (default 0).
func LRDecay(d float64) Option { return func(c *config) { c.lrDecay = d; c.mark("LRDecay") } }

// InitialAccumulator sets the starting value of Adagrad's sum of squared
// gradients (default 0).
func InitialAccumulator(v float64) Option {
	return func(c *config) { c.initAcc = v; c.mark("InitialAccumulator") }
}

// Maximize ascends the objective instead of descending it (every
// optimizer), as PyTorch's maximize=True: the gradient is negated first.
func Maximize() Option { return func(c *config) { c.maximize = true; c.mark("Maximize") } }

// newConfig applies opts over defaults for optimizer op, which accepts
// the options named in allowed (Maximize and LR always). It panics with
// ErrArgument for a nil option, an option op does not have, and a value
// PyTorch's optimizer rejects (a negative learning rate, momentum, weight
// decay, epsilon, alpha, lr decay or initial accumulator; betas outside
// [0, 1)) or that is not finite (NaN or ±Inf, which PyTorch lets through
// to turn every parameter into NaN).
func newConfig(op string, defaults config, opts []Option, allowed ...string) config {
	c := defaults
	for i, o := range opts {
		if o == nil {
			fail(op, "option %d is nil", i)
		}
		o(&c)
	}
	allowed = append(allowed, "LR", "Maximize")
	for _, name := range c.set {
		if !slices.Contains(allowed, name) {
			fail(op, "option %s does not apply to %s", name, op)
		}
	}
	for _, v := range []struct {
		name string
		v    float64
	}{
		{"learning rate", c.lr}, {"momentum", c.momentum}, {"weight decay", c.weightDecay},
		{"epsilon", c.eps}, {"alpha", c.alpha}, {"lr decay", c.lrDecay}, {"initial accumulator", c.initAcc},
	} {
		checkNonNegative(op, v.name, v.v)
	}
	if math.IsNaN(c.dampening) || math.IsInf(c.dampening, 0) {
		fail(op, "invalid dampening value: %g", c.dampening)
	}
	for i, b := range []float64{c.beta1, c.beta2} {
		if !(b >= 0 && b < 1) {
			fail(op, "invalid beta parameter at index %d: %g", i, b)
		}
	}
	return c
}

// checkNonNegative panics with ErrArgument unless v is finite and not
// negative.
func checkNonNegative(op, name string, v float64) {
	if !(v >= 0) || math.IsInf(v, 1) {
		fail(op, "invalid %s value: %g", name, v)
	}
}

func fail(op, format string, args ...any) {
	panic(&tensor.Error{Op: "optim." + op, Err: tensor.ErrArgument, Detail: fmt.Sprintf(format, args...)})
}

// base holds what every optimizer shares: the parameters and the
// hyper-parameters.
type base struct {
	params []*tensor.Tensor
	cfg    config
}

func newBase(op string, params []*tensor.Tensor, cfg config) base {
	if len(params) == 0 {
		fail(op, "optimizer got an empty parameter list")
	}
	for i, p := range params {
		if p == nil || !p.IsLeaf() || !p.RequiresGrad() || !p.DType().IsFloat() {
			panic(&tensor.Error{Op: "optim." + op, Err: tensor.ErrArgument,
				Detail: fmt.Sprintf("parameter %d must be a float leaf that requires grad", i)})
		}
	}
	return base{params: slices.Clone(params), cfg: cfg}
}

// Params returns the parameters the optimizer updates.
func (b *base) Params() []*tensor.Tensor { return slices.Clone(b.params) }

// LR returns the learning rate.
func (b *base) LR() float64 { return b.cfg.lr }

// SetLR changes the learning rate (for schedules). It panics with
// ErrArgument for a negative or non-finite rate.
func (b *base) SetLR(lr float64) {
	checkNonNegative("SetLR", "learning rate", lr)
	b.cfg.lr = lr
}

// ZeroGrad sets every parameter's gradient to nil.
func (b *base) ZeroGrad() {
	for _, p := range b.params {
		p.SetGrad(nil)
	}
}

// step runs update for each parameter that has a gradient, under NoGrad
// in the parameter's context (tensor.Context), handing it the gradient
// (negated for Maximize, plus the L2 term when l2 is true) and releasing
// the temporaries afterwards.
func (b *base) step(l2 bool, update func(i int, p, g *tensor.Tensor, tmp *temps)) {
	for i, p := range b.params {
		g := p.Grad()
		if g == nil {
			continue
		}
		p.Context().NoGrad(func() {
			var tmp temps
			if b.cfg.maximize {
				g = tmp.add(g.Neg())
			}
			if l2 && b.cfg.weightDecay != 0 {
				g = tmp.add(g.Add(tmp.add(p.MulScalar(b.cfg.weightDecay))))
			}
			update(i, p, g, &tmp)
			tmp.release()
		})
	}
}

// temps collects temporaries of one update, released together.
type temps []*tensor.Tensor

func (t *temps) add(x *tensor.Tensor) *tensor.Tensor { *t = append(*t, x); return x }

func (t *temps) release() {
	for _, x := range *t {
		x.Release()
	}
}

// state returns a zero-filled (or v-filled) tensor like p, kept out of
// every Scope.
func state(p *tensor.Tensor, v float64) *tensor.Tensor {
	return tensor.FullLike(p.Detach(), v).Keep()
}
