package tensor

import (
	"sync"
	"sync/atomic"
)

// A Context holds the state that one loop of work keeps while it runs:
// its stack of Scopes and its grad mode. Go has no goroutine-local
// state, so the context travels with the tensors instead:
//
//   - A tensor made from data (Zeros, From, Rand, ...) belongs to the
//     context its In option names, or to the context of the tensor a
//     Like option or a *Like function copies, or else to the default
//     context.
//   - A tensor computed by an op belongs to the context of its first
//     input that is not kept (parameters, optimizer state, gradients
//     stored on leaves, and views of them are kept); when every input is
//     kept, to the context of the first.
//   - It joins the innermost Scope open in its context when it is made,
//     and the op records its graph only when its context's grad mode is
//     on.
//
// A single-goroutine program never names a context: Scope, NoGrad and
// EnableGrad act on the default context, and every tensor belongs to it.
// A goroutine that runs a loop of its own beside others (a second
// training loop, an inference server answering under NoGrad, a producer
// building batches ahead of the step) makes its own context and creates
// its inputs in it; what it computes from them then follows, and no
// other goroutine's Scope or NoGrad touches it:
//
//	c := tensor.NewContext()
//	c.NoGrad(func() {
//		c.Scope(func() {
//			x := tensor.From(req.Pixels, []int{1, 784}, tensor.In(c))
//			reply <- model.Forward(x).ArgMax(1, false).Int32s()
//		})
//	})
//
// A tensor handed from one loop to another (a batch from a producer)
// moves with Adopt, so that the receiving loop's Scope owns it and what
// is computed from it.
//
// A Context is meant for one goroutine at a time, like the loop it
// serves; its methods are safe to call from others (Adopt from a
// producer, tensors of a shared model tracked from an inference loop),
// but two goroutines opening and closing Scopes in one context see each
// other's tensors.
//
// The default context checks that it serves one goroutine at a time.
// While a goroutine is inside a Scope, NoGrad or EnableGrad of it,
// another goroutine panics with an *Error wrapping ErrContext, before
// anything changes, when it opens one there, makes a tensor there while
// that Scope is open (the Scope would release it), or records a graph
// there, or asks GradEnabled, while that NoGrad is on (its own recording
// would silently stop). A goroutine started inside such a Scope, a t.Run
// subtest included, is another goroutine. Any goroutine may use the
// default context while no goroutine is inside it, and Adopt into it at
// any time.
type Context struct {
	mu     sync.Mutex
	frames []*scopeFrame // open Scopes, innermost last
	noGrad atomic.Int32  // depth of NoGrad; grad mode is on at 0

	// The default context's holder (context_owner.go): the goroutine
	// inside a Scope, NoGrad or EnableGrad of it (0: none), and how many
	// it has open, which only the holder reads and writes.
	owner atomic.Uintptr
	held  int
}

// defaultContext serves code that names no context.
var defaultContext = &Context{}

// NewContext returns a context with grad mode on and no open Scope.
func NewContext() *Context { return &Context{} }

// DefaultContext returns the context of tensors made without In or Like;
// the package-level Scope, NoGrad and EnableGrad act on it.
func DefaultContext() *Context { return defaultContext }

// In makes a creation function put its tensor in context c (nil: the
// default context).
func In(c *Context) Option {
	return func(o *options) {
		if c != nil {
			o.ctx = c
		}
	}
}

// Like makes a creation function's tensor like t: t's dtype, device and
// context (later options override them).
func Like(t *Tensor) Option {
	return func(o *options) {
		argsNonNil("Like", 1, t)
		o.dtype, o.dtypeSet, o.device, o.ctx = t.dtype, true, t.Device(), t.Context()
	}
}

// Context returns the context t belongs to.
func (t *Tensor) Context() *Context {
	t.nonNil("Context", 0)
	if t.ctx == nil {
		return defaultContext
	}
	return t.ctx
}

