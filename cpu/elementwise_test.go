package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// elemShapes are the shapes elementwise kernels run on: odd ones and
// one above parallelThreshold.
var elemShapes = append(append([][]int(nil), oddShapes...), []int{129, 257})

// unaryCase is a function the unary kernel applies, with its float64
// reference, the domain of its inputs and, optionally, a vector function
// for contiguous runs (vec returns nil for element types it lacks).
type unaryCase[T Number] struct {
	name   string
	ref    func(x float64) float64
	lo, hi float64
	vec    func(dst, x []T)
}

// unaryCases are the kernel's test functions: a plain scalar function,
// and the vector fast paths (NegVec, and ExpVecF32 for float32).
func unaryCases[T Number]() []unaryCase[T] {
	exp, _ := any(ExpVecF32).(func(dst, x []T))
	return []unaryCase[T]{
		{"affine", func(x float64) float64 { return 2*x + 1 }, -5, 5, nil},
		{"NegVec", func(x float64) float64 { return -x }, -5, 5, NegVec[T]},
		{"exp", math.Exp, -5, 5, exp},
	}
}

func testUnaryType[T Number](t *testing.T) {
	r := newRand(11)
	for _, c := range unaryCases[T]() {
		if c.name == "exp" && isInt[T]() {
			continue
		}
		ref := c.ref
		f := Fn1[T, T]{F: func(x T) T { return T(ref(float64(x))) }, Vec: c.vec}
		for _, shape := range elemShapes {
			for _, xk := range inKinds {
				for _, dk := range outKinds {
					xl, xn := makeLayout(r, shape, xk)
					x := make([]T, xn)
					for i := range x {
						x[i] = T(c.lo + (c.hi-c.lo)*r.Float64())
					}
					dl, _ := makeLayout(r, shape, dk)
					dst := newOut[T](dl)
					Unary(f, dst, dl, x, xl)
					name := fmt.Sprintf("%T %s %v x:%s d:%s", x, c.name, shape, xk, dk)
					checkUntouched(t, name, dst, dl)
					forEach(shape, func(idx []int) {
						xv := f64(x[at(xl, idx)])
						want := f64(T(ref(xv)))
						if got := f64(dst[at(dl, idx)]); !approx.Abs(4*tolFor[T]()*max(math.Abs(want), 1)).Equal(got, want) {
							t.Fatalf("%s: f(%v) = %v, want %v", name, xv, got, want)
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
	t.Run("int32", testUnaryType[int32])
	// In place, and to another element type.
	y := []float64{1, -2, 3}
	Unary(Fn1[float64, float64]{F: func(v float64) float64 { return -v }, Vec: NegVec[float64]}, y, Contiguous(3), y, Contiguous(3))
	b := make([]bool, 3)
	Unary(Fn1[float64, bool]{F: func(v float64) bool { return v > 0 }}, b, Contiguous(3), y, Contiguous(3))
	if fmt.Sprint(y, b) != "[-1 2 -3] [false true false]" {
		t.Errorf("in place neg, then > 0: %v %v", y, b)
	}
}

// binaryCase is a function the binary kernel applies, with its float64
// reference (comparisons return 0 or 1) and its vector fast paths.
type binaryCase[T Number] struct {
	name string
	ref  func(x, y float64) float64
	vec  func(dst, x, y []T)
	vecS func(dst, x []T, y T)
}

func binaryCases[T Number]() []binaryCase[T] {
	return []binaryCase[T]{
		{"AddVec", func(x, y float64) float64 { return x + y }, AddVec[T], AddVecScalar[T]},
		{"SubVec", func(x, y float64) float64 { return x - y }, SubVec[T], nil},
		{"MulVec", func(x, y float64) float64 { return x * y }, MulVec[T], MulVecScalar[T]},
		{"DivVec", func(x, y float64) float64 { return x / y }, DivVec[T], nil},
		{"maximum", func(x, y float64) float64 {
			if math.IsNaN(x) || math.IsNaN(y) {
				return math.NaN()
			}
			return math.Max(x, y)
		}, nil, nil},
	}
}

// binaryInputs fills a buffer with small values (ties for comparisons),
// a few NaNs for floats, and no zero divisors for int32.
func binaryInputs[T Number](r *rand.Rand, buf []T, divisor bool) {
	for i := range buf {
		switch {
		case divisor && isInt[T]():
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

// checkBinary runs f on every pair of input layout kinds over the
// element shapes and compares with ref, read back through got.
func checkBinary[T Number, D Elem](t *testing.T, name string, f Fn2[T, D], ref func(x, y float64) float64) {
	r := newRand(12)
	for _, shape := range elemShapes {
		for _, xk := range inKinds {
			for _, yk := range inKinds {
				xl, xn := makeLayout(r, shape, xk)
				yl, yn := makeLayout(r, shape, yk)
				x, y := make([]T, xn), make([]T, yn)
				binaryInputs(r, x, false)
				binaryInputs(r, y, name == "DivVec")
				dk := outKinds[r.IntN(len(outKinds))]
				dl, _ := makeLayout(r, shape, dk)
				what := fmt.Sprintf("%T %s %v x:%s y:%s d:%s", x, name, shape, xk, yk, dk)
				dst := newOut[D](dl)
				Binary(f, dst, dl, x, xl, y, yl)
				checkUntouched(t, what, dst, dl)
				forEach(shape, func(idx []int) {
					xv, yv := f64(x[at(xl, idx)]), f64(y[at(yl, idx)])
					want := ref(xv, yv)
					if isInt[T]() && name == "DivVec" {
						want = float64(int32(xv) / int32(yv))
					}
					if g := f64(dst[at(dl, idx)]); !approx.Abs(4*tolFor[T]()*max(math.Abs(want), 1)).Equal(g, want) {
						t.Fatalf("%s: f(%v, %v) = %v, want %v", what, xv, yv, g, want)
					}
				})
			}
		}
	}
}

func testBinaryType[T Number](t *testing.T) {
	for _, c := range binaryCases[T]() {
		ref := c.ref
		f := Fn2[T, T]{F: func(x, y T) T { return T(ref(float64(x), float64(y))) }}
		if isInt[T]() && c.name == "DivVec" {
			f.F = func(x, y T) T { return x / y }
		}
		if c.name == "maximum" {
			f.F = func(x, y T) T {
				if x != x || x >= y {
					return x
				}
				return y
			}
		}
		checkBinary(t, c.name, f, ref) // scalar only
		f.Vec, f.VecScalar = c.vec, c.vecS
		checkBinary(t, c.name, f, ref)
	}
	lt := func(x, y float64) float64 { return b2f(x < y) }
	checkBinary(t, "lt", Fn2[T, bool]{F: func(x, y T) bool { return x < y }}, lt)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestBinary(t *testing.T) {
	t.Run("float32", testBinaryType[float32])
	t.Run("float64", testBinaryType[float64])
	t.Run("int32", testBinaryType[int32])
}

// TestBinaryBool runs logical functions of bools.
func TestBinaryBool(t *testing.T) {
	r := newRand(13)
	for _, c := range []struct {
		name string
		f    func(x, y bool) bool
	}{{"and", func(x, y bool) bool { return x && y }}, {"or", func(x, y bool) bool { return x || y }}} {
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
				Binary(Fn2[bool, bool]{F: c.f}, dst, dl, x, xl, y, yl)
				forEach(shape, func(idx []int) {
					if want := c.f(x[at(xl, idx)], y[at(yl, idx)]); dst[at(dl, idx)] != want {
						t.Fatalf("%s %v x:%s at %v", c.name, shape, xk, idx)
					}
				})
			}
		}
	}
}

func testTernaryType[T Float](t *testing.T) {
	r := newRand(14)
	const s = 0.5
	scalar := func(a, b, c T) T { return a + s*b*c }
	vec := func(d, a, b, c []T) {
		for i := range d {
			d[i] = a[i] + s*b[i]*c[i]
		}
	}
	for _, f := range []Fn3[T]{{F: scalar}, {F: scalar, Vec: vec}} {
		for _, shape := range elemShapes {
			for _, k := range append(inKinds, kContig) {
				al, an := makeLayout(r, shape, k)
				bl, bn := makeLayout(r, shape, k)
				cl, cn := makeLayout(r, shape, inKinds[r.IntN(4)])
				if k == kContig {
					cl, cn = makeLayout(r, shape, kContig)
				}
				a, b, c := make([]T, an), make([]T, bn), make([]T, cn)
				randFill(r, a)
				randFill(r, b)
				for i := range c {
					c[i] = T(0.5 + r.Float64())
				}
				dl, _ := makeLayout(r, shape, kStep)
				if k == kContig {
					dl, _ = makeLayout(r, shape, kContig)
				}
				dst := newOut[T](dl)
				Ternary(f, dst, dl, a, al, b, bl, c, cl)
				checkUntouched(t, "ternary", dst, dl)
				forEach(shape, func(idx []int) {
					av, bv, cv := f64(a[at(al, idx)]), f64(b[at(bl, idx)]), f64(c[at(cl, idx)])
					want := av + s*bv*cv
					if got := f64(dst[at(dl, idx)]); !approx.Abs(4*tolFor[T]()*max(math.Abs(want), 1)).Equal(got, want) {
						t.Fatalf("vec %v %v %s at %v: %v, want %v", f.Vec != nil, shape, k, idx, got, want)
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
				Unary(Fn1[float32, bool]{F: func(v float32) bool { return v > 0 }}, bd, dl, x, xl)
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

// TestBinaryRowBroadcast checks Binary where one operand is a short row
// broadcast over the rows of the other (binaryRows): either operand,
// a non-commutative op, rows that do not fill the last tile, a product
// large enough to split across goroutines, rows at and past the longest
// rowBroadcast takes, and dst aliasing the full operand.
func TestBinaryRowBroadcast(t *testing.T) {
	r := newRand(17)
	f := Fn2[float32, float32]{F: func(x, y float32) float32 { return x - y }, Vec: SubVec[float32]}
	for _, s := range [][2]int{{7, 10}, {33, 3}, {4099, 10}, {65, 64}, {9, 65}, {2, 1}} {
		rows, inner := s[0], s[1]
		full := make([]float32, rows*inner+5)
		row := make([]float32, inner+3)
		for i := range full {
			full[i] = float32(r.NormFloat64())
		}
		for i := range row {
			row[i] = float32(r.NormFloat64())
		}
		fl := Layout{Shape: []int{rows, inner}, Strides: []int{inner, 1}, Offset: 5}
		rl := Layout{Shape: []int{rows, inner}, Strides: []int{0, 1}, Offset: 3}
		dl := Layout{Shape: []int{rows, inner}, Strides: []int{inner, 1}}
		for k := 1; k <= 2; k++ {
			for _, alias := range []bool{false, true} {
				x, xl, y, yl := full, fl, row, rl
				if k == 1 {
					x, xl, y, yl = row, rl, full, fl
				}
				src := append([]float32(nil), full...)
				dst, dl := make([]float32, rows*inner), dl
				if alias {
					dst, dl = full, fl
				}
				Binary(f, dst, dl, x, xl, y, yl)
				for i := range rows {
					for j := range inner {
						a, b := src[5+i*inner+j], row[3+j]
						if k == 1 {
							a, b = b, a
						}
						if got := dst[dl.Offset+i*inner+j]; math.Float32bits(got) != math.Float32bits(a-b) {
							t.Fatalf("%dx%d k=%d alias=%v at (%d, %d): %v, want %v", rows, inner, k, alias, i, j, got, a-b)
						}
					}
				}
				copy(full, src)
			}
		}
	}
}

// TestBinaryRowBroadcastConcurrent runs binaryRows from several
// goroutines at once, each on its own operands: they share the pool of
// tiles, and none may see another's row (run it with -race).
func TestBinaryRowBroadcastConcurrent(t *testing.T) {
	f := Fn2[float32, float32]{F: func(x, y float32) float32 { return x + y }, Vec: AddVec[float32]}
	const rows, inner = 300, 7
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			x, row, dst := make([]float32, rows*inner), make([]float32, inner), make([]float32, rows*inner)
			for j := range row {
				row[j] = float32(100*g + j)
			}
			l := Layout{Shape: []int{rows, inner}, Strides: []int{inner, 1}}
			rl := Layout{Shape: []int{rows, inner}, Strides: []int{0, 1}}
			for range 50 {
				Binary(f, dst, l, x, l, row, rl)
				for i, v := range dst {
					if v != row[i%inner] {
						errs <- fmt.Errorf("goroutine %d: element %d = %v, want %v", g, i, v, row[i%inner])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
