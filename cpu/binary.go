package cpu

import (
	"math"
	"sync"
	"unsafe"
)

// Fn2 is a two-input elementwise function from S to D, as a value: F
// computes one element; Vec, when not nil, a run where dst, x and y are
// all contiguous, and VecScalar, when not nil, a run where dst and x are
// contiguous and y is one element broadcast along it (x + 1, x · 0.5).
// Both must give F's results element for element. Comparisons have D
// bool; logical ops have S and D bool.
type Fn2[S, D Elem] struct {
	F         func(x, y S) D
	Vec       func(dst []D, x, y []S)
	VecScalar func(dst []D, x []S, y S)
}

// Binary computes dst = f(x, y) elementwise. All three layouts have
// dst's shape (broadcast inputs with stride 0). dst may alias an input
// whose layout equals dl.
func Binary[S, D Elem](f Fn2[S, D], dst []D, dl Layout, x []S, xl Layout, y []S, yl Layout) {
	if serialRun(dl, 0b11, xl, yl) {
		binarySerial(f, dst[dl.Offset:dl.Offset+dl.NumElements()], x, xl, y, yl)
		return
	}
	it := newIter(dl.Shape, dl, xl, yl)
	if k := it.rowBroadcast(); k != 0 && f.Vec != nil {
		binaryRows(f, dst, x, y, it, k)
		return
	}
	ds, xs, ys := it.step(0), it.step(1), it.step(2)
	g := f.F
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 && (ys == 1 || ys == 0) {
			d, a := dst[o[0]:o[0]+n], x[o[1]:o[1]+n]
			switch {
			case ys == 1 && f.Vec != nil:
				f.Vec(d, a, y[o[2]:o[2]+n])
				return
			case ys == 0 && f.VecScalar != nil:
				f.VecScalar(d, a, y[o[2]])
				return
			case ys == 1:
				b := y[o[2] : o[2]+n]
				for i := range d {
					d[i] = g(a[i], b[i])
				}
				return
			}
		}
		for i, di, xi, yi := 0, o[0], o[1], o[2]; i < n; i, di, xi, yi = i+1, di+ds, xi+xs, yi+ys {
			dst[di] = g(x[xi], y[yi])
		}
	})
}

// rowTile is how many values binaryRows hands the vector function at
// once: short rows, rowTile/inner of them.
const rowTile = 1024

// rowTiles holds binaryRows's copies of the broadcast row, as bytes for
// any element type (8 bytes a value at most).
var rowTiles = sync.Pool{New: func() any { return new([rowTile * 8]byte) }}

// binaryRows is Binary where it walks short rows of dst and of one
// operand, contiguous one after the other, and the same row of the other
// operand, k (1 for x, 2 for y; rowBroadcast): a bias added to every row
// of a matrix. A row of ten values one vector call at a time cost about
// 40 ns a row (the [256, 10] + [10] of a classifier's bias took 5.5-6.1
// µs through tensor.Add against 0.9 µs for [256, 10] + [256, 10]; 2.1 µs
// now); the broadcast row is copied rowTile/inner times over, and the
// vector function takes that many rows a call.
func binaryRows[S, D Elem](f Fn2[S, D], dst []D, x, y []S, it *iter, k int) {
	rows, inner := it.rows, it.inner
	per := rowTile / inner
	buf := rowTiles.Get().(*[rowTile * 8]byte)
	defer rowTiles.Put(buf)
	tile := unsafe.Slice((*S)(unsafe.Pointer(&buf[0])), per*inner)
	row := y[it.offsets[2]:][:inner]
	if k == 1 {
		row = x[it.offsets[1]:][:inner]
	}
	for n := copy(tile, row); n < len(tile); { // doubling: a few copies
		n += copy(tile[n:], tile[:n])
	}
	full := it.offsets[3-k] // the operand read row after row
	chunks := (rows + per - 1) / per
	parallelFor(min(numWorkers(rows*inner), chunks), chunks, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			r0 := c * per
			n := (min(rows, r0+per) - r0) * inner
			d := dst[it.offsets[0]+r0*inner:][:n]
			if k == 2 {
				f.Vec(d, x[full+r0*inner:][:n], tile[:n])
			} else {
				f.Vec(d, tile[:n], y[full+r0*inner:][:n])
			}
		}
	})
}

// binarySerial is Binary over the contiguous run d, for operands that
// serialRun admitted: runs as long as d, or single values broadcast.
func binarySerial[S, D Elem](f Fn2[S, D], d []D, x []S, xl Layout, y []S, yl Layout) {
	n, g := len(d), f.F
	xs, ys := scalarOperand(xl), scalarOperand(yl)
	switch {
	case xs && ys:
		v := g(x[xl.Offset], y[yl.Offset])
		for i := range d {
			d[i] = v
		}
	case xs:
		a, b := x[xl.Offset], y[yl.Offset:yl.Offset+n]
		for i := range d {
			d[i] = g(a, b[i])
		}
	case ys:
		a, b := x[xl.Offset:xl.Offset+n], y[yl.Offset]
		if f.VecScalar != nil {
			f.VecScalar(d, a, b)
			return
		}
		for i := range d {
			d[i] = g(a[i], b)
		}
	default:
		a, b := x[xl.Offset:xl.Offset+n], y[yl.Offset:yl.Offset+n]
		if f.Vec != nil {
			f.Vec(d, a, b)
			return
		}
		for i := range d {
			d[i] = g(a[i], b[i])
		}
	}
}

