package cpu

import (
	"sort"

	"github.com/tessera-ml/tessera/internal/layout"
)

// Fold is a reduction, as values: elements of type T fold into an
// accumulator of type A (float32 sums accumulate in float64). Add,
// Merge and Out are required; Vec holds optional fast paths.
type Fold[T, A Number] struct {
	// Identity is the accumulator every fold starts from, and the
	// result of an empty reduced extent (after Out).
	Identity A
	// Add folds one element into an accumulator.
	Add func(a A, v T) A
	// Merge combines the accumulators of two consecutive parts of an
	// extent, the earlier part first.
	Merge func(a, b A) A
	// Out converts the final accumulator to the result.
	Out func(a A) T
	// Vec holds the fast paths; a nil one is a loop over Add.
	Vec FoldVec[T, A]
}

// FoldVec holds the fast paths of a Fold, loops whose element step must
// not cost a call: they must give Add's results (the same partial
// accumulations, or ones that keep the Fold's accuracy and are the same
// on every run).
type FoldVec[T, A Number] struct {
	// Run folds the n elements x[off], x[off+s], ... into a.
	Run func(a A, x []T, off, n, s int) A
	// Cols folds x[off+j*s] into acc[j] for every j.
	Cols func(acc []A, x []T, off, s int)
	// Cols4 folds the elements at off, off+rs, off+2rs and off+3rs of
	// every column j (each at stride s) into acc[j].
	Cols4 func(acc []A, x []T, off, rs, s int)
	// Groups folds groups groups of four rows into acc, one after the
	// other, as that many Cols4 calls at off, off+4rs, off+8rs, ... do.
	Groups func(acc []A, x []T, off, rs, groups, s int)
}

// FoldOf returns the Fold of a combine on T alone: the accumulator is an
// element, combine both folds an element in and merges two parts, and
// identity starts every fold. It has no fast paths.
func FoldOf[T Number](identity T, combine func(a, v T) T) Fold[T, T] {
	return Fold[T, T]{Identity: identity, Add: combine, Merge: combine, Out: func(a T) T { return a }}
}

// complete returns f with every nil fast path replaced by a loop over
// f.Add.
func (f Fold[T, A]) complete() Fold[T, A] {
	add := f.Add
	if f.Vec.Run == nil {
		f.Vec.Run = func(a A, x []T, off, n, s int) A {
			for i := 0; i < n; i, off = i+1, off+s {
				a = add(a, x[off])
			}
			return a
		}
	}
	if f.Vec.Cols == nil {
		f.Vec.Cols = func(acc []A, x []T, off, s int) {
			for j := range acc {
				acc[j] = add(acc[j], x[off+j*s])
			}
		}
	}
	if f.Vec.Cols4 == nil {
		cols := f.Vec.Cols
		f.Vec.Cols4 = func(acc []A, x []T, off, rs, s int) {
			for k := 0; k < 4; k++ {
				cols(acc, x, off+k*rs, s)
			}
		}
	}
	if f.Vec.Groups == nil {
		cols4 := f.Vec.Cols4
		f.Vec.Groups = func(acc []A, x []T, off, rs, groups, s int) {
			for range groups {
				cols4(acc, x, off, rs, s)
				off += 4 * rs
			}
		}
	}
	return f
}

// Reduce reduces x into dst with f. dl has x's rank; its Shape equals
// x's shape with size 1 on every reduced dim (the keepdim form; its
// strides may be anything, such as the contiguous strides of the keepdim
// shape). A dim of size 1 in x counts as kept.
//
// Work above parallelThreshold elements is split across GOMAXPROCS
// goroutines: over the outputs when there are many, else over the
// reduced extent with private partial results merged in a fixed order
// (so the result does not depend on scheduling). An empty reduced extent
// gives f.Out(f.Identity) (rejecting it where the reduction has no
// identity, as max and min, is the caller's job).
func Reduce[T, A Number](f Fold[T, A], dst []T, dl Layout, x []T, xl Layout) {
	p := planReduce(dl, xl)
	if p.nOut == 0 {
		return
	}
	reduceWith(p, dst, x, f.complete())
}

// isInt reports whether T is an integer type.
func isInt[T Number]() bool {
	one := T(1)
	return one/2 == 0
}

// A reducePlan is a reduction with x's dimensions split into kept ones
// (one per output element) and reduced ones, each set ordered by x's
// stride, outermost first, and coalesced. Without kept (or reduced)
// dimensions the set is the single dimension [1] with stride 0.
type reducePlan struct {
	kShape, kX, kD []int // kept: extents, x strides, dst strides
	rShape, rX     []int // reduced: extents, x strides
	xOff, dOff     int
	nOut, nRed     int
	outer          bool // walk the innermost kept dim side by side
}

func planReduce(dl, xl Layout) *reducePlan {
	type dimInfo struct{ n, xs, ds int }
	var kept, red []dimInfo
	for d, n := range xl.Shape {
		switch {
		case dl.Shape[d] == n && n != 1:
			kept = append(kept, dimInfo{n, xl.Strides[d], dl.Strides[d]})
		case dl.Shape[d] != n:
			red = append(red, dimInfo{n, xl.Strides[d], 0})
		}
	}
	for _, s := range [][]dimInfo{kept, red} {
		sort.SliceStable(s, func(i, j int) bool { return abs(s[i].xs) > abs(s[j].xs) })
	}
	coalesce := func(ds []dimInfo) (shape, xs, dss []int) {
		for _, d := range ds {
			if n := len(shape); n > 0 && xs[n-1] == d.xs*d.n && dss[n-1] == d.ds*d.n {
				shape[n-1] *= d.n
				xs[n-1], dss[n-1] = d.xs, d.ds
				continue
			}
			shape, xs, dss = append(shape, d.n), append(xs, d.xs), append(dss, d.ds)
		}
		if len(shape) == 0 {
			return []int{1}, []int{0}, []int{0}
		}
		return shape, xs, dss
	}
	p := &reducePlan{xOff: xl.Offset, dOff: dl.Offset}
	p.kShape, p.kX, p.kD = coalesce(kept)
	p.rShape, p.rX, _ = coalesce(red)
	p.nOut, p.nRed = layout.Numel(p.kShape), layout.Numel(p.rShape)
	last := len(p.kShape) - 1
	p.outer = len(kept) > 0 && p.kShape[last] >= 8 && abs(p.kX[last]) < abs(p.rX[len(p.rX)-1])
	return p
}

