package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var unaryParams = UnaryParams{A: 0.75, B: 1.5}

// unaryRef is the float64 reference of every UnaryOp, with the domain
// its inputs are drawn from. A missing op fails TestUnaryTableComplete.
var unaryRef = map[UnaryOp]struct {
	f      func(x float64) float64
	lo, hi float64
}{
	Neg:       {func(x float64) float64 { return -x }, -5, 5},
	Abs:       {math.Abs, -5, 5},
	Sign:      {func(x float64) float64 { return map[bool]float64{true: 1, false: -1}[x > 0] * b2f(x != 0) }, -5, 5},
	Exp:       {math.Exp, -5, 5},
	Log:       {math.Log, 0.01, 10},
	Log1p:     {math.Log1p, -0.99, 10},
	Sqrt:      {math.Sqrt, 0, 10},
	Rsqrt:     {func(x float64) float64 { return 1 / math.Sqrt(x) }, 0.01, 10},
	Square:    {func(x float64) float64 { return x * x }, -5, 5},
	Sin:       {math.Sin, -5, 5},
	Cos:       {math.Cos, -5, 5},
	Tanh:      {math.Tanh, -5, 5},
	Sigmoid:   {func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -10, 10},
	ReLU:      {func(x float64) float64 { return math.Max(x, 0) }, -5, 5},
	GELU:      {func(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }, -5, 5},
	SiLU:      {func(x float64) float64 { return x / (1 + math.Exp(-x)) }, -10, 10},
	Softplus:  {func(x float64) float64 { return refSoftplus(x, 0.75, 1.5) }, -5, 5},
	Erf:       {math.Erf, -3, 3},
	PowScalar: {func(x float64) float64 { return math.Pow(x, 0.75) }, 0, 5},
	Clamp:     {func(x float64) float64 { return math.Min(math.Max(x, 0.75), 1.5) }, -3, 3},
	AddScalar: {func(x float64) float64 { return x + 0.75 }, -5, 5},
	MulScalar: {func(x float64) float64 { return x * 0.75 }, -5, 5},
	Identity:  {func(x float64) float64 { return x }, -5, 5},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func refSoftplus(x, beta, threshold float64) float64 {
	if beta*x > threshold {
		return x
	}
	return math.Log(1+math.Exp(beta*x)) / beta
}

func TestUnaryTableComplete(t *testing.T) {
	for op := UnaryOp(1); int(op) < NumUnaryOps; op++ {
		if _, ok := unaryRef[op]; !ok {
			t.Errorf("UnaryOp %d has no reference in the test table", op)
		}
	}
	for op := BinaryOp(1); int(op) < NumBinaryOps; op++ {
		if _, ok := binaryRef[op]; !ok {
			t.Errorf("BinaryOp %d has no reference in the test table", op)
		}
	}
	for op := TernaryOp(1); int(op) < NumTernaryOps; op++ {
		if _, ok := ternaryRef[op]; !ok {
			t.Errorf("TernaryOp %d has no reference in the test table", op)
		}
	}
}

// elemShapes are the shapes elementwise kernels run on: odd ones and
// one above parallelThreshold.
var elemShapes = append(append([][]int(nil), oddShapes...), []int{129, 257})

func testUnaryType[T Float](t *testing.T) {
	r := newRand(11)
	for op := UnaryOp(1); int(op) < NumUnaryOps; op++ {
		ref := unaryRef[op]
		for _, shape := range elemShapes {
			for _, xk := range inKinds {
				for _, dk := range outKinds {
					xl, xn := makeLayout(r, shape, xk)
					x := make([]T, xn)
					for i := range x {
						x[i] = T(ref.lo + (ref.hi-ref.lo)*r.Float64())
					}
					dl, _ := makeLayout(r, shape, dk)
					dst := newOut[T](dl)
					Unary(op, unaryParams, dst, dl, x, xl)
					name := fmt.Sprintf("%T op%d %v x:%s d:%s", x, op, shape, xk, dk)
					checkUntouched(t, name, dst, dl)
					forEach(shape, func(idx []int) {
						xv := f64(x[at(xl, idx)])
						want := ref.f(xv)
						if got := f64(dst[at(dl, idx)]); !near(got, want, 4*tolFor[T](), math.Abs(want)) {
							t.Fatalf("%s: op(%v) = %v, want %v", name, xv, got, want)
						}
					})
				}
			}
		}
	}
}

func TestUnary(t *testing.T) {
	t.Run("float32", testUnaryType[float32])
	t.Run("float64", testUnaryType[float64])
	// int32 on the ops that stay integral.
	x := []int32{-3, 0, 5, -1}
	for _, c := range []struct {
		op   UnaryOp
		want []int32
	}{
		{Neg, []int32{3, 0, -5, 1}}, {Abs, []int32{3, 0, 5, 1}}, {Sign, []int32{-1, 0, 1, -1}},
		{Square, []int32{9, 0, 25, 1}}, {ReLU, []int32{0, 0, 5, 0}}, {Identity, x},
	} {
		d := make([]int32, 4)
		Unary(c.op, UnaryParams{}, d, Contiguous(4), x, Contiguous(4))
		if fmt.Sprint(d) != fmt.Sprint(c.want) {
			t.Errorf("int32 op %d = %v, want %v", c.op, d, c.want)
		}
	}
	// NaN handling of ReLU and Clamp (kept), Sign (0, as in PyTorch 1.13); in place.
	nan := math.NaN()
	y := []float64{nan, nan, nan}
	Unary(ReLU, UnaryParams{}, y[:1], Contiguous(1), y[:1], Contiguous(1))
	Unary(Clamp, UnaryParams{A: 0, B: 1}, y[1:2], Contiguous(1), y[1:2], Contiguous(1))
	Unary(Sign, UnaryParams{}, y[2:], Contiguous(1), y[2:], Contiguous(1))
	if !math.IsNaN(y[0]) || !math.IsNaN(y[1]) || y[2] != 0 {
		t.Errorf("ReLU, Clamp, Sign of NaN = %v, want [NaN NaN 0]", y)
	}
}

// binaryRef is the float64 reference of every BinaryOp (comparisons and
// logical ops return 0 or 1).
var binaryRef = map[BinaryOp]func(x, y float64) float64{
	Add: func(x, y float64) float64 { return x + y },
	Sub: func(x, y float64) float64 { return x - y },
	Mul: func(x, y float64) float64 { return x * y },
	Div: func(x, y float64) float64 { return x / y },
	Pow: func(x, y float64) float64 { return math.Pow(x, y) },
	Maximum: func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return math.Max(x, y)
	},
	Minimum: func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return math.Min(x, y)
	},
	Eq:         func(x, y float64) float64 { return b2f(x == y) },
	Ne:         func(x, y float64) float64 { return b2f(x != y) },
	Lt:         func(x, y float64) float64 { return b2f(x < y) },
	Le:         func(x, y float64) float64 { return b2f(x <= y) },
	Gt:         func(x, y float64) float64 { return b2f(x > y) },
	Ge:         func(x, y float64) float64 { return b2f(x >= y) },
	LogicalAnd: func(x, y float64) float64 { return b2f(x != 0 && y != 0) },
	LogicalOr:  func(x, y float64) float64 { return b2f(x != 0 || y != 0) },
}