// check panics with ErrArgument, naming op, when c is nil (a Context
// comes from NewContext or DefaultContext) or nilFunc is set (the
// function argument is nil).
func (c *Context) check(op string, nilFunc bool) {
	switch {
	case c == nil:
		fail(op, ErrArgument, "the receiver is a nil *Context; use NewContext or DefaultContext")
	case nilFunc:
		fail(op, ErrArgument, "the function argument is nil")
	}
}

// GradEnabled reports whether ops on tensors of c record their graph.
// For the default context it panics with ErrContext when another
// goroutine's NoGrad is on there (see Context).
func (c *Context) GradEnabled() bool {
	c.check("GradEnabled", false)
	return c.gradOn("GradEnabled")
}

// NoGrad runs f with graph recording off for tensors of c, as
// torch.no_grad. Other contexts keep their grad mode. For the default
// context it panics with ErrContext when another goroutine is inside a
// Scope, NoGrad or EnableGrad of it (see Context).
func (c *Context) NoGrad(f func()) {
	c.check("NoGrad", f == nil)
	c.enter("NoGrad")
	defer c.leave()
	c.noGrad.Add(1)
	defer c.noGrad.Add(-1)
	f()
}

// EnableGrad runs f with graph recording on for tensors of c even inside
// NoGrad, as torch.enable_grad. For the default context it panics with
// ErrContext when another goroutine is inside a Scope, NoGrad or
// EnableGrad of it (see Context).
func (c *Context) EnableGrad(f func()) {
	c.check("EnableGrad", f == nil)
	c.enter("EnableGrad")
	defer c.leave()
	d := c.noGrad.Swap(0)
	defer c.noGrad.Add(d)
	f()
}

// GradEnabled reports whether the default context records graphs.
func GradEnabled() bool { return defaultContext.GradEnabled() }

// NoGrad runs f with graph recording off in the default context, as
// torch.no_grad. Optimizer updates and evaluation loops run under
// NoGrad. A goroutine with its own Context uses its NoGrad method.
func NoGrad(f func()) { defaultContext.NoGrad(f) }

// EnableGrad runs f with graph recording on in the default context even
// inside NoGrad, as torch.enable_grad.
func EnableGrad(f func()) { defaultContext.EnableGrad(f) }

// Adopt moves t into c: t leaves the Scope that tracked it (if any),
// joins the innermost Scope open in c, and ops on t then compute in c.
// Use it when a tensor made by one loop is handed to another. Adopt t
// only while no other goroutine is using it. It returns t.
func (c *Context) Adopt(t *Tensor) *Tensor {
	c.check("Adopt", false)
	argsNonNil("Adopt", 1, t)
	t.storage("Adopt")
	t.ctx = c
	if !t.kept.Load() {
		c.join(t, true)
	}
	return t
}

// Adopt moves t into the default context; see Context.Adopt.
func Adopt(t *Tensor) *Tensor { return defaultContext.Adopt(t) }

// contextFor returns the context of an op's result: that of its first
// input that is not kept, else of its first input, else the default
// one.
func contextFor(inputs []*Tensor, index *Tensor) *Context {
	var first *Context
	for _, x := range inputs {
		if x == nil {
			continue
		}
		if !x.kept.Load() {
			return x.Context()
		}
		if first == nil {
			first = x.Context()
		}
	}
	if index != nil && !index.kept.Load() {
		return index.Context()
	}
	if first == nil {
		return defaultContext
	}
	return first
}

// settle gives an op's result out its context and Scope (see Context).
// A kept result (a view of a kept tensor, which borrows its memory) has
// its context already and joins no Scope.
func settle(out *Tensor, inputs []*Tensor, index *Tensor) *Context {
	if out.ctx != nil { // placed already (newResult, viewOf)
		return out.ctx
	}
	if out.kept.Load() {
		return out.Context()
	}
	c := contextFor(inputs, index)
	out.ctx = c
	c.track(out)
	return c
}