// Fn3 is a three-input elementwise function on T, as a value: F
// computes one element and Vec, when not nil, a run where every operand
// is contiguous, with F's results; VecScalarC, when not nil, a run where
// dst, a and b are contiguous and c is one broadcast value.
type Fn3[T Elem] struct {
	F          func(a, b, c T) T
	Vec        func(dst, a, b, c []T)
	VecScalarC func(dst, a, b []T, c T)
}

// Ternary computes dst = f(a, b, c) elementwise, with the layout rules
// of Binary.
func Ternary[T Elem](f Fn3[T], dst []T, dl Layout, a []T, al Layout, b []T, bl Layout, c []T, cl Layout) {
	if serialRun(dl, 0b111, al, bl, cl) && ternarySerial(f, dst[dl.Offset:dl.Offset+dl.NumElements()], a, al, b, bl, c, cl) {
		return
	}
	it := newIter(dl.Shape, dl, al, bl, cl)
	ds, as, bs, cs := it.step(0), it.step(1), it.step(2), it.step(3)
	g := f.F
	it.runParallel(func(o []int, n int) {
		if f.Vec != nil && ds == 1 && as == 1 && bs == 1 && cs == 1 {
			f.Vec(dst[o[0]:o[0]+n], a[o[1]:o[1]+n], b[o[2]:o[2]+n], c[o[3]:o[3]+n])
			return
		}
		if f.VecScalarC != nil && ds == 1 && as == 1 && bs == 1 && cs == 0 {
			f.VecScalarC(dst[o[0]:o[0]+n], a[o[1]:o[1]+n], b[o[2]:o[2]+n], c[o[3]])
			return
		}
		di, ai, bi, ci := o[0], o[1], o[2], o[3]
		for i := 0; i < n; i++ {
			dst[di] = g(a[ai], b[bi], c[ci])
			di, ai, bi, ci = di+ds, ai+as, bi+bs, ci+cs
		}
	})
}

// ternarySerial is Ternary over the contiguous run d for operands that
// serialRun admitted, reporting whether it ran: it takes the layouts
// of the vector functions (every operand a run, or c one value) and
// leaves others to the iterator.
func ternarySerial[T Elem](f Fn3[T], d, a []T, al Layout, b []T, bl Layout, c []T, cl Layout) bool {
	n := len(d)
	if scalarOperand(al) || scalarOperand(bl) {
		return false
	}
	av, bv := a[al.Offset:al.Offset+n], b[bl.Offset:bl.Offset+n]
	switch {
	case !scalarOperand(cl) && f.Vec != nil:
		f.Vec(d, av, bv, c[cl.Offset:cl.Offset+n])
	case scalarOperand(cl) && f.VecScalarC != nil:
		f.VecScalarC(d, av, bv, c[cl.Offset])
	default:
		return false
	}
	return true
}

// Where computes dst = cond ? x : y elementwise.
func Where[T Elem](dst []T, dl Layout, cond []bool, cl Layout, x []T, xl Layout, y []T, yl Layout) {
	it := newIter(dl.Shape, dl, cl, xl, yl)
	ds, cs, xs, ys := it.step(0), it.step(1), it.step(2), it.step(3)
	it.runParallel(func(o []int, n int) {
		di, ci, xi, yi := o[0], o[1], o[2], o[3]
		if unsafe.Sizeof(*new(T)) == 4 && ds == 1 && cs == 1 && xs == 1 && ys <= 1 {
			selectWords(as32(dst[di:di+n]), asBytes(cond[ci:ci+n]), as32(x[xi:xi+n]), as32(y[yi:]), ys)
			return
		}
		for i := 0; i < n; i++ {
			if cond[ci] {
				dst[di] = x[xi]
			} else {
				dst[di] = y[yi]
			}
			di, ci, xi, yi = di+ds, ci+cs, xi+xs, yi+ys
		}
	})
}

// SelectRun sets d[i] = x[i] where c[i], else y[i]: Where over
// contiguous runs of the same length (a fused pass's chunk).
func SelectRun[T Elem](d []T, c []bool, x, y []T) {
	if unsafe.Sizeof(*new(T)) == 4 {
		selectWords(as32(d), asBytes(c), as32(x), as32(y), 1)
		return
	}
	c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
	for i := range d {
		if c[i] {
			d[i] = x[i]
		} else {
			d[i] = y[i]
		}
	}
}

// selectWords sets dst[i] = x[i] where c[i] is 1 and y[i·ys] where it is
// 0 (ys 0: one y for all), on the bits of 4-byte elements and without a
// branch per element: a ReLU's gradient mask is true about half the
// time, at random, which a branch would mispredict.
func selectWords(dst []uint32, c []uint8, x, y []uint32, ys int) {
	c, x = c[:len(dst)], x[:len(dst)]
	if vecZ && len(dst) > 0 {
		d, xp := (*float32)(unsafe.Pointer(&dst[0])), (*float32)(unsafe.Pointer(&x[0]))
		if ys == 0 {
			selectScalarZ(d, &c[0], xp, len(dst), math.Float32frombits(y[0]))
		} else {
			selectZ(d, &c[0], xp, (*float32)(unsafe.Pointer(&y[:len(dst)][0])), len(dst))
		}
		return
	}
	if ys == 0 {
		v := y[0]
		for i := range dst {
			m := -uint32(c[i] & 1)
			dst[i] = x[i]&m | v&^m
		}
		return
	}
	y = y[:len(dst)]
	for i := range dst {
		m := -uint32(c[i] & 1)
		dst[i] = x[i]&m | y[i]&^m
	}
}

// as32 views a slice of 4-byte elements as their bits.
func as32[T Elem](s []T) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// asBytes views bools as bytes (0 or 1).
func asBytes(s []bool) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