// binaryInputs fills a buffer with values suited to op: small integers
// (ties for comparisons), positive bases for Pow, a few NaNs for floats.
func binaryInputs[T Number](r *rand.Rand, op BinaryOp, buf []T, second bool) {
	for i := range buf {
		switch {
		case op == Pow && !second:
			buf[i] = T(0.1 + 3*r.Float64())
		case op == Pow:
			buf[i] = T(4*r.Float64() - 2)
		case op == Div && second && isInt[T]():
			buf[i] = T(r.IntN(5) + 1)
		case isInt[T]():
			buf[i] = T(r.IntN(7) - 3)
		default:
			buf[i] = T(float64(r.IntN(7)-3) + 0.5*float64(r.IntN(2)))
			if r.IntN(40) == 0 {
				buf[i] = T(math.NaN())
			}
		}
	}
}

func testBinaryType[T Number](t *testing.T) {
	r := newRand(12)
	for op := BinaryOp(1); int(op) < NumBinaryOps; op++ {
		if op.IsLogical() {
			continue // bool only, below
		}
		if op == Pow && isInt[T]() {
			continue
		}
		ref := binaryRef[op]
		for _, shape := range elemShapes {
			for _, xk := range inKinds {
				for _, yk := range inKinds {
					xl, xn := makeLayout(r, shape, xk)
					yl, yn := makeLayout(r, shape, yk)
					x, y := make([]T, xn), make([]T, yn)
					binaryInputs(r, op, x, false)
					binaryInputs(r, op, y, true)
					dk := outKinds[r.IntN(len(outKinds))]
					dl, _ := makeLayout(r, shape, dk)
					name := fmt.Sprintf("%T op%d %v x:%s y:%s d:%s", x, op, shape, xk, yk, dk)
					var got func(idx []int) float64
					if op.IsComparison() {
						dst := newOut[bool](dl)
						Compare(op, dst, dl, x, xl, y, yl)
						checkUntouched(t, name, dst, dl)
						got = func(idx []int) float64 { return f64(dst[at(dl, idx)]) }
					} else {
						dst := newOut[T](dl)
						Binary(op, dst, dl, x, xl, y, yl)
						checkUntouched(t, name, dst, dl)
						got = func(idx []int) float64 { return f64(dst[at(dl, idx)]) }
					}
					forEach(shape, func(idx []int) {
						xv, yv := f64(x[at(xl, idx)]), f64(y[at(yl, idx)])
						want := ref(xv, yv)
						if isInt[T]() && op == Div {
							want = float64(int32(xv) / int32(yv))
						}
						if g := got(idx); !near(g, want, 4*tolFor[T](), math.Abs(want)) {
							t.Fatalf("%s: op(%v, %v) = %v, want %v", name, xv, yv, g, want)
						}
					})
				}
			}
		}
	}
}

