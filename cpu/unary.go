package cpu

import (
	"math"
	"unsafe"
)

// A UnaryOp names a one-input elementwise op. Package tensor maps its
// own ops onto these codes in its op table.
type UnaryOp uint8

// The unary ops. Ops marked with a parameter read it from UnaryParams.
const (
	Neg UnaryOp = iota + 1
	Abs
	Sign
	Exp
	Log
	Log1p
	Sqrt
	Rsqrt
	Square
	Sin
	Cos
	Tanh
	Sigmoid
	ReLU
	GELU     // exact: x·Φ(x), with Φ the standard normal CDF
	SiLU     // x·sigmoid(x)
	Softplus // log(1+exp(βx))/β, or x where βx > threshold: A = β, B = threshold
	Erf
	PowScalar // x^A
	Clamp     // min(max(x, A), B); NaN stays NaN
	AddScalar // x + A
	MulScalar // x · A
	Identity
	numUnaryOps
)

// NumUnaryOps is one more than the largest UnaryOp, for completeness tests.
const NumUnaryOps = int(numUnaryOps)

// UnaryParams carries the scalar parameters of the ops that take them.
type UnaryParams struct{ A, B float64 }

// unaryFunc returns the scalar function of op for element type T.
// Float math runs in float64 and rounds once to T.
func unaryFunc[T Number](op UnaryOp, p UnaryParams) func(T) T {
	f := func(g func(float64) float64) func(T) T {
		return func(x T) T { return T(g(float64(x))) }
	}
	switch op {
	case Neg:
		return func(x T) T { return -x }
	case Abs:
		return func(x T) T {
			if x < 0 {
				return -x
			}
			return x
		}
	case Sign:
		return func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return T(0) - 1
			}
			return 0 // sign(±0) and sign(NaN) are 0, as in PyTorch 1.13
		}
	case Exp:
		return f(math.Exp)
	case Log:
		return f(math.Log)
	case Log1p:
		return f(math.Log1p)
	case Sqrt:
		return f(math.Sqrt)
	case Rsqrt:
		return f(func(x float64) float64 { return 1 / math.Sqrt(x) })
	case Square:
		return func(x T) T { return x * x }
	case Sin:
		return f(math.Sin)
	case Cos:
		return f(math.Cos)
	case Tanh:
		return f(math.Tanh)
	case Sigmoid:
		return f(sigmoid)
	case ReLU:
		return func(x T) T {
			if x > 0 || x != x {
				return x
			}
			return 0
		}
	case GELU:
		return f(func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) })
	case SiLU:
		return f(func(x float64) float64 { return x * sigmoid(x) })
	case Softplus:
		beta, threshold := p.A, p.B
		return f(func(x float64) float64 {
			if x*beta > threshold {
				return x
			}
			return math.Log1p(math.Exp(beta*x)) / beta
		})
	case Erf:
		return f(math.Erf)
	case PowScalar:
		e := p.A
		return f(func(x float64) float64 { return math.Pow(x, e) })
	case Clamp:
		lo, hi := p.A, p.B
		return f(func(x float64) float64 {
			if x != x {
				return x
			}
			return math.Min(math.Max(x, lo), hi)
		})
	case AddScalar:
		a := p.A
		return f(func(x float64) float64 { return x + a })
	case MulScalar:
		a := p.A
		return f(func(x float64) float64 { return x * a })
	case Identity:
		return func(x T) T { return x }
	}
	panic("cpu: unknown unary op")
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Unary computes dst = op(x) elementwise. dl and xl must have the same
// shape (broadcast x beforehand with stride 0); dst may alias x when the
// layouts are equal.
func Unary[T Number](op UnaryOp, p UnaryParams, dst []T, dl Layout, x []T, xl Layout) {
	f := unaryFunc[T](op, p)
	// float32 exp of contiguous rows uses the vector kernel (within 2 ulp
	// of math.Exp, see expAsm); T(1)/2 tells float32 from int32.
	vecExp := op == Exp && expAsm && unsafe.Sizeof(T(0)) == 4 && T(1)/2 != 0
	it := newIter(dl.Shape, dl, xl)
	ds, xs := it.step(0), it.step(1)
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 {
			d, s := dst[o[0]:o[0]+n], x[o[1]:o[1]+n]
			if op == Neg {
				for i := range d {
					d[i] = -s[i]
				}
				return
			}
			if op == Exp && vecExp {
				f32 := func(v []T) []float32 {
					return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
				}
				expF32(f32(d), f32(s))
				return
			}
			for i := range d {
				d[i] = f(s[i])
			}
			return
		}
		for i, di, xi := 0, o[0], o[1]; i < n; i, di, xi = i+1, di+ds, xi+xs {
			dst[di] = f(x[xi])
		}
	})
}

