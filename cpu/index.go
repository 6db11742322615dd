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
	gather(dst, dl, x, xl, dim, index, broadcastIndex(dl.Shape, dim))
	return nil
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
	il := broadcastIndex(sl.Shape, dim)
	li := newLineIter(sl.Shape, dim, dl, il, sl)
	id, sd, dd := li.dstep[1], li.dstep[2], dl.Strides[dim]
	li.run(func() func(offs []int, n int) {
		return func(o []int, n int) {
			ds, is, ss := li.step(0), li.step(1), li.step(2)
			for i := range n {
				for k, ii, si := 0, o[1]+i*is, o[2]+i*ss; k < li.length; k, ii, si = k+1, ii+id, si+sd {
					at := o[0] + i*ds + int(index[ii])*dd
					if v := src[si]; v > dst[at] || v != v {
						if dst[at] == dst[at] { // a NaN already there stays
							dst[at] = v
						}
					}
				}
			}
		}
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
// index[p]] for every position p of sl.Shape. Positions that differ only
// along dim may hit the same element, so the work is split by lines along
// dim: one goroutine owns a whole line and lines never collide.
func scatterAdd[T Number](dst []T, dl Layout, dim int, index []int32, il Layout, src []T, sl Layout) {
	li := newLineIter(sl.Shape, dim, dl, il, sl)
	id, sd := li.dstep[1], li.dstep[2]
	dd := dl.Strides[dim]
	li.run(func() func(offs []int, n int) {
		return func(o []int, n int) {
			ds, is, ss := li.step(0), li.step(1), li.step(2)
			if !li.sideBySide(2, n) {
				for i := 0; i < n; i++ {
					d0 := o[0] + i*ds
					for k, ii, si := 0, o[1]+i*is, o[2]+i*ss; k < li.length; k, ii, si = k+1, ii+id, si+sd {
						dst[d0+int(index[ii])*dd] += src[si]
					}
				}
				return
			}
			for k := 0; k < li.length; k++ {
				ik, sk := o[1]+k*id, o[2]+k*sd
				for i := 0; i < n; i++ {
					dst[o[0]+i*ds+int(index[ik+i*is])*dd] += src[sk+i*ss]
				}
			}
		}
	})
}
