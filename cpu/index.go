package cpu

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/layout"
)

// An IndexError reports an index outside [0, Size) along dimension Dim,
// found by the index kernel Op ("index_select", "index_add",
// "index_reduce", "gather", "scatter_add"). Negative indices are out of range too: wrapping them is
// the caller's job. A kernel that returns an IndexError has written
// nothing.
type IndexError struct {
	Op    string
	Index int
	Dim   int
	Size  int
}

// Error formats the error as torch does, e.g. "index 7 is out of bounds
// for dimension 0 with size 5".
func (e *IndexError) Error() string {
	return fmt.Sprintf("index %d is out of bounds for dimension %d with size %d", e.Index, e.Dim, e.Size)
}

// IndexSelect sets dst = x selected along dim by index (torch.index_select):
// dst[..., i, ...] = x[..., index[i], ...]. index is 1-D and contiguous;
// dl.Shape is x's shape with dim's extent replaced by len(index). A 0-d x
// counts as shape [1].
func IndexSelect[T Elem](dst []T, dl Layout, x []T, xl Layout, dim int, index []int32) error {
	dl, xl, dim = layout.Promote0D(dl, xl, dim)
	if err := checkIndexFlat("index_select", index, dim, xl.Shape[dim]); err != nil {
		return err
	}
	if rows, ok := wholeRows(dim, dl, xl); ok {
		parallelFor(numWorkers(len(index)*rows), len(index), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				copy(dst[dl.Offset+i*rows:dl.Offset+(i+1)*rows], x[xl.Offset+int(index[i])*rows:])
			}
		})
		return nil
	}
	gather(dst, dl, x, xl, dim, index, broadcastIndex(dl.Shape, dim))
	return nil
}

// wholeRows reports whether an index along dim picks whole contiguous
// rows of every operand (dim 0 of row-major layouts), and the length of
// a row.
func wholeRows(dim int, ls ...Layout) (rows int, ok bool) {
	if dim != 0 {
		return 0, false
	}
	for _, l := range ls {
		if !l.IsContiguous() {
			return 0, false
		}
	}
	rows = 1
	for _, n := range ls[0].Shape[1:] {
		rows *= n
	}
	return rows, true
}

// IndexAdd accumulates src into dst along dim (torch.index_add_):
// dst[..., index[i], ...] += src[..., i, ...], repeated indices adding up.
// index is 1-D and contiguous; sl.Shape is dl.Shape with dim's extent
// replaced by len(index). It runs in parallel only over positions off
// dim, which cannot collide.
func IndexAdd[T Number](dst []T, dl Layout, dim int, index []int32, src []T, sl Layout) error {
	dl, sl, dim = layout.Promote0D(dl, sl, dim)
	if err := checkIndexFlat("index_add", index, dim, dl.Shape[dim]); err != nil {
		return err
	}
	if rows, ok := wholeRows(dim, dl, sl); ok {
		// Split the columns, so that no two goroutines add to one element.
		parallelFor(numWorkers(len(index)*rows), rows, func(_, lo, hi int) {
			for i, ix := range index {
				d := dst[dl.Offset+int(ix)*rows:]
				AddVec(d[lo:hi], d[lo:hi], src[sl.Offset+i*rows+lo:])
			}
		})
		return nil
	}
	scatterAdd(dst, dl, dim, index, broadcastIndex(sl.Shape, dim), src, sl)
	return nil
}

// IndexAmax takes src's maximum into dst along dim (torch.index_reduce_
// with "amax" and include_self): dst[..., index[i], ...] =
// max(dst[..., index[i], ...], src[..., i, ...]) for every i, a NaN on
// either side winning. index is 1-D and contiguous; sl.Shape is dl.Shape
// with dim's extent replaced by len(index). It runs in parallel only over
// positions off dim, which cannot collide.
func IndexAmax[T Number](dst []T, dl Layout, dim int, index []int32, src []T, sl Layout) error {
	dl, sl, dim = layout.Promote0D(dl, sl, dim)
	if err := checkIndexFlat("index_reduce", index, dim, dl.Shape[dim]); err != nil {
		return err
	}
	dd := dl.Strides[dim]
	scatterBlocks(dl, dim, broadcastIndex(sl.Shape, dim), sl, func(b scatterBlock) {
		b.each(func(d, i, s int) {
			at := d + int(index[i])*dd
			if v := src[s]; v > dst[at] || v != v {
				if dst[at] == dst[at] { // a NaN already there stays
					dst[at] = v
				}
			}
		})
	})
	return nil
}

// Gather sets dst = x gathered along dim (torch.gather): for dim 1 of 3-D
// operands, dst[i][j][k] = x[i][index[i][j][k]][k]. dl.Shape == il.Shape,
// and off dim il's extents are at most x's.
func Gather[T Elem](dst []T, dl Layout, x []T, xl Layout, dim int, index []int32, il Layout) error {
	if len(xl.Shape) == 0 {
		xl, il, dim = layout.One1D(xl), layout.One1D(il), 0
		dl = layout.One1D(dl)
	}
	if err := checkIndexStrided("gather", index, il, dim, xl.Shape[dim]); err != nil {
		return err
	}
	gather(dst, dl, x, xl, dim, index, il)
	return nil
}

