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
// strides), requires grad (a parameter: made by Zeros and updated in
// place every step, its expression would hold earlier steps' gradients
// until it filled up), the op does not fuse in t's dtype, or the longer
// expression would exceed the fusion limits (the caller then runs the op
// as before). Gradients summed in place by backward and clipped by
// nn.ClipGradValue are the cases it serves: the sum and the clamp stay
// pending and the optimizer's fused update computes them.
func extendPending(op Op, p [2]float64, t *Tensor, ins ...*Tensor) bool {
	s := t.ref.s
	old := s.pend.Load()
	if old == nil || t.requiresGrad || !fuses(t.Device(), t.Numel()) || !fusable(op, t.dtype) ||
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

// prepareWrite makes the pending storages that read s independent of
// what an in-place op is about to write into it. One reader is realized
// (flushReaders). Several are given a copy of s instead, one kernel
// however many read it, and stay pending: the readers are often results
// nobody reads again (intermediates of a forward pass, still in scope,
// that read a parameter the optimizer updates), and each would otherwise
// cost a kernel now.
func (s *storage) prepareWrite() {
	s.rmu.Lock()
	rs := slices.Clone(s.readers)
	s.rmu.Unlock()
	if len(rs) < 2 || s.pend.Load() != nil {
		s.flushReaders()
		return
	}
	snap := &storage{}
	snap.init(s.dtype, s.n, s.device)
	defer snap.release() // the readers hold it now, or nothing does
	be := backendOf(s.device)
	be.copy(wholeStorage(snap), wholeStorage(s))
	for _, r := range rs {
		e := r.pend.Load()
		if e == nil {
			continue
		}
		e.mu.Lock()
		if r.pend.Load() == e { // not realized meanwhile
			for _, l := range e.leaves {
				if l.ref.s == s {
					snap.mustRetain("snapshot")
					l.ref.s = snap
					s.release()
					s.removeReader(r)
					snap.addReader(r)
				}
			}
		}
		e.mu.Unlock()
	}
}

// wholeStorage is a flat view of all of s's elements, borrowing s.
func wholeStorage(s *storage) *Tensor {
	t := &Tensor{dtype: s.dtype, ref: &ref{s: s, borrowed: true}}
	t.setLayout([]int{s.n}, []int{1})
	return t
}

// fitsInlined reports whether an op over ins, its pending inputs
// inlined, fits one expression: their nodes, one more, at most
// maxFusedNodes, and their distinct leaves (a realized input is one) at
// most maxFusedLeaves. Views of a pending input that re-lay its leaves
// are counted as its leaves: an estimate, which build checks exactly.
func fitsInlined(ins []*Tensor) bool {
	type leafKey struct {
		s      *storage
		offset int
	}
	nodes, leaves := 1, map[leafKey]bool{}
	for _, x := range ins {
		e := x.ref.s.pend.Load()
		if e == nil {
			leaves[leafKey{x.ref.s, x.offset}] = true
			continue
		}
		nodes += len(e.nodes)
		for _, l := range e.leaves {
			leaves[leafKey{l.ref.s, l.offset}] = true
		}
	}
	return nodes <= maxFusedNodes && len(leaves) <= maxFusedLeaves
}

// realizeLargestPending realizes the pending input of ins with the most
// nodes (an accumulated sum, say) and reports whether there was one, so
// that an op whose inputs do not fit one expression inlined still
// inlines the smaller ones: a sum of many terms then costs one kernel
// per expression filled, not two (the sum so far and the new term).
func realizeLargestPending(ins []*Tensor) bool {
	var big *fexpr
	var at *Tensor
	for _, x := range ins {
		if e := x.ref.s.pend.Load(); e != nil && (big == nil || len(e.nodes) > len(big.nodes) ||
			len(e.nodes) == len(big.nodes) && len(e.leaves) > len(big.leaves)) {
			big, at = e, x
		}
	}
	if at == nil {
		return false
	}
	at.ref.s.realize()
	return true
}

// deferInPlace turns an elementwise in-place op on t (computed first
// when it holds an expression extendPending could not grow) into a
// pending expression of t's old values and the operands, and reports
// whether it did: t's storage gives its buffer (or, after a copy on
// write, the buffer of its old values, src's) to the expression as a
// leaf and is computed when used, so a run of in-place updates (the sum
// backward accumulates into a gradient, term after term) costs one
// kernel per filled expression instead of one per update. It declines,
// leaving the op to run now, on the CPU, when fusion is off, for a t
// that is a view of part of its storage, requires grad or is kept
// (parameters and optimizer state, updated every step: their
// expressions would hold earlier steps' operands), and for ops that do
// not fuse. ins are the operands as the op computes them, src (t's old
// values) first.
func deferInPlace(op Op, p [2]float64, t *Tensor, ins ...*Tensor) bool {
	s := t.ref.s
	n := t.Numel()
	if t.Device().Kind == KindCPU || t.requiresGrad || t.kept.Load() || !t.coversStorage() ||
		!fuses(t.Device(), n) || !fusable(op, t.dtype) || !backendOf(t.Device()).fusable(s.n) || s.hasPendingReaders() {
		return false
	}
	for _, x := range ins[1:] {
		if x.ref.s == s || !backendOf(t.Device()).fusable(x.ref.s.n) {
			return false
		}
	}
	src := ins[0]
	if s.pend.Load() != nil { // an expression extendPending could not grow: compute it, start another
		s.realize()
	}
	if src.ref.s == s { // no copy on write happened: the old values move out of s
		src = t.oldValues()
		defer src.ref.s.release() // the expression holds it from here
	} else { // s holds a fresh, unwritten buffer: not needed until realized
		backendOf(s.device).free(s.dtype, s.buf)
	}
	s.buf = nil
	scalar := Bool
	if t.dtype != Bool {
		scalar = t.dtype
	}
	args := append([]*Tensor{src}, ins[1:]...)
	e := build(op, p, t.dtype, t.dtype, t.shape, scalar, args, true)
	if e == nil {
		e = build(op, p, t.dtype, t.dtype, t.shape, scalar, args, false)
	}
	for _, l := range e.leaves {
		l.ref.s.addReader(s)
	}
	s.pend.Store(e)
	counters.pendingOps.Add(1)
	return true
}
