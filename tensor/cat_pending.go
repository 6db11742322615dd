package tensor

import "slices"

// copyInto copies x into dst (a view of a new result, as Cat's pieces):
// when x is a pending fused result, its expression is computed straight
// into dst, one kernel instead of realizing x and copying it (x stays
// pending, computed again only if something else reads it).
func copyInto(be backend, dst, x *Tensor) {
	if !writePending(be, dst, x) {
		be.copy(dst, x)
	}
}

// writePending computes the pending expression of x into dst, whose
// shape is x's, as one fused kernel, and reports whether it did: it
// declines when x is not pending, fusion is off, or x's view maps onto
// its expression neither by broadcasting nor as the whole result in
// another shape (Stack's Unsqueeze of a pending matmul, [65] read as
// [1 65]).
func writePending(be backend, dst, x *Tensor) bool {
	n := dst.Numel()
	pe := x.ref.s.pend.Load()
	if pe == nil || x.dtype != dst.dtype || n == 0 || !fuses(dst.Device(), n) || !be.fusable(dst.ref.s.n) {
		return false
	}
	if !slices.Equal(x.shape, pe.shape) && x.coversStorage() {
		// x is the whole result read in another shape (a Flatten, Stack's
		// Unsqueeze): compute the expression in its own shape into dst
		// viewed in that shape.
		if dv := reshapeView(dst, pe.shape); dv != nil {
			x, dst = reshapeView(x, pe.shape), dv
		}
	}
	scalar := Bool
	if x.dtype != Bool {
		scalar = x.dtype
	}
	e := &fexpr{shape: dst.shape, dtype: dst.dtype, scalar: scalar}
	if _, ok := e.inline(x); !ok {
		return false
	}
	defer e.drop(nil)
	if slices.ContainsFunc(e.leaves, func(l *Tensor) bool { return l.ref.s == dst.ref.s }) {
		return false // reads what it writes (callers detach such readers first)
	}
	defer unpin(pin(dst))
	be.fused(dst, e)
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	return true
}

// reshapeView returns a bare view of t (holding no reference) with
// shape, whose elements, in order, are t's: nil when no strides give
// one (viewStrides, as View).
func reshapeView(t *Tensor, shape []int) *Tensor {
	strides, ok := viewStrides(t.shape, t.strides, shape, nil)
	if !ok {
		return nil
	}
	v := &Tensor{dtype: t.dtype, offset: t.offset, ref: t.ref}
	v.setLayout(shape, strides)
	return v
}
