package cpu

import "github.com/tessera-ml/tessera/internal/layout"

// parallelThreshold is the element count above which a kernel splits its
// work across goroutines. Below it, starting goroutines costs more than
// the loop (measured: ~1 µs per goroutine against ~0.5 ns per element).
const parallelThreshold = 1 << 15

// An iter walks several operands that share one shape, row by row. It is
// the small cousin of PyTorch's TensorIterator: operands arrive already
// broadcast to the common shape (stride 0 on broadcast dimensions); iter
// drops dimensions of size 1, merges dimensions that are contiguous in
// every operand, and then visits the innermost dimension as rows of
// length inner, handing each row's starting offsets to a callback.
type iter struct {
	shape   []int   // coalesced shape, outermost first; the last is the row
	strides [][]int // per operand, coalesced
	offsets []int   // per operand base offset
	inner   int     // length of a row
	rows    int     // number of rows

	// Backing for the slices above (strides' headers inline, the ints
	// in one pointer-free slab with the serial walk's scratch after
	// them), so that an op on a small tensor costs two cheap
	// allocations here rather than a dozen.
	rowsBuf [iterOperands][]int
	scratch []int // a serial runElems' multi-index and offsets
}

// iterOperands is the operand count whose stride headers an iter holds
// inline; more allocate.
const iterOperands = 4

// newIter prepares iteration over shape for operands with the given
// layouts. Every layout must have len(shape) dimensions.
func newIter(shape []int, ls ...Layout) *iter {
	it := &iter{}
	nd, nk := max(len(shape), 1), len(ls) // nd bounds the coalesced rank
	ints := make([]int, (nk+1)*nd+nk+nd+2*nk)
	it.scratch = ints[(nk+1)*nd+nk:]
	it.strides = it.rowsBuf[:0]
	if nk > iterOperands {
		it.strides = make([][]int, 0, nk)
	}
	it.shape, ints = ints[:0:nd], ints[nd:]
	for range ls {
		it.strides, ints = append(it.strides, ints[:0:nd]), ints[nd:]
	}
	it.offsets = ints[:nk:nk]
	for k, l := range ls {
		it.offsets[k] = l.Offset
	}
	// Drop size-1 dimensions, then merge dimension d into d+1 when, for
	// every operand, stepping once along d equals stepping shape[d+1]
	// times along d+1.
	for d, size := range shape {
		if size == 1 {
			continue
		}
		n := len(it.shape)
		if n > 0 {
			merge := true
			for k, l := range ls {
				if it.strides[k][n-1] != l.Strides[d]*size {
					merge = false
					break
				}
			}
			if merge {
				it.shape[n-1] *= size
				for k, l := range ls {
					it.strides[k][n-1] = l.Strides[d]
				}
				continue
			}
		}
		it.shape = append(it.shape, size)
		for k, l := range ls {
			it.strides[k] = append(it.strides[k], l.Strides[d])
		}
	}
	if len(it.shape) == 0 { // a single element
		it.shape = append(it.shape, 1)
		for k := range ls {
			it.strides[k] = append(it.strides[k], 0)
		}
	}
	for d := range shape {
		if shape[d] == 0 {
			it.rows = 0
			it.inner = 0
			return it
		}
	}
	it.inner = it.shape[len(it.shape)-1]
	it.rows = layout.Numel(it.shape[:len(it.shape)-1])
	return it
}

// rowBroadcast reports, for an iter over dst and two operands, which
// operand (1 or 2; 0 for none) is one row of at most rowTile/16 values
// seen by every row, where dst and the other operand are rows of the
// same length one after the other: a bias row added to a matrix.
func (it *iter) rowBroadcast() int {
	if len(it.shape) != 2 || len(it.strides) != 3 || it.rows < 2 || it.inner > rowTile/16 {
		return 0
	}
	rowsOf := func(s []int) bool { return s[0] == it.inner && s[1] == 1 }
	row := func(s []int) bool { return s[0] == 0 && s[1] == 1 }
	switch st := it.strides; {
	case !rowsOf(st[0]):
		return 0
	case rowsOf(st[1]) && row(st[2]):
		return 2
	case row(st[1]) && rowsOf(st[2]):
		return 1
	}
	return 0
}

// step returns the innermost stride of operand k.
func (it *iter) step(k int) int { return it.strides[k][len(it.shape)-1] }

// run calls row(offs, n) serially for every row, where offs[k] is operand
// k's offset of the row's first element and n the row's length.
func (it *iter) run(row func(offs []int, n int)) {
	it.runElems(0, it.rows*it.inner, row, it.scratch)
}

