package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

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
// its expression neither by broadcasting nor by dims of 1 gained or lost
// (Stack's Unsqueeze of a pending matmul, [65] read as [1 65]).
func writePending(be backend, dst, x *Tensor) bool {
	n := dst.Numel()
	pe := x.ref.s.pend.Load()
	if pe == nil || x.dtype != dst.dtype || n == 0 || !fuses(dst.Device(), n) || !be.fusable(dst.ref.s.n) {
		return false
	}
	if x.offset == 0 && !slices.Equal(x.shape, pe.shape) && layout.IsContiguous(x.shape, x.strides) {
		// Read whole in another shape: compute the expression in its own
		// shape into dst viewed in that shape.
		xv, okx := unitReshape(x, pe.shape)
		dv, okd := unitReshape(dst, pe.shape)
		if okx && okd {
			x, dst = xv, dv
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

// unitReshape returns a bare view of t (holding no reference) with
// shape, when shape is t's but for dims of 1.
func unitReshape(t *Tensor, shape []int) (*Tensor, bool) {
	if slices.Equal(t.shape, shape) {
		return t, true
	}
	var strides []int
	for i, n := range t.shape {
		if n != 1 {
			strides = append(strides, t.strides[i])
		}
	}
	out := make([]int, len(shape))
	j := 0
	for i, n := range shape {
		if n == 1 {
			continue
		}
		if j == len(strides) || t.shape[indexOfNonUnit(t.shape, j)] != n {
			return nil, false
		}
		out[i] = strides[j]
		j++
	}
	if j != len(strides) {
		return nil, false
	}
	v := &Tensor{dtype: t.dtype, offset: t.offset, ref: t.ref}
	v.setLayout(shape, out)
	return v, true
}

// indexOfNonUnit returns the index in shape of its j-th dim that is not 1.
func indexOfNonUnit(shape []int, j int) int {
	for i, n := range shape {
		if n != 1 {
			if j == 0 {
				return i
			}
			j--
		}
	}
	return -1
}
