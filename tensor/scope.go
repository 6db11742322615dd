package tensor

import (
	"slices"
	"sync"
)

// scopes is the stack of active Scopes. Scopes are process-wide: a
// tensor created by any goroutine while a Scope is active belongs to the
// innermost one. Run a training loop's steps from one goroutine.
var scopes struct {
	sync.Mutex
	stack []*scopeFrame
}

// A scopeFrame lists the tensors created while one Scope was innermost.
type scopeFrame struct{ created []*Tensor }

// track adds t to the innermost active scope.
func track(t *Tensor) {
	scopes.Lock()
	if n := len(scopes.stack); n > 0 {
		f := scopes.stack[n-1]
		f.created = append(f.created, t)
	}
	scopes.Unlock()
}

// Scope runs f and then releases every tensor created while it ran,
// except tensors marked with Keep (parameters and their gradients,
// optimizer state). A training step under a Scope returns all its
// temporary memory when it ends:
//
//	tensor.Scope(func() {
//		loss := nn.CrossEntropy(model.Forward(x), y)
//		autograd.Backward(loss)
//		opt.Step()
//	})
//
// Scopes nest. A Scope releases its tensors even when f panics.
func Scope(f func()) { ScopeKeep(func() []*Tensor { f(); return nil }) }

// ScopeResult is Scope for a function returning a tensor: the result
// survives the scope and belongs to the enclosing one.
func ScopeResult(f func() *Tensor) *Tensor {
	return ScopeKeep(func() []*Tensor { return []*Tensor{f()} })[0]
}

// ScopeKeep runs f under a Scope and keeps the tensors f returns: they
// survive the scope and belong to the enclosing one, which releases them
// when it ends unless they are returned again.
func ScopeKeep(f func() []*Tensor) []*Tensor {
	frame := &scopeFrame{}
	scopes.Lock()
	scopes.stack = append(scopes.stack, frame)
	scopes.Unlock()
	var out []*Tensor
	defer func() {
		scopes.Lock()
		// Find the frame rather than trusting the depth: a Scope that
		// another goroutine opened and closed meanwhile must not make
		// this one pop the wrong frame.
		i := slices.Index(scopes.stack, frame)
		scopes.stack = slices.Delete(scopes.stack, i, i+1)
		var parent *scopeFrame
		if i > 0 {
			parent = scopes.stack[i-1]
		}
		keep := make(map[*Tensor]bool, len(out))
		for _, t := range out {
			keep[t] = true
		}
		for _, t := range frame.created {
			switch {
			case t.kept: // never released by a scope, so no scope tracks it further
			case keep[t]:
				if parent != nil {
					parent.created = append(parent.created, t)
				}
			default:
				t.Release()
			}
		}
		scopes.Unlock()
	}()
	out = f()
	return out
}

// Keep marks t as never released by a Scope (parameters, optimizer
// state) and returns it. Release still releases it.
func (t *Tensor) Keep() *Tensor {
	t.kept = true
	return t
}
