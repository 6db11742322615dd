package tensor

import "sync"

// scopes is the stack of active Scopes. Scopes are process-wide: a
// tensor created by any goroutine while a Scope is active belongs to the
// innermost one. Run a training loop's steps from one goroutine.
var scopes struct {
	sync.Mutex
	stack [][]*Tensor
}

// track adds t to the innermost active scope.
func track(t *Tensor) {
	scopes.Lock()
	if n := len(scopes.stack); n > 0 {
		scopes.stack[n-1] = append(scopes.stack[n-1], t)
	}
	scopes.Unlock()
}

// Scope runs f and then releases every tensor created while it ran,
// except tensors marked with Keep (parameters and their gradients,
// optimizer state) and those listed in keep. Kept tensors created inside
// a nested Scope move to the enclosing one. A training step under a
// Scope returns all its temporary memory when it ends:
//
//	tensor.Scope(func() {
//		loss := nn.CrossEntropy(model.Forward(x), y)
//		autograd.Backward(loss)
//		opt.Step()
//	})
func Scope(f func()) { ScopeKeep(func() []*Tensor { f(); return nil }) }

// ScopeResult is Scope for a function returning a tensor: the result
// survives the scope and belongs to the enclosing one.
func ScopeResult(f func() *Tensor) *Tensor {
	return ScopeKeep(func() []*Tensor { return []*Tensor{f()} })[0]
}

// ScopeKeep runs f under a Scope and keeps the tensors f returns.
func ScopeKeep(f func() []*Tensor) []*Tensor {
	scopes.Lock()
	scopes.stack = append(scopes.stack, nil)
	depth := len(scopes.stack)
	scopes.Unlock()
	var out []*Tensor
	defer func() {
		scopes.Lock()
		created := scopes.stack[depth-1]
		scopes.stack = scopes.stack[:depth-1]
		keep := make(map[*Tensor]bool, len(out))
		for _, t := range out {
			keep[t] = true
		}
		var survivors []*Tensor
		for _, t := range created {
			if t.kept || keep[t] {
				survivors = append(survivors, t)
				continue
			}
			t.Release()
		}
		if n := len(scopes.stack); n > 0 {
			scopes.stack[n-1] = append(scopes.stack[n-1], survivors...)
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