// reduceBlock is the most outputs computed into one accumulator buffer.
const reduceBlock = 4096

func reduceWith[T, A Number](p *reducePlan, dst, x []T, f Fold[T, A]) {
	if p.nRed == 0 {
		empty := make([]A, min(p.nOut, reduceBlock))
		for i := range empty {
			empty[i] = f.Identity
		}
		for lo := 0; lo < p.nOut; lo += reduceBlock {
			hi := min(lo+reduceBlock, p.nOut)
			reduceWrite(p, dst, lo, empty[:hi-lo], f.Out)
		}
		return
	}
	w := numWorkers(p.nOut * p.nRed)
	r0 := p.rShape[0]
	// Few outputs (or, side by side, fewer than 64 a goroutine, four
	// cache lines of every x row): split the outermost reduced dim and
	// combine partial results, unless that dim is too short to feed
	// every goroutine and the outputs can. Splitting the outputs keeps
	// every column's sum in the order of one goroutine's; a (256, 512)
	// bias gradient, split by columns rather than rows, went from 16.5-17.7
	// to 10.9-12.0 µs (with foldColsF32; go test -bench ReduceSumCols,
	// four interleaved runs).
	few := p.nOut < 16*w || p.outer && p.nOut < 64*w
	if w > 1 && r0 >= 2 && few && !(r0 < w && p.nOut >= w) {
		parts := min(w, r0)
		partial := make([][]A, parts)
		parallelFor(parts, r0, func(i, lo, hi int) {
			partial[i] = make([]A, p.nOut)
			reduceCompute(p, f, x, 0, p.nOut, lo, hi, partial[i])
		})
		acc := partial[0]
		for _, q := range partial[1:] {
			for j := range acc {
				acc[j] = f.Merge(acc[j], q[j])
			}
		}
		reduceWrite(p, dst, 0, acc, f.Out)
		return
	}
	parallelFor(w, p.nOut, func(_, lo, hi int) {
		acc := make([]A, min(hi-lo, reduceBlock))
		for b := lo; b < hi; b += reduceBlock {
			e := min(b+reduceBlock, hi)
			reduceCompute(p, f, x, b, e, 0, r0, acc[:e-b])
			reduceWrite(p, dst, b, acc[:e-b], f.Out)
		}
	})
}

// reduceCompute reduces, for the outputs olo..ohi-1 (flat index over kShape),
// the part of the reduced box whose outermost index is in [r0lo, r0hi),
// into acc[0:ohi-olo].
func reduceCompute[T, A Number](p *reducePlan, f Fold[T, A], x []T, olo, ohi, r0lo, r0hi int, acc []A) {
	// The reduced box as rows: outer dims walked by an odometer, the
	// innermost as a strided run of rn elements.
	rl := len(p.rShape) - 1
	rn, rs := p.rShape[rl], p.rX[rl]
	base := r0lo * p.rX[0]
	router := append([]int(nil), p.rShape[:rl]...)
	rows := 1
	if rl == 0 {
		rn = r0hi - r0lo
	} else {
		router[0] = r0hi - r0lo
		rows = layout.Numel(router)
	}
	ro := newOdo(router, p.rX[:rl], 0)
	if !p.outer {
		ko := newOdo(p.kShape, p.kX, olo)
		for i := range acc {
			xb := p.xOff + ko.off + base
			a := f.Identity
			ro.reset()
			for r := 0; r < rows; r++ {
				a = f.Vec.Run(a, x, xb+ro.off, rn, rs)
				ro.next()
			}
			acc[i] = a
			ko.next()
		}
		return
	}
	// Side by side: kept rows of kn outputs, each reduced element folded
	// into a run of accumulators.
	kl := len(p.kShape) - 1
	kn, ks := p.kShape[kl], p.kX[kl]
	ko := newOdo(p.kShape[:kl], p.kX[:kl], olo/kn)
	for pos, c := olo, olo%kn; pos < ohi; c = 0 {
		m := min(kn-c, ohi-pos)
		seg := acc[pos-olo : pos-olo+m]
		xb := p.xOff + ko.off + c*ks + base
		for j := range seg {
			seg[j] = f.Identity
		}
		ro.reset()
		for r := 0; r < rows; r++ {
			off, i := xb+ro.off, rn/4*4
			f.Vec.Groups(seg, x, off, rs, rn/4, ks)
			for off += i * rs; i < rn; i, off = i+1, off+rs {
				f.Vec.Cols(seg, x, off, ks)
			}
			ro.next()
		}
		pos += m
		ko.next()
	}
}

// reduceWrite stores out(acc[i]) to the output olo+i.
func reduceWrite[T, A Number](p *reducePlan, dst []T, olo int, acc []A, out func(A) T) {
	ko := newOdo(p.kShape, p.kD, olo)
	for _, a := range acc {
		dst[p.dOff+ko.off] = out(a)
		ko.next()
	}
}