// ScatterAdd accumulates src into dst along dim (torch.scatter_add_): for
// dim 1 of 3-D operands, dst[i][index[i][j][k]][k] += src[i][j][k].
// il.Shape == sl.Shape, and off dim their extents are at most dst's. It
// runs in parallel only over positions off dim, which cannot collide.
func ScatterAdd[T Number](dst []T, dl Layout, dim int, index []int32, il Layout, src []T, sl Layout) error {
	if len(dl.Shape) == 0 {
		dl, il, dim = layout.One1D(dl), layout.One1D(il), 0
		sl = layout.One1D(sl)
	}
	if err := checkIndexStrided("scatter_add", index, il, dim, dl.Shape[dim]); err != nil {
		return err
	}
	scatterAdd(dst, dl, dim, index, il, src, sl)
	return nil
}

// broadcastIndex is the layout that reads a contiguous 1-D index as an
// operand of the given shape: stride 1 along dim, 0 elsewhere.
func broadcastIndex(shape []int, dim int) Layout {
	st := make([]int, len(shape))
	st[dim] = 1
	return Layout{Shape: shape, Strides: st}
}

func checkIndexFlat(op string, index []int32, dim, size int) error {
	for _, v := range index {
		if v < 0 || int(v) >= size {
			return &IndexError{Op: op, Index: int(v), Dim: dim, Size: size}
		}
	}
	return nil
}

// checkIndexStrided checks every element of the view il of index; the
// error names the first bad one in row-major order.
func checkIndexStrided(op string, index []int32, il Layout, dim, size int) error {
	it := newIter(il.Shape, il)
	s := it.step(0)
	bad, found := 0, false
	it.run(func(o []int, n int) {
		if found {
			return
		}
		for i, p := 0, o[0]; i < n; i, p = i+1, p+s {
			if v := index[p]; v < 0 || int(v) >= size {
				bad, found = int(v), true
				return
			}
		}
	})
	if found {
		return &IndexError{Op: op, Index: bad, Dim: dim, Size: size}
	}
	return nil
}

// gather sets dst[p] = x[p with coordinate dim replaced by index[p]] for
// every position p of dl.Shape, index being read through il. Indices are
// already checked.
func gather[T Elem](dst []T, dl Layout, x []T, xl Layout, dim int, index []int32, il Layout) {
	xd := xl.Strides[dim]
	xb := Layout{Strides: append([]int(nil), xl.Strides...), Offset: xl.Offset}
	xb.Strides[dim] = 0 // the index supplies the coordinate along dim
	it := newIter(dl.Shape, dl, il, xb)
	ds, is, xs := it.step(0), it.step(1), it.step(2)
	it.runParallel(func(o []int, n int) {
		for i, di, ii, xi := 0, o[0], o[1], o[2]; i < n; i, di, ii, xi = i+1, di+ds, ii+is, xi+xs {
			dst[di] = x[xi+int(index[ii])*xd]
		}
	})
}

// scatterAdd adds src[p] to dst[p with coordinate dim replaced by
// index[p]] for every position p of sl.Shape.
func scatterAdd[T Number](dst []T, dl Layout, dim int, index []int32, il Layout, src []T, sl Layout) {
	dd := dl.Strides[dim]
	scatterBlocks(dl, dim, il, sl, func(b scatterBlock) {
		b.each(func(d, i, s int) { dst[d+int(index[i])*dd] += src[s] })
	})
}

// A scatterBlock is a block of positions of a scatter along a dim, outer
// by inner: position (a, j) reads index[i + a·outer.i + j·inner.i] and
// src[s + a·outer.s + j·inner.s] and updates the element of dst at
// d + a·outer.d + j·inner.d plus the index times dst's stride along the
// dim.
type scatterBlock struct {
	d, i, s      int
	outer, inner scatterStep
}

// A scatterStep is a count of positions and the distance between
// neighbours in dst, index and src.
type scatterStep struct{ n, d, i, s int }

// each calls f(d, i, s) for every position of b, inner fastest. Small
// enough to inline with f, so that a kernel's combine is a tight loop.
func (b scatterBlock) each(f func(d, i, s int)) {
	for range b.outer.n {
		for j := range b.inner.n {
			f(b.d+j*b.inner.d, b.i+j*b.inner.i, b.s+j*b.inner.s)
		}
		b.d += b.outer.d
		b.i += b.outer.i
		b.s += b.outer.s
	}
}

// scatterBlocks hands kernel every position p of sl.Shape, in blocks, for
// a scatter into dst (layout dl) along dim with the index read through
// il: dst[p with coordinate dim replaced by index[p]] combined with
// src[p]. Positions that differ only along dim may hit the same element,
// so the work is split by lines along dim: one goroutine owns a whole
// line, lines never collide, and each line's positions reach the kernel
// in order along dim whichever way a block walks its lines (one by one,
// or side by side when that keeps src's reads closer), so an
// order-sensitive combine (a float sum, a max between zeros of either
// sign) gives the same result either way.
func scatterBlocks(dl Layout, dim int, il, sl Layout, kernel func(scatterBlock)) {
	li := newLineIter(sl.Shape, dim, dl, il, sl)
	along := scatterStep{n: li.length, i: li.dstep[1], s: li.dstep[2]}
	li.run(func() func(offs []int, n int) {
		return func(o []int, n int) {
			lines := scatterStep{n: n, d: li.step(0), i: li.step(1), s: li.step(2)}
			b := scatterBlock{d: o[0], i: o[1], s: o[2], outer: lines, inner: along}
			if li.sideBySide(2, n) {
				b.outer, b.inner = along, lines
			}
			kernel(b)
		}
	})
}