func TestBinary(t *testing.T) {
	t.Run("float32", testBinaryType[float32])
	t.Run("float64", testBinaryType[float64])
	t.Run("int32", testBinaryType[int32])
}

func TestLogical(t *testing.T) {
	r := newRand(13)
	for _, op := range []BinaryOp{LogicalAnd, LogicalOr} {
		for _, shape := range elemShapes {
			for _, xk := range inKinds {
				xl, xn := makeLayout(r, shape, xk)
				yl, yn := makeLayout(r, shape, kPerm)
				x, y := make([]bool, xn), make([]bool, yn)
				for i := range x {
					x[i] = r.IntN(2) == 0
				}
				for i := range y {
					y[i] = r.IntN(2) == 0
				}
				dl, _ := makeLayout(r, shape, kStep)
				dst := newOut[bool](dl)
				Logical(op, dst, dl, x, xl, y, yl)
				forEach(shape, func(idx []int) {
					want := binaryRef[op](f64(x[at(xl, idx)]), f64(y[at(yl, idx)]))
					if f64(dst[at(dl, idx)]) != want {
						t.Fatalf("op %d %v x:%s at %v", op, shape, xk, idx)
					}
				})
			}
		}
	}
}

var ternaryRef = map[TernaryOp]func(a, b, c, s float64) float64{
	Addcmul: func(a, b, c, s float64) float64 { return a + s*b*c },
	Addcdiv: func(a, b, c, s float64) float64 { return a + s*b/c },
}

func testTernaryType[T Float](t *testing.T) {
	r := newRand(14)
	for op := TernaryOp(1); int(op) < NumTernaryOps; op++ {
		for _, shape := range elemShapes {
			for _, k := range inKinds {
				al, an := makeLayout(r, shape, k)
				bl, bn := makeLayout(r, shape, kPerm)
				cl, cn := makeLayout(r, shape, inKinds[r.IntN(4)])
				a, b, c := make([]T, an), make([]T, bn), make([]T, cn)
				randFill(r, a)
				randFill(r, b)
				for i := range c {
					c[i] = T(0.5 + r.Float64())
				}
				dl, _ := makeLayout(r, shape, kStep)
				dst := newOut[T](dl)
				Ternary(op, 0.5, dst, dl, a, al, b, bl, c, cl)
				checkUntouched(t, "ternary", dst, dl)
				forEach(shape, func(idx []int) {
					want := ternaryRef[op](f64(a[at(al, idx)]), f64(b[at(bl, idx)]), f64(c[at(cl, idx)]), 0.5)
					if got := f64(dst[at(dl, idx)]); !near(got, want, 4*tolFor[T](), math.Abs(want)) {
						t.Fatalf("op %d %v %s at %v: %v, want %v", op, shape, k, idx, got, want)
					}
				})
			}
		}
	}
}

func TestTernary(t *testing.T) {
	t.Run("float32", testTernaryType[float32])
	t.Run("float64", testTernaryType[float64])
}

