package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

// extendPending applies the elementwise op to t in place by extending
// t's pending expression (fusion), so that the op costs no kernel until
// t is used: ins are the operands as the in-place op computes them (t
// first, then the others cast to t's dtype and broadcast to its shape).
// It reports whether it did; it declines when t is not pending, is not
// the whole of its pending result (a view with an offset or other
// strides), the op does not fuse in t's dtype, or the longer expression
// would exceed the fusion limits (the caller then runs the op as
// before). nn.ClipGradValue on an accumulated gradient is the case it
// serves: the clamp joins the pending sum and the optimizer's fused
// update computes both.
func extendPending(op Op, p [2]float64, t *Tensor, ins ...*Tensor) bool {
	s := t.ref.s
	old := s.pend.Load()
	if old == nil || !fuses(t.Device(), t.Numel()) || !fusable(op, t.dtype) ||
		t.offset != 0 || !slices.Equal(t.shape, old.shape) || !layout.IsContiguous(t.shape, t.strides) {
		return false
	}
	for _, x := range ins[1:] {
		if x.ref.s == s { // reads t through another view: keep it simple
			return false
		}
	}
	scalar := Bool
	if t.dtype != Bool {
		scalar = t.dtype
	}
	e := build(op, p, t.dtype, t.dtype, t.shape, scalar, ins, true)
	if e == nil {
		return false
	}
	// build realized t when it could not inline it (then t has a leaf on
	// its own storage): the caller's eager op runs on the result.
	if slices.ContainsFunc(e.leaves, func(l *Tensor) bool { return l.ref.s == s }) || !swapPending(s, old, e) {
		e.drop(nil)
		return false
	}
	counters.pendingOps.Add(1)
	return true
}

// swapPending replaces s's pending expression old by e unless s was
// realized meanwhile (realize holds old's lock while it computes), and
// reports whether it did.
func swapPending(s *storage, old, e *fexpr) bool {
	old.mu.Lock()
	defer old.mu.Unlock()
	if s.pend.Load() != old {
		return false
	}
	for _, l := range e.leaves {
		l.ref.s.addReader(s)
	}
	s.pend.Store(e)
	old.drop(s)
	return true
}
