// Package optim updates parameters from their gradients with PyTorch's
// optimizers: SGD (momentum, dampening, Nesterov), Adam, AdamW, Adagrad
// and RMSProp, each following torch.optim's single-tensor update formulas
// (PyTorch 1.13) step for step, and changes their learning rates with
// torch.optim.lr_scheduler's schedules: StepLR, CosineAnnealingLR,
// LinearLR (warm-up), OneCycleLR and SequentialLR (warm-up then cosine).
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
//	opt := optim.NewAdam(nn.Parameters(model), optim.LR(3e-4), optim.WeightDecay(0.01))
//	opt := optim.NewRMSProp(params, optim.LR(1e-4), optim.Alpha(0.99), optim.Eps(1e-5), optim.Maximize())
//
// Parameter groups (PyTorch's [{"params": ..., "lr": ...}, ...]): the
// constructor's parameters are group 0 with the constructor's options;
// AddParamGroup adds a group whose options override those. Each group's
// hyper-parameters are fields of its Group, read and set between steps
// (schedules set LR, and Momentum or Beta1):
//
//	opt := optim.NewAdamW(decay, optim.LR(6e-4), optim.WeightDecay(0.1))
//	opt.AddParamGroup(noDecay, optim.WeightDecay(0))
//	opt.Groups()[1].LR = 1e-4
//
// StateDict and LoadStateDict export and import the optimizer's state
// for a checkpoint: its tensors under PyTorch's names ("state.0.exp_avg")
// and the rest (hyper-parameters, step counts) as a State that encodes
// to JSON, for checkpoint.SetMeta; a Scheduler's State likewise. To
// resume, build the model, optimizer and schedule as before, then load:
//
//	tensors, st := opt.StateDict()
//	for name, t := range tensors {
//		state["optimizer."+name] = t // beside nn.StateDict(model)'s names
//	}
//	checkpoint.SetMeta(meta, checkpoint.MetaOptimizer, st)
//	checkpoint.SetMeta(meta, checkpoint.MetaSchedule, sched.State())
//	...
//	err = opt.LoadStateDict(optimizerTensors, st) // the "optimizer." tensors, prefix cut
//	err = sched.LoadState(ss)
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
	// without one (Grad() == nil: frozen, or unused) are skipped, as in
	// PyTorch. It panics with ErrArgument when a group's hyper-parameter
	// was set out of range.
	Step()
	// ZeroGrad clears every parameter's gradient (sets it to nil, as
	// PyTorch's zero_grad(set_to_none=True), releasing its memory).
	ZeroGrad()
	// Groups returns the parameter groups, whose hyper-parameters may be
	// read and set between steps.
	Groups() []*Group
	// AddParamGroup adds a group of parameters with the optimizer's
	// options overridden by opts.
	AddParamGroup(params []*tensor.Tensor, opts ...Option)
	// StateDict returns the optimizer's state tensors, named
	// "state.<index>.<buffer>" as PyTorch names them (the index counts
	// the parameters group after group), and the rest of its state.
	// The tensors are the optimizer's own, not copies.
	StateDict() (map[string]*tensor.Tensor, State)
	// LoadStateDict replaces the optimizer's state and its groups'
	// hyper-parameters by those StateDict returned, converting the
	// tensors to each parameter's dtype and device, all or nothing.
	LoadStateDict(tensors map[string]*tensor.Tensor, st State) error
}

// Hyper holds the hyper-parameters of one parameter group. Each
// optimizer reads the fields of its options (see its constructor) and
// ignores the others; Step checks the ranges of those it reads.
type Hyper struct {
	LR                 float64 `json:"lr"`
	Momentum           float64 `json:"momentum,omitempty"`
	Dampening          float64 `json:"dampening,omitempty"`
	WeightDecay        float64 `json:"weight_decay,omitempty"`
	Beta1              float64 `json:"beta1,omitempty"`
	Beta2              float64 `json:"beta2,omitempty"`
	Eps                float64 `json:"eps,omitempty"`
	Alpha              float64 `json:"alpha,omitempty"`
	LRDecay            float64 `json:"lr_decay,omitempty"`
	InitialAccumulator float64 `json:"initial_accumulator_value,omitempty"`
	Nesterov           bool    `json:"nesterov,omitempty"`
	AMSGrad            bool    `json:"amsgrad,omitempty"`
	Centered           bool    `json:"centered,omitempty"`
	Maximize           bool    `json:"maximize,omitempty"`
}

// An Option sets a hyper-parameter of an optimizer or a group.
type Option func(*config)

type config struct {
	Hyper
	set []string
}

func (c *config) mark(name string) { c.set = append(c.set, name) }

// LR sets the learning rate.
func LR(lr float64) Option { return func(c *config) { c.LR = lr; c.mark("LR") } }

// Momentum sets the momentum factor (SGD, RMSProp; default 0).
func Momentum(m float64) Option { return func(c *config) { c.Momentum = m; c.mark("Momentum") } }

// Dampening sets SGD's dampening of the momentum (default 0).
func Dampening(d float64) Option { return func(c *config) { c.Dampening = d; c.mark("Dampening") } }

// WeightDecay sets the L2 penalty added to the gradient (decoupled decay
// for AdamW; default 0, or 0.01 for AdamW).
func WeightDecay(wd float64) Option {
	return func(c *config) { c.WeightDecay = wd; c.mark("WeightDecay") }
}

// Nesterov enables Nesterov momentum (SGD; needs Momentum > 0 and zero
// Dampening; Nesterov(false) turns it off in a group).
func Nesterov(on ...bool) Option {
	return func(c *config) { c.Nesterov = flag(on); c.mark("Nesterov") }
}