func TestWhere(t *testing.T) {
	r := newRand(15)
	for _, shape := range elemShapes {
		for _, k := range inKinds {
			cl, cn := makeLayout(r, shape, k)
			xl, xn := makeLayout(r, shape, kPerm)
			yl, yn := makeLayout(r, shape, kBcast)
			cond, x, y := make([]bool, cn), make([]int32, xn), make([]int32, yn)
			for i := range cond {
				cond[i] = r.IntN(2) == 0
			}
			randFill(r, x)
			randFill(r, y)
			dl, _ := makeLayout(r, shape, kStep)
			dst := newOut[int32](dl)
			Where(dst, dl, cond, cl, x, xl, y, yl)
			checkUntouched(t, "where", dst, dl)
			forEach(shape, func(idx []int) {
				want := y[at(yl, idx)]
				if cond[at(cl, idx)] {
					want = x[at(xl, idx)]
				}
				if got := dst[at(dl, idx)]; got != want {
					t.Fatalf("where %v %s at %v: %v, want %v", shape, k, idx, got, want)
				}
			})
		}
	}
}

// testCastFrom casts S values to every element type and checks Go's (and
// torch's) rules: truncation toward zero, x != 0 for bool, 0/1 from bool.
func testCastFrom[S Elem](t *testing.T, vals []S) {
	l := Layout{Shape: []int{len(vals)}, Strides: []int{1}}
	f32, f64s, i32, b := make([]float32, len(vals)), make([]float64, len(vals)), make([]int32, len(vals)), make([]bool, len(vals))
	Cast(f32, l, vals, l)
	Cast(f64s, l, vals, l)
	Cast(i32, l, vals, l)
	Cast(b, l, vals, l)
	for i, v := range vals {
		fv := f64(v)
		if float64(f32[i]) != float64(float32(fv)) || f64s[i] != fv || float64(i32[i]) != math.Trunc(fv) || b[i] != (fv != 0) {
			t.Errorf("cast of %v (%T): %v %v %v %v", v, v, f32[i], f64s[i], i32[i], b[i])
		}
	}
}

func TestCast(t *testing.T) {
	testCastFrom(t, []float32{-2.7, -0.5, 0, 0.5, 3.9, 1e6})
	testCastFrom(t, []float64{-2.7, -0.5, 0, 0.5, 3.9, 1e9})
	testCastFrom(t, []int32{-3, 0, 7, 1 << 30})
	testCastFrom(t, []bool{true, false})
	// Strided and large: a transposed float64 view to contiguous int32.
	r := newRand(16)
	for _, shape := range elemShapes {
		xl, xn := makeLayout(r, shape, kPerm)
		x := make([]float64, xn)
		randFill(r, x)
		dl, _ := makeLayout(r, shape, kStep)
		dst := newOut[int32](dl)
		Cast(dst, dl, x, xl)
		checkUntouched(t, "cast", dst, dl)
		forEach(shape, func(idx []int) {
			if got, want := dst[at(dl, idx)], int32(x[at(xl, idx)]); got != want {
				t.Fatalf("cast %v at %v: %v, want %v", shape, idx, got, want)
			}
		})
	}
}

func TestCopyFillMap(t *testing.T) {
	r := newRand(17)
	for _, shape := range elemShapes {
		for _, xk := range inKinds {
			for _, dk := range outKinds {
				xl, xn := makeLayout(r, shape, xk)
				x := make([]float32, xn)
				randFill(r, x)
				dl, _ := makeLayout(r, shape, dk)
				dst := newOut[float32](dl)
				Copy(dst, dl, x, xl)
				checkUntouched(t, "copy", dst, dl)
				forEach(shape, func(idx []int) {
					if dst[at(dl, idx)] != x[at(xl, idx)] {
						t.Fatalf("copy %v %s->%s at %v", shape, xk, dk, idx)
					}
				})
				Fill(dst, dl, 2.5)
				checkUntouched(t, "fill", dst, dl)
				forEach(shape, func(idx []int) {
					if dst[at(dl, idx)] != 2.5 {
						t.Fatalf("fill %v %s at %v", shape, dk, idx)
					}
				})
				bd := newOut[bool](dl)
				Map(bd, dl, x, xl, func(v float32) bool { return v > 0 })
				checkUntouched(t, "map", bd, dl)
				forEach(shape, func(idx []int) {
					if bd[at(dl, idx)] != (x[at(xl, idx)] > 0) {
						t.Fatalf("map %v %s->%s at %v", shape, xk, dk, idx)
					}
				})
			}
		}
	}
}
