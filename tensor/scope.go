package tensor

import (
	"slices"
	"sync"
)

// A scopeFrame lists the tensors made while one Scope was the innermost
// open in its context. A tensor names the frame that owns it (frame), so
// that Adopt and ScopeKeep can move it without searching lists: a frame
// releases only the tensors that still name it.
type scopeFrame struct{ created []*Tensor }

// track adds t, just made in c, to the innermost Scope open in c, if
// any. For the default context it panics with ErrContext when another
// goroutine opened that Scope (see context_owner.go); t then joins none.
func (c *Context) track(t *Tensor) { c.join(t, false) }

// join adds t to the innermost Scope open in c, if any; handOver (Adopt)
// lets any goroutine place a tensor there.
func (c *Context) join(t *Tensor, handOver bool) {
	c.mu.Lock()
	var f *scopeFrame
	if n := len(c.frames); n > 0 {
		if !handOver && c.trackedByOther(t) {
			c.mu.Unlock()
			t.guard()
			failTracked(t)
		}
		f = c.frames[n-1]
		if t.frame.Load() != f {
			f.created = append(f.created, t)
		}
	}
	t.frame.Store(f)
	c.mu.Unlock()
	if f == nil {
		t.guard()
	}
}

// Scope runs f and then releases every tensor of the default context
// made while it ran, except tensors marked with Keep (parameters and
// their gradients, optimizer state). A training step under a Scope
// returns all its temporary memory when it ends:
//
//	tensor.Scope(func() {
//		loss := nn.CrossEntropy(model.Forward(x), y)
//		autograd.Backward(loss)
//		opt.Step()
//	})
//
// Scopes nest. A Scope releases its tensors even when f panics. A
// goroutine running a loop of its own uses its Context's Scope method.
func Scope(f func()) { defaultContext.Scope(f) }

// ScopeResult is Scope for a function returning a tensor: the result
// survives the scope and belongs to the enclosing one.
func ScopeResult(f func() *Tensor) *Tensor { return defaultContext.ScopeResult(f) }

// ScopeKeep runs f under a Scope of the default context and keeps the
// tensors f returns: they survive the scope and belong to the enclosing
// one, which releases them when it ends unless they are returned again.
func ScopeKeep(f func() []*Tensor) []*Tensor { return defaultContext.ScopeKeep(f) }

// Scope runs f and then releases every tensor of c made while it ran,
// except kept ones; see the package-level Scope.
func (c *Context) Scope(f func()) {
	c.check("Scope", f == nil)
	c.ScopeKeep(func() []*Tensor { f(); return nil })
}

// ScopeResult is Scope for a function returning a tensor of c: the
// result survives and belongs to the enclosing Scope of c.
func (c *Context) ScopeResult(f func() *Tensor) *Tensor {
	c.check("ScopeResult", f == nil)
	return c.ScopeKeep(func() []*Tensor { return []*Tensor{f()} })[0]
}

// ScopeKeep runs f under a Scope of c and keeps the tensors f returns:
// they move to the enclosing Scope of c (or to none).
func (c *Context) ScopeKeep(f func() []*Tensor) []*Tensor {
	c.check("Scope", f == nil)
	c.enter("Scope")
	defer c.leave()
	frame := &scopeFrame{created: getCreated()}
	c.mu.Lock()
	c.frames = append(c.frames, frame)
	c.mu.Unlock()
	var out []*Tensor
	defer func() { c.close(frame, out) }()
	out = f()
	return out
}

// close pops frame and releases what it owns, except out, which moves
// to the enclosing frame.
func (c *Context) close(frame *scopeFrame, out []*Tensor) {
	c.mu.Lock()
	// Find the frame rather than trusting the depth, in case Scopes of
	// one context were misused from two goroutines.
	var parent *scopeFrame
	if i := slices.Index(c.frames, frame); i >= 0 {
		c.frames = slices.Delete(c.frames, i, i+1)
		if i > 0 {
			parent = c.frames[i-1]
		}
	}
	// The tensors to release are gathered in place, over the frame's
	// own list (whose slots the loop has read already).
	release, n := frame.created[:0], len(frame.created)
	var leave []*Tensor
	for _, t := range frame.created {
		switch {
		case t.frame.Load() != frame: // adopted elsewhere, or already moved
		case t.kept.Load(): // never released by a scope
			t.frame.Store(nil)
			leave = append(leave, t)
		case slices.Contains(out, t):
			t.frame.Store(parent)
			if parent != nil {
				parent.created = append(parent.created, t)
			} else {
				leave = append(leave, t)
			}
		default:
			t.frame.Store(nil)
			release = append(release, t)
		}
	}
	frame.created = nil
	c.mu.Unlock()
	for _, t := range leave {
		t.guard()
	}
	for _, t := range release {
		t.Release()
		if sv := t.ref.saved.Load(); sv != nil && !sv.dropped.Load() {
			t.guard() // its graph may still be dropped without backward
		}
	}
	clear(release[:n]) // the kept and moved ones too, past the released
	putCreated(release[:0])
}

// createdLists keeps the lists of closed Scopes for the next ones, so
// that a loop's Scope does not grow a fresh list of a thousand tensors
// every step.
var createdLists = sync.Pool{New: func() any { return new([]*Tensor) }}

// getCreated returns an empty list, with room when one was put back.
func getCreated() []*Tensor { return (*createdLists.Get().(*[]*Tensor))[:0] }

// putCreated hands back l, cleared, for getCreated.
func putCreated(l []*Tensor) {
	if cap(l) > 0 {
		createdLists.Put(&l)
	}
}

// Keep marks t as never released by a Scope (parameters, optimizer
// state) and returns it. Release still releases it. Kept tensors do not
// decide the context of what is computed from them (see Context).
func (t *Tensor) Keep() *Tensor {
	t.nonNil("Keep", 0)
	t.kept.Store(true)
	return t
}