// Betas sets Adam's coefficients of the running averages of the gradient
// and its square (default 0.9, 0.999).
func Betas(b1, b2 float64) Option {
	return func(c *config) { c.Beta1, c.Beta2 = b1, b2; c.mark("Betas") }
}

// Eps sets the term added to the denominator (default 1e-8; Adagrad's is
// 1e-10). PyTorch adds it after the square root, as do these optimizers.
func Eps(eps float64) Option { return func(c *config) { c.Eps = eps; c.mark("Eps") } }

// AMSGrad uses the maximum of past squared-gradient averages (Adam,
// AdamW; AMSGrad(false) turns it off in a group).
func AMSGrad(on ...bool) Option {
	return func(c *config) { c.AMSGrad = flag(on); c.mark("AMSGrad") }
}

// Alpha sets RMSProp's smoothing constant (decay rate; default 0.99).
func Alpha(a float64) Option { return func(c *config) { c.Alpha = a; c.mark("Alpha") } }

// Centered normalises RMSProp's update by the estimated variance of the
// gradient instead of its second moment (Centered(false) turns it off).
func Centered(on ...bool) Option {
	return func(c *config) { c.Centered = flag(on); c.mark("Centered") }
}

// LRDecay sets Adagrad's learning-rate decay (default 0).
func LRDecay(d float64) Option { return func(c *config) { c.LRDecay = d; c.mark("LRDecay") } }

// InitialAccumulator sets the starting value of Adagrad's sum of squared
// gradients (default 0).
func InitialAccumulator(v float64) Option {
	return func(c *config) { c.InitialAccumulator = v; c.mark("InitialAccumulator") }
}

// Maximize ascends the objective instead of descending it (every
// optimizer), as PyTorch's maximize=True: the gradient is negated first.
// Maximize(false) turns it off in a group.
func Maximize(on ...bool) Option {
	return func(c *config) { c.Maximize = flag(on); c.mark("Maximize") }
}

// flag is the value of an optional boolean argument: true when absent.
func flag(on []bool) bool { return len(on) == 0 || on[0] }

// newConfig applies opts over defaults for optimizer op, which accepts
// the options named in allowed (Maximize and LR always). It panics with
// ErrArgument for a nil option, an option op does not have, and a value
// out of range (see Hyper.check).
func newConfig(op string, defaults Hyper, opts []Option, allowed []string) Hyper {
	c := config{Hyper: defaults}
	for i, o := range opts {
		if o == nil {
			fail(op, "option %d is nil", i)
		}
		o(&c)
	}
	for _, name := range c.set {
		if name != "LR" && name != "Maximize" && !slices.Contains(allowed, name) {
			fail(op, "option %s does not apply to %s", name, op)
		}
	}
	if msg := c.check(); msg != "" {
		fail(op, "%s", msg)
	}
	return c.Hyper
}

// check returns what PyTorch's optimizers reject in h (a negative
// learning rate, momentum, weight decay, epsilon, alpha, lr decay or
// initial accumulator; betas outside [0, 1)), and values that are not
// finite (NaN or ±Inf, which PyTorch lets through to turn every
// parameter into NaN), or "" when h is valid.
func (h *Hyper) check() string {
	for _, v := range []struct {
		name string
		v    float64
	}{
		{"learning rate", h.LR}, {"momentum", h.Momentum}, {"weight decay", h.WeightDecay},
		{"epsilon", h.Eps}, {"alpha", h.Alpha}, {"lr decay", h.LRDecay}, {"initial accumulator", h.InitialAccumulator},
	} {
		if !(v.v >= 0) || math.IsInf(v.v, 1) {
			return fmt.Sprintf("invalid %s value: %g", v.name, v.v)
		}
	}
	if math.IsNaN(h.Dampening) || math.IsInf(h.Dampening, 0) {
		return fmt.Sprintf("invalid dampening value: %g", h.Dampening)
	}
	for i, b := range []float64{h.Beta1, h.Beta2} {
		if !(b >= 0 && b < 1) {
			return fmt.Sprintf("invalid beta parameter at index %d: %g", i, b)
		}
	}
	return ""
}

func fail(op, format string, args ...any) {
	panic(&tensor.Error{Op: "optim." + op, Err: tensor.ErrArgument, Detail: fmt.Sprintf(format, args...)})
}

// temps collects temporaries of one update, released together.
type temps []*tensor.Tensor

func (t *temps) add(x *tensor.Tensor) *tensor.Tensor { *t = append(*t, x); return x }

func (t *temps) release() {
	for _, x := range *t {
		x.Release()
	}
}

// lerp sets the state s to s·decay + value·b·c (c nil: value·b), the
// ops of s.mul_(decay).addcmul_(b, c, value) (or add_(b, alpha=value))
// in that order: on a GPU with fusion on, one fused kernel (CopyFrom of
// a pending expression); otherwise those two in-place ops.
func lerp(tmp *temps, s *tensor.Tensor, decay float64, b, c *tensor.Tensor, value float64) {
	if !tensor.Fusion() || s.Device().Kind != tensor.KindGPU { // the CPU fuses nothing this small by default
		s.MulScalarInPlace(decay)
		if c == nil {
			s.AddInPlace(b, value)
		} else {
			s.AddcmulInPlace(b, c, value)
		}
		return
	}
	// The pending s·decay, inlined into the sum, goes before the write:
	// a live reader of s would be computed first.
	sd := s.MulScalar(decay)
	var next *tensor.Tensor
	if c == nil { // value·b as a pending scalar op: no constant 1 uploaded each step
		next = tmp.add(sd.Add(tmp.add(b.MulScalar(value))))
	} else {
		next = tmp.add(tensor.Addcmul(sd, b, c, value))
	}
	sd.Release()
	s.CopyFrom(next)
}
