package tensor

import (
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// The backends' SliceScatter: the gradient of a view (Slice, Select,
// Narrow) is zeros with the view's gradient in its slice.

// sliceScatter zeroes dst and copies src into its slice: two passes over
// memory the CPU already holds.
func (b cpuBackend) sliceScatter(dst, src *Tensor, dim, start, step int) {
	b.fill(dst, 0)
	b.copy(scatterSlice(dst, src, dim, start, step), src)
}

// scatterSlice is the view of dst that SliceScatter writes src into.
func scatterSlice(dst, src *Tensor, dim, start, step int) *Tensor {
	end := start
	if n := src.shape[dim]; n > 0 {
		end = start + (n-1)*step + 1 // no overflow: the last element is inside dst
	}
	return rawSlice(dst, dim, start, end, step)
}

// sliceScatter writes the whole of dst in one dispatch (wgsl.SliceScatter):
// src where the slice covers it, 0 elsewhere. Storages too big to bind
// whole take the fill and the copy, which bind ranges.
func (b *gpuBackend) sliceScatter(dst, src *Tensor, dim, start, step int) {
	if dst.Numel() == 0 {
		return
	}
	if !b.fusable(dst.ref.s.n) || !b.fusable(src.ref.s.n) {
		b.fill(dst, 0)
		b.copy(scatterSlice(dst, src, dim, start, step), src)
		return
	}
	defer unpin(pin(dst, src))
	k, err := wgsl.SliceScatter(wlay(dst), wlay(src), dim, start, step, b.lim)
	b.run("SliceScatter", k, err, map[string]*device.Buffer{"out": gbuf(dst), "x": gbuf(src)})
}
