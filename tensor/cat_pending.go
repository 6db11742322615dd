package tensor

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
// declines when x is not pending, fusion is off, or x's view does not
// map onto its expression by broadcasting.
func writePending(be backend, dst, x *Tensor) bool {
	n := dst.Numel()
	if x.ref.s.pend.Load() == nil || x.dtype != dst.dtype || n == 0 || !fuses(dst.Device(), n) || !be.fusable(dst.ref.s.n) {
		return false
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
	defer unpin(pin(dst))
	be.fused(dst, e)
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	return true
}
