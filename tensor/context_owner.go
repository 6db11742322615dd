package tensor

import "github.com/tessera-ml/tessera/internal/goid"

// The default context serves every goroutine that names no context, and
// so every goroutine that forgot to make one. Two of them inside it at
// once would share its Scopes and its grad mode: one's Scope would
// release the other's tensors, one's NoGrad would silently stop the
// other's recording. So the default context lets one goroutine at a time
// be inside it, the holder: the goroutine with a Scope, NoGrad or
// EnableGrad of it open. The holder's identity is its g (internal/goid),
// recorded when it opens its outermost frame and cleared when that frame
// ends. Another goroutine panics with ErrContext when, while a holder is
// inside, it
//
//   - opens a Scope, NoGrad or EnableGrad of the default context (enter),
//   - makes a tensor in it while the holder has a Scope open, which would
//     own and release the tensor (Context.track), or
//   - records a graph in it, or asks its grad mode, while the holder's
//     NoGrad is on (gradOn).
//
// The panic comes before any state changes, so the holder carries on
// undisturbed. While no goroutine is inside, any goroutine may use the
// default context as before, and Adopt into it is a hand-over that any
// goroutine may make at any time. Other contexts are not checked: a
// Context made with NewContext is the caller's to share (see Context).
//
// The cost on the paths that every op takes is one atomic load and, only
// while a frame of the default context is open, one read of the g.

// perGoroutine ends every ErrContext detail: what to do instead.
const perGoroutine = "; give each goroutine that runs a loop of its own a Context: " +
	"c := tensor.NewContext(), then c.Scope, c.NoGrad and tensor.In(c) (see tensor.Context)"

// enter records that the calling goroutine opened a Scope, NoGrad or
// EnableGrad (op) of c, which leave undoes when it ends. For the default
// context it panics with ErrContext when another goroutine is inside.
func (c *Context) enter(op string) {
	if c != defaultContext {
		return
	}
	me := goid.Current()
	if c.owner.Load() == me {
		c.held++
		return
	}
	if !c.owner.CompareAndSwap(0, me) {
		panic(&Error{Op: op, Err: ErrContext, Detail: "another goroutine has a Scope, NoGrad or EnableGrad " +
			"of the default context open, and the two would share its Scopes and grad mode" + perGoroutine})
	}
	c.held = 1
}

// leave undoes one enter, on the goroutine that made it; the last one
// lets another goroutine in.
func (c *Context) leave() {
	if c != defaultContext {
		return
	}
	if c.held--; c.held == 0 {
		c.owner.Store(0)
	}
}

// trackedByOther reports whether c is the default context and the
// calling goroutine does not hold it, so that a tensor it makes must not
// join c's open Scope (failTracked). The caller holds c.mu with a Scope
// of c open, so the holder cannot change meanwhile.
func (c *Context) trackedByOther(t *Tensor) bool {
	return c == defaultContext && c.owner.Load() != goid.Current()
}

// failTracked panics with ErrContext, naming t, a tensor made in the
// default context by a goroutine that does not hold it (trackedByOther).
func failTracked(t *Tensor) {
	fail("DefaultContext", ErrContext, "this tensor, made in the default context (created without In, "+
		"or computed from its tensors), would join the Scope that another goroutine has open there, "+
		"which releases it when it ends"+perGoroutine+"; Adopt hands a tensor over", t)
}

// gradOn reports whether ops on tensors of c record their graph now, for
// op. For the default context it panics with ErrContext when the NoGrad
// in force is another goroutine's: the calling goroutine's own grad mode
// is on, and a graph silently left unrecorded would fail far away, in
// backward, or train on wrong gradients.
func (c *Context) gradOn(op string) bool {
	if c.noGrad.Load() == 0 {
		return true
	}
	if c != defaultContext {
		return false
	}
	o := c.owner.Load()
	if o == goid.Current() {
		return false
	}
	if o == 0 { // the holder left after the load above; this goroutine never entered
		return true
	}
	panic(&Error{Op: op, Err: ErrContext, Detail: "another goroutine's NoGrad is on in the default context, " +
		"and this goroutine's graph would go unrecorded" + perGoroutine})
}