// runParallel is run split across GOMAXPROCS goroutines when there are at
// least parallelThreshold elements. row must only write to places that
// no other element writes to; it may be handed part of a row (n smaller
// than inner), because a fully coalesced operand is a single long row
// and still has to be split.
func (it *iter) runParallel(row func(offs []int, n int)) {
	if total := it.rows * it.inner; numWorkers(total) <= 1 || total < 2 {
		it.runElems(0, total, row, it.scratch) // without the closure below
		return
	}
	it.runWorkers(it.rows*it.inner, func() func(offs []int, n int) { return row })
}

// runWorkers is runParallel for kernels whose cost is not one unit per
// element: work decides whether to split, and newRow is called once per
// goroutine so that each can own scratch buffers. Chunks are whole rows
// when there are at least four rows per goroutine (so that whole rows
// balance), else equal runs of elements. A panic in a goroutine is
// re-raised in the caller.
func (it *iter) runWorkers(work int, newRow func() func(offs []int, n int)) {
	total := it.rows * it.inner
	parts := numWorkers(work)
	if parts <= 1 || total < 2 {
		it.runElems(0, total, newRow(), it.scratch)
		return
	}
	units, size := total, 1
	if it.rows >= 4*parts {
		units, size = it.rows, it.inner
	}
	parallelFor(parts, units, func(_, lo, hi int) {
		it.runElems(lo*size, hi*size, newRow(), nil)
	})
}

// runElems visits the elements lo..hi-1 (in row-major order over the
// coalesced shape) as row segments, keeping a multi-index over the outer
// dimensions so that each row step costs one add per operand. It keeps
// its multi-index and offsets in scratch when that is long enough (a
// serial walk passes the iter's own; concurrent ones pass nil).
func (it *iter) runElems(lo, hi int, row func(offs []int, n int), scratch []int) {
	if lo >= hi {
		return
	}
	inner := it.inner
	outer := it.shape[:len(it.shape)-1]
	nk := len(it.offsets)
	if need := len(outer) + 2*nk; len(scratch) < need {
		scratch = make([]int, need)
	}
	idx, offs, part := scratch[:len(outer)], scratch[len(outer):len(outer)+nk], scratch[len(outer)+nk:len(outer)+2*nk]
	clear(idx)
	// Position the multi-index at the row holding element lo.
	r, c := lo/inner, lo%inner
	for d := len(outer) - 1; d >= 0; d-- {
		idx[d] = r % outer[d]
		r /= outer[d]
	}
	for k := range offs {
		offs[k] = it.offsets[k]
		for d := range outer {
			offs[k] += idx[d] * it.strides[k][d]
		}
	}
	for {
		n := min(inner-c, hi-lo)
		if c == 0 {
			row(offs, n)
		} else {
			for k := range offs {
				part[k] = offs[k] + c*it.step(k)
			}
			row(part, n)
		}
		lo += n
		c = 0
		if lo >= hi {
			return
		}
		// Advance the multi-index by one row.
		for d := len(outer) - 1; d >= 0; d-- {
			idx[d]++
			for k := range offs {
				offs[k] += it.strides[k][d]
			}
			if idx[d] < outer[d] {
				break
			}
			for k := range offs {
				offs[k] -= idx[d] * it.strides[k][d]
			}
			idx[d] = 0
		}
	}
}

// serialRun reports whether an elementwise kernel over dl may skip the
// iterator and run as one serial loop: dl and every operand of ls
// address the same row-major run without gaps (an operand of broadcast
// marks may instead be one element broadcast everywhere, all its
// strides 0), and the run is too short to split across goroutines. Most
// ops of a small model take this path, which allocates nothing.
func serialRun(dl Layout, broadcast uint, ls ...Layout) bool {
	n := dl.NumElements()
	if n == 0 || numWorkers(n) > 1 || !dl.IsContiguous() {
		return false
	}
	for k, l := range ls {
		if !l.IsContiguous() && (broadcast&(1<<k) == 0 || !allZero(l)) {
			return false
		}
	}
	return true
}

// allZero reports whether l is one element broadcast: stride 0 on every
// dimension of size above 1.
func allZero(l Layout) bool {
	for d, s := range l.Strides {
		if s != 0 && l.Shape[d] != 1 {
			return false
		}
	}
	return true
}

// scalarOperand reports whether l, an operand that serialRun admitted
// as broadcast, is one element seen many times rather than a run.
func scalarOperand(l Layout) bool { return allZero(l) && l.NumElements() > 1 }
