package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

// extendPending applies the unary elementwise op to t in place by
// extending t's pending expression (fusion), so that the op costs no
// kernel until t is used, and reports whether it did; it declines when t
// is not pending, is not the whole of its pending result (a view with an
// offset or other strides), the op does not fuse in t's dtype, or the
// longer expression would exceed the fusion limits (the caller then runs
// the op as before). nn.ClipGradValue on an accumulated gradient is the
// case it serves: the clamp joins the pending sum and the optimizer's
// fused update computes both. Ops with operands do not extend: a
// long-lived pending tensor updated in place step after step (a
// parameter or optimizer state made by Zeros) would hold its operands of
// earlier steps until the expression filled up.
func extendPending(op Op, p [2]float64, t *Tensor) bool {
	s := t.ref.s
	old := s.pend.Load()
	if old == nil || !fuses(t.Device(), t.Numel()) || !fusable(op, t.dtype) ||
		t.offset != 0 || !slices.Equal(t.shape, old.shape) || !layout.IsContiguous(t.shape, t.strides) {
		return false
	}
	scalar := Bool
	if t.dtype != Bool {
		scalar = t.dtype
	}
	e := build(op, p, t.dtype, t.dtype, t.shape, scalar, []*Tensor{t}, true)
	if e == nil {
		return false
	}
	// build realized t when it could not inline it (then t is a leaf of
	// e): the caller's eager op runs on the result.
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
// The reader keep (nil for none) is left as it is.
func (s *storage) prepareWrite(keep *storage) {
	s.rmu.Lock()
	rs := slices.DeleteFunc(slices.Clone(s.readers), func(r *storage) bool { return r == keep })
	s.rmu.Unlock()
	if len(rs) < 2 || s.pend.Load() != nil {
		for _, r := range rs {
			r.realize()
		}
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

// assignable returns src's storage when CopyFrom may compute src's
// pending expression straight into t: src is a whole pending result of
// t's shape, dtype and device, t is realized, and fusion is on for it;
// else nil.
func assignable(t, src *Tensor) *storage {
	if t == nil || src == nil || t.ref == nil || src.ref == nil {
		return nil
	}
	s, pe := src.ref.s, src.ref.s.pend.Load()
	if pe == nil || t.ref.s.pend.Load() != nil || src.dtype != t.dtype || src.Device() != t.Device() ||
		src.offset != 0 || !slices.Equal(src.shape, t.shape) || !slices.Equal(pe.shape, t.shape) ||
		!layout.IsContiguous(src.shape, src.strides) || !fuses(t.Device(), t.Numel()) ||
		!backendOf(t.Device()).fusable(t.ref.s.n) {
		return nil
	}
	return s
}

// assignPending computes the pending src (assignable) into t as one
// fused kernel and reports whether it did; it declines when src's
// expression reads t's storage in another layout (an element written
// before another reads it). src then holds t's new value: its expression
// becomes a copy of t, realized if t is written again while src lives.
func assignPending(t, src *Tensor) bool {
	old := src.ref.s.pend.Load()
	if old == nil {
		return false
	}
	e := &fexpr{shape: slices.Clone(t.shape), dtype: t.dtype, scalar: old.scalar}
	if _, ok := e.inline(src); !ok {
		e.dropLeavesFrom(0)
		return false
	}
	defer e.drop(nil)
	for _, l := range e.leaves {
		if l.ref.s == t.ref.s && (l.offset != t.offset || !slices.Equal(l.strides, t.strides)) {
			return false
		}
	}
	b := backendOf(t.Device())
	func() {
		defer unpin(pin(t))
		b.fused(t, e)
	}()
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	copyOf := &fexpr{shape: slices.Clone(t.shape), dtype: t.dtype, scalar: Bool}
	copyOf.nodes = append(copyOf.nodes, fnode{ident: true, args: [3]int{copyOf.leaf(t)}, nargs: 1, ct: t.dtype, out: t.dtype})
	if !swapPending(src.ref.s, old, copyOf) {
		copyOf.drop(nil)
	}
	return true
}