// Map computes dst = f(x) elementwise for any element types, with the
// same layout rules as Unary. Casts and logical not are Maps.
func Map[D, S Elem](dst []D, dl Layout, x []S, xl Layout, f func(S) D) {
	it := newIter(dl.Shape, dl, xl)
	ds, xs := it.step(0), it.step(1)
	it.runParallel(func(o []int, n int) {
		for i, di, xi := 0, o[0], o[1]; i < n; i, di, xi = i+1, di+ds, xi+xs {
			dst[di] = f(x[xi])
		}
	})
}

// Copy copies x into dst elementwise (a strided copy; both layouts have
// the same shape). It is how views become contiguous.
func Copy[T Elem](dst []T, dl Layout, x []T, xl Layout) {
	it := newIter(dl.Shape, dl, xl)
	ds, xs := it.step(0), it.step(1)
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 {
			copy(dst[o[0]:o[0]+n], x[o[1]:o[1]+n])
			return
		}
		for i, di, xi := 0, o[0], o[1]; i < n; i, di, xi = i+1, di+ds, xi+xs {
			dst[di] = x[xi]
		}
	})
}

// Fill sets every element of the view dl of dst to v.
func Fill[T Elem](dst []T, dl Layout, v T) {
	it := newIter(dl.Shape, dl)
	ds := it.step(0)
	it.runParallel(func(o []int, n int) {
		for i, di := 0, o[0]; i < n; i, di = i+1, di+ds {
			dst[di] = v
		}
	})
}

// Cast converts x to dst's element type with Go's conversion rules,
// which match PyTorch's: floats to int32 truncate toward zero, anything
// to bool is x != 0, bool to a number is 0 or 1.
func Cast[D, S Elem](dst []D, dl Layout, x []S, xl Layout) {
	Map(dst, dl, x, xl, castFunc[D, S]())
}

func castFunc[D, S Elem]() func(S) D {
	var f any
	switch any(*new(S)).(type) {
	case float32:
		f = castFrom[D, float32]()
	case float64:
		f = castFrom[D, float64]()
	case int32:
		f = castFrom[D, int32]()
	case bool:
		f = func(x bool) D {
			if x {
				return one[D]()
			}
			return *new(D)
		}
	}
	return f.(func(S) D)
}

// castFrom returns the conversion from the numeric type S to D as an any
// holding a func(S) D.
func castFrom[D Elem, S Number]() any {
	switch any(*new(D)).(type) {
	case float32:
		return func(x S) float32 { return float32(x) }
	case float64:
		return func(x S) float64 { return float64(x) }
	case int32:
		return func(x S) int32 { return int32(x) }
	case bool:
		return func(x S) bool { return x != 0 }
	}
	panic("cpu: unknown element type")
}

// one returns 1 (or true) as a D.
func one[D Elem]() D {
	var v any
	switch any(*new(D)).(type) {
	case float32:
		v = float32(1)
	case float64:
		v = float64(1)
	case int32:
		v = int32(1)
	case bool:
		v = true
	}
	return v.(D)
}
