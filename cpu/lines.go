package cpu

// A lineIter walks the lines of a strided shape along one dimension: for
// every position of the other dimensions it hands the kernel the offsets
// of the line's first element in each operand. It is an iter over the
// shape with dim set to 1 (so the other dimensions coalesce), plus the
// length of the lines and each operand's stride along dim.
//
// A kernel receives lines in rows of n neighbouring lines (operand k's
// line i starts at offs[k] + i*step(k)), so it can choose between walking
// each line (when the dim is the innermost in memory) and walking the n
// lines side by side (when it is not), which keeps memory access
// sequential both ways.
type lineIter struct {
	it     *iter
	length int   // extent along dim
	dstep  []int // per operand stride along dim
}

// newLineIter prepares the lines of shape along dim for operands with the
// given layouts; only their strides and offsets are read (so an operand
// may have a different extent along dim, or a stride of 0 there). A 0-d
// shape is treated as shape [1].
func newLineIter(shape []int, dim int, ls ...Layout) *lineIter {
	if len(shape) == 0 {
		shape, dim = []int{1}, 0
		for k := range ls {
			ls[k] = Layout{Shape: []int{1}, Strides: []int{0}, Offset: ls[k].Offset}
		}
	}
	outer := append([]int(nil), shape...)
	outer[dim] = 1
	li := &lineIter{it: newIter(outer, ls...), length: shape[dim], dstep: make([]int, len(ls))}
	for k, l := range ls {
		li.dstep[k] = l.Strides[dim]
	}
	if li.length == 0 {
		li.it.rows, li.it.inner = 0, 0
	}
	return li
}

// step returns the distance between neighbouring lines of operand k.
func (li *lineIter) step(k int) int { return li.it.step(k) }

// sideBySide reports whether a row of n lines is best walked with the n
// lines side by side: when neighbouring lines of operand k are closer in
// memory than neighbouring elements of one line.
func (li *lineIter) sideBySide(k, n int) bool {
	return n > 1 && abs(li.it.step(k)) < abs(li.dstep[k])
}

// run calls the row functions made by newRow (one per goroutine) for
// every row of lines, in parallel when the shape holds at least
// parallelThreshold elements. Distinct lines must write to distinct
// places.
func (li *lineIter) run(newRow func() func(offs []int, n int)) {
	li.it.runWorkers(li.it.rows*li.it.inner*li.length, newRow)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// An odo is an odometer over a shape: it keeps a multi-index and the
// matching offset for a set of strides, so that stepping to the next
// position (row-major) costs a few adds.
type odo struct {
	shape, str, idx []int
	off             int
}

// newOdo returns an odometer over shape with strides str, positioned at
// the flat index pos.
func newOdo(shape, str []int, pos int) *odo {
	o := &odo{shape: shape, str: str, idx: make([]int, len(shape))}
	for d := len(shape) - 1; d >= 0 && pos > 0; d-- {
		o.idx[d] = pos % shape[d]
		pos /= shape[d]
		o.off += o.idx[d] * str[d]
	}
	return o
}

// reset goes back to position 0.
func (o *odo) reset() {
	clear(o.idx)
	o.off = 0
}

// next advances one position; past the end it wraps to position 0.
func (o *odo) next() {
	for d := len(o.shape) - 1; d >= 0; d-- {
		o.idx[d]++
		o.off += o.str[d]
		if o.idx[d] < o.shape[d] {
			return
		}
		o.off -= o.idx[d] * o.str[d]
		o.idx[d] = 0
	}
}
