package cpu

import "math"

// A BinaryOp names a two-input elementwise op.
type BinaryOp uint8

// The binary ops. Comparisons and logical ops produce bool; see Compare
// and Logical.
const (
	Add BinaryOp = iota + 1
	Sub
	Mul
	Div
	Pow
	Maximum // NaN if either is NaN, as torch.maximum
	Minimum
	Eq
	Ne
	Lt
	Le
	Gt
	Ge
	LogicalAnd
	LogicalOr
	numBinaryOps
)

// NumBinaryOps is one more than the largest BinaryOp.
const NumBinaryOps = int(numBinaryOps)

// IsComparison reports whether op compares numbers into bool.
func (op BinaryOp) IsComparison() bool { return op >= Eq && op <= Ge }

// IsLogical reports whether op combines bools.
func (op BinaryOp) IsLogical() bool { return op == LogicalAnd || op == LogicalOr }

func binaryFunc[T Number](op BinaryOp) func(x, y T) T {
	switch op {
	case Add:
		return func(x, y T) T { return x + y }
	case Sub:
		return func(x, y T) T { return x - y }
	case Mul:
		return func(x, y T) T { return x * y }
	case Div:
		return func(x, y T) T { return x / y }
	case Pow:
		return func(x, y T) T { return T(math.Pow(float64(x), float64(y))) }
	case Maximum:
		return func(x, y T) T {
			if x != x || x >= y { // ties return x, as torch.maximum
				return x
			}
			return y
		}
	case Minimum:
		return func(x, y T) T {
			if x != x || x <= y {
				return x
			}
			return y
		}
	}
	panic("cpu: not an arithmetic binary op")
}

func compareFunc[T Number](op BinaryOp) func(x, y T) bool {
	switch op {
	case Eq:
		return func(x, y T) bool { return x == y }
	case Ne:
		return func(x, y T) bool { return x != y }
	case Lt:
		return func(x, y T) bool { return x < y }
	case Le:
		return func(x, y T) bool { return x <= y }
	case Gt:
		return func(x, y T) bool { return x > y }
	case Ge:
		return func(x, y T) bool { return x >= y }
	}
	panic("cpu: not a comparison")
}

// Binary computes dst = op(x, y) elementwise for the arithmetic ops.
// All three layouts have dst's shape (broadcast inputs with stride 0).
// dst may alias an input whose layout equals dl.
func Binary[T Number](op BinaryOp, dst []T, dl Layout, x []T, xl Layout, y []T, yl Layout) {
	f := binaryFunc[T](op)
	it := newIter(dl.Shape, dl, xl, yl)
	ds, xs, ys := it.step(0), it.step(1), it.step(2)
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 && ys == 1 {
			d, a, b := dst[o[0]:o[0]+n], x[o[1]:o[1]+n], y[o[2]:o[2]+n]
			switch op { // the hottest ops get loops the compiler can keep in registers
			case Add:
				for i := range d {
					d[i] = a[i] + b[i]
				}
			case Sub:
				for i := range d {
					d[i] = a[i] - b[i]
				}
			case Mul:
				for i := range d {
					d[i] = a[i] * b[i]
				}
			case Div:
				for i := range d {
					d[i] = a[i] / b[i]
				}
			default:
				for i := range d {
					d[i] = f(a[i], b[i])
				}
			}
			return
		}
		if ds == 1 && xs == 1 && ys == 0 && (op == Add || op == Mul) { // x op scalar row
			d, a, b := dst[o[0]:o[0]+n], x[o[1]:o[1]+n], y[o[2]]
			if op == Add {
				for i := range d {
					d[i] = a[i] + b
				}
			} else {
				for i := range d {
					d[i] = a[i] * b
				}
			}
			return
		}
		for i, di, xi, yi := 0, o[0], o[1], o[2]; i < n; i, di, xi, yi = i+1, di+ds, xi+xs, yi+ys {
			dst[di] = f(x[xi], y[yi])
		}
	})
}

// Compare computes dst = op(x, y) into bools, op being a comparison.
func Compare[T Number](op BinaryOp, dst []bool, dl Layout, x []T, xl Layout, y []T, yl Layout) {
	f := compareFunc[T](op)
	it := newIter(dl.Shape, dl, xl, yl)
	ds, xs, ys := it.step(0), it.step(1), it.step(2)
	it.runParallel(func(o []int, n int) {
		for i, di, xi, yi := 0, o[0], o[1], o[2]; i < n; i, di, xi, yi = i+1, di+ds, xi+xs, yi+ys {
			dst[di] = f(x[xi], y[yi])
		}
	})
}

// Logical computes dst = x AND y or x OR y.
func Logical(op BinaryOp, dst []bool, dl Layout, x []bool, xl Layout, y []bool, yl Layout) {
	and := op == LogicalAnd
	it := newIter(dl.Shape, dl, xl, yl)
	ds, xs, ys := it.step(0), it.step(1), it.step(2)
	it.runParallel(func(o []int, n int) {
		for i, di, xi, yi := 0, o[0], o[1], o[2]; i < n; i, di, xi, yi = i+1, di+ds, xi+xs, yi+ys {
			if and {
				dst[di] = x[xi] && y[yi]
			} else {
				dst[di] = x[xi] || y[yi]
			}
		}
	})
}

// A TernaryOp names a three-input elementwise op.
type TernaryOp uint8

// The ternary ops; the scalar is the value argument of addcmul/addcdiv.
const (
	Addcmul TernaryOp = iota + 1 // a + s·b·c
	Addcdiv                      // a + s·b/c
	numTernaryOps
)

// NumTernaryOps is one more than the largest TernaryOp.
const NumTernaryOps = int(numTernaryOps)

// Ternary computes dst = op(a, b, c; s) elementwise.
func Ternary[T Float](op TernaryOp, s float64, dst []T, dl Layout, a []T, al Layout, b []T, bl Layout, c []T, cl Layout) {
	v := T(s)
	it := newIter(dl.Shape, dl, al, bl, cl)
	ds, as, bs, cs := it.step(0), it.step(1), it.step(2), it.step(3)
	it.runParallel(func(o []int, n int) {
		di, ai, bi, ci := o[0], o[1], o[2], o[3]
		for i := 0; i < n; i++ {
			if op == Addcmul {
				dst[di] = a[ai] + v*b[bi]*c[ci]
			} else {
				dst[di] = a[ai] + v*b[bi]/c[ci]
			}
			di, ai, bi, ci = di+ds, ai+as, bi+bs, ci+cs
		}
	})
}

// Where computes dst = cond ? x : y elementwise.
func Where[T Elem](dst []T, dl Layout, cond []bool, cl Layout, x []T, xl Layout, y []T, yl Layout) {
	it := newIter(dl.Shape, dl, cl, xl, yl)
	ds, cs, xs, ys := it.step(0), it.step(1), it.step(2), it.step(3)
	it.runParallel(func(o []int, n int) {
		di, ci, xi, yi := o[0], o[1], o[2], o[3]
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
