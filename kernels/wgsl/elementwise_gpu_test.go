package wgsl_test

import (
	"github.com/tessera-ml/tessera/internal/approx"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// ewCase is a set of operand views over flat buffers of the given sizes.
type ewCase struct {
	name string
	out  wgsl.Layout
	in   []wgsl.Layout
	size []int // buffer elements: out, then inputs
}

// ewCases covers the three kernel modes: strided (transposed, broadcast,
// offset), contiguous with a broadcast scalar, and vec4.
func ewCases(nIn int) []ewCase {
	t := wgsl.Layout{Shape: []int{33, 65}, Strides: []int{1, 33}, Offset: 5}  // a transposed (65, 33) view
	row := wgsl.Layout{Shape: []int{33, 65}, Strides: []int{0, 1}, Offset: 3} // (65) broadcast over rows
	col := wgsl.Layout{Shape: []int{33, 65}, Strides: []int{1, 0}}            // (33, 1) broadcast over columns
	strided := ewCase{name: "strided", out: wgsl.Layout{Shape: []int{33, 65}, Strides: []int{70, 1}, Offset: 2}, size: []int{33*70 + 2}}
	for _, l := range []wgsl.Layout{t, row, col}[:nIn] {
		strided.in = append(strided.in, l)
	}
	strided.size = append(strided.size, 65*33+5, 65+3, 33)[:1+nIn]
	contig := ewCase{name: "contig+scalar", out: wgsl.Layout{Shape: []int{7, 33}, Strides: []int{33, 1}, Offset: 1}, size: []int{7*33 + 1}}
	vec := ewCase{name: "vec4", out: wgsl.Contiguous(4, 65), size: []int{260}}
	for k := 0; k < nIn; k++ {
		if k == 1 {
			contig.in = append(contig.in, wgsl.Layout{Shape: []int{7, 33}, Strides: []int{0, 0}, Offset: 2})
			contig.size = append(contig.size, 3)
			vec.in = append(vec.in, wgsl.Layout{Shape: []int{4, 65}, Strides: []int{0, 0}, Offset: 1})
			vec.size = append(vec.size, 2)
			continue
		}
		contig.in = append(contig.in, wgsl.Layout{Shape: []int{7, 33}, Strides: []int{33, 1}, Offset: 3})
		contig.size = append(contig.size, 7*33+3)
		vec.in = append(vec.in, wgsl.Layout{Shape: []int{4, 65}, Strides: []int{65, 1}, Offset: 8})
		vec.size = append(vec.size, 260+8)
	}
	return []ewCase{strided, contig, vec}
}

// runEW runs one elementwise kernel on raw operand bytes and returns the
// whole output buffer (pre-filled with outInit).
func runEW(t *testing.T, g *device.GPU, expr string, inTypes []string, outType string, a wgsl.ElementwiseArgs, outInit []byte, ins [][]byte) []byte {
	t.Helper()
	k, err := wgsl.Elementwise(expr, inTypes, outType, a)
	if err != nil {
		t.Fatalf("Elementwise(%q): %v", expr, err)
	}
	b := bufs{"out": upload(t, g, outInit)}
	for i, name := range []string{"x", "y", "z"}[:len(ins)] {
		if i < len(a.Alias) && a.Alias[i] {
			continue
		}
		b[name] = upload(t, g, ins[i])
	}
	run(t, g, k, b)
	return read(t, g, b["out"])
}

// unaryCase is an expression and its float64 reference (the parameters
// p0 and p1 baked in), rounded once to float32 on the CPU.
type unaryCase struct {
	name   string
	ref    func(x float64) float64
	expr   string // as in tensor/op.go
	p0, p1 float64
	lo, hi float64
	atol   float64
	rtol   float64
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var unaryCases = []unaryCase{
	{"Neg", func(x float64) float64 { return -x }, "-x", 0, 0, -10, 10, 0, 0},
	{"Abs", math.Abs, "abs(x)", 0, 0, -10, 10, 0, 0},
	{"Sign", func(x float64) float64 { return float64(b2u(x > 0)) - float64(b2u(x < 0)) }, "sign(x)", 0, 0, -10, 10, 0, 0},
	{"Exp", math.Exp, "exp(x)", 0, 0, -20, 20, 1e-30, 4e-6},
	{"Log", math.Log, "log(x)", 0, 0, 1e-3, 1e3, 1e-6, 1e-6},
	{"Log1p", math.Log1p, "log1p(x)", 0, 0, -0.999, 5, 1e-7, 1e-6},
	{"Sqrt", math.Sqrt, "sqrt(x)", 0, 0, 0, 1e3, 0, 1e-6},
	{"Rsqrt", func(x float64) float64 { return 1 / math.Sqrt(x) }, "inverseSqrt(x)", 0, 0, 1e-3, 1e3, 0, 1e-6},
	{"Square", func(x float64) float64 { return x * x }, "x * x", 0, 0, -10, 10, 0, 0},
	{"Sin", math.Sin, "sin(x)", 0, 0, -10, 10, 2e-6, 0},
	{"Cos", math.Cos, "cos(x)", 0, 0, -10, 10, 2e-6, 0},
	{"Tanh", math.Tanh, "tanh(x)", 0, 0, -12, 12, 2e-6, 2e-6},
	{"Sigmoid", sigmoid, "1.0 / (1.0 + exp(-x))", 0, 0, -30, 30, 1e-7, 4e-6},
	{"ReLU", func(x float64) float64 { return math.Max(x, 0) }, "select(x, 0.0, x <= 0.0)", 0, 0, -10, 10, 0, 0},
	{"GELU", func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, "0.5 * x * (1.0 + erf_(x * 0.7071067811865476))", 0, 0, -8, 8, 1e-6, 1e-6},
	{"SiLU", func(x float64) float64 { return x * sigmoid(x) }, "x / (1.0 + exp(-x))", 0, 0, -30, 30, 1e-6, 4e-6},
	{"Softplus", func(x float64) float64 {
		if 2*x > 20 {
			return x
		}
		return math.Log1p(math.Exp(2*x)) / 2
	}, "select(log1p(exp(p0 * x)) / p0, x, x * p0 > p1)", 2, 20, -30, 30, 1e-6, 4e-6},
	{"Erf", math.Erf, "erf_(x)", 0, 0, -5, 5, 3e-7, 0},
	{"PowScalar2", func(x float64) float64 { return math.Pow(x, 2) }, "pow_(x, p0)", 2, 0, -10, 10, 0, 0},
	{"PowScalar3", func(x float64) float64 { return math.Pow(x, 3) }, "pow_(x, p0)", 3, 0, -10, 10, 0, 3e-7},
	{"PowScalar-1.5", func(x float64) float64 { return math.Pow(x, -1.5) }, "pow_(x, p0)", -1.5, 0, -2, 10, 0, 5e-6},
	// op.go's Clamp uses x != x, which lavapipe folds to false: the
	// prelude's isnan_ is the portable test.
	{"Clamp", func(x float64) float64 { return math.Min(math.Max(x, -0.5), 0.25) }, "select(min(max(x, p0), p1), x, isnan_(x))", -0.5, 0.25, -1, 1, 0, 0},
	{"AddScalar", func(x float64) float64 { return x + 0.5 }, "x + p0", 0.5, 0, -10, 10, 0, 0},
	{"MulScalar", func(x float64) float64 { return x * -3 }, "x * p0", -3, 0, -10, 10, 0, 0},
	{"Identity", func(x float64) float64 { return x }, "x", 0, 0, -10, 10, 0, 0},
}

// viaF64 runs a float64 function on float32 elements, rounding once.
func viaF64(ref func(x float64) float64) cpu.Fn1[float32, float32] {
	return cpu.Fn1[float32, float32]{F: func(x float32) float32 { return float32(ref(float64(x))) }}
}

func TestElementwiseUnaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(1)
	for _, uc := range unaryCases {
		for _, c := range ewCases(1) {
			x := r.f32s(c.size[1], uc.lo, uc.hi)
			if uc.name == "Log1p" {
				for i := 0; i < len(x); i += 7 {
					x[i] = float32(math.Ldexp(float64(x[i]), -20)) // tiny arguments
				}
			}
			init := r.f32s(c.size[0], -1, 1)
			got := bytesF32(runEW(t, g, uc.expr, []string{wgsl.F32}, wgsl.F32,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, P0: uc.p0, P1: uc.p1, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(x)}))
			want := append([]float32(nil), init...)
			cpu.Unary(viaF64(uc.ref), want, cl(c.out), x, cl(c.in[0]))
			approx.Require(t, uc.name+"/"+c.name, got, want, approx.AbsRel(uc.atol, uc.rtol))
		}
	}
}

// binaryCase is an expression and its float64 reference.
type binaryCase struct {
	name   string
	ref    func(x, y float64) float64
	expr   string
	lo, hi float64
	rtol   float64
}

// nanOr returns f, except NaN when either operand is NaN.
func nanOr(f func(x, y float64) float64) func(x, y float64) float64 {
	return func(x, y float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return f(x, y)
	}
}

var binaryCases = []binaryCase{
	{"Add", func(x, y float64) float64 { return x + y }, "x + y", -10, 10, 0},
	{"Sub", func(x, y float64) float64 { return x - y }, "x - y", -10, 10, 0},
	{"Mul", func(x, y float64) float64 { return x * y }, "x * y", -10, 10, 0},
	{"Div", func(x, y float64) float64 { return x / y }, "x / y", 0.5, 10, 3e-7},
	{"Pow", math.Pow, "pow_(x, y)", 0.1, 4, 5e-6},
	// op.go writes x != x; see Clamp.
	{"Maximum", nanOr(math.Max), "select(select(y, x, x > y), x, isnan_(x))", -10, 10, 0},
	{"Minimum", nanOr(math.Min), "select(select(y, x, x < y), x, isnan_(x))", -10, 10, 0},
}

var compareCases = []struct {
	name string
	ref  func(x, y float32) bool
	expr string
}{
	{"Eq", func(x, y float32) bool { return x == y }, "x == y"},
	{"Ne", func(x, y float32) bool { return x != y }, "x != y"},
	{"Lt", func(x, y float32) bool { return x < y }, "x < y"},
	{"Le", func(x, y float32) bool { return x <= y }, "x <= y"},
	{"Gt", func(x, y float32) bool { return x > y }, "x > y"},
	{"Ge", func(x, y float32) bool { return x >= y }, "x >= y"},
}

func TestElementwiseBinaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(2)
	for _, c := range ewCases(2) {
		for _, bc := range binaryCases {
			x, y := r.f32s(c.size[1], bc.lo, bc.hi), r.f32s(c.size[2], bc.lo, bc.hi)
			if bc.name == "Maximum" || bc.name == "Minimum" {
				x[0], y[1] = float32(math.NaN()), float32(math.NaN())
			}
			init := r.f32s(c.size[0], -1, 1)
			got := bytesF32(runEW(t, g, bc.expr, []string{wgsl.F32, wgsl.F32}, wgsl.F32,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(x), f32bytes(y)}))
			want := append([]float32(nil), init...)
			ref := bc.ref
			f := cpu.Fn2[float32, float32]{F: func(x, y float32) float32 { return float32(ref(float64(x), float64(y))) }}
			cpu.Binary(f, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
			approx.Require(t, bc.name+"/"+c.name, got, want, approx.AbsRel(0, bc.rtol))
		}
		// Comparisons on small integers as f32 (ties included) and i32.
		for _, cc := range compareCases {
			xi, yi := r.i32s(c.size[1], -3, 3), r.i32s(c.size[2], -3, 3)
			x, y := make([]float32, len(xi)), make([]float32, len(yi))
			for i := range xi {
				x[i] = float32(xi[i])
			}
			for i := range yi {
				y[i] = float32(yi[i])
			}
			want := make([]bool, c.size[0])
			cpu.Binary(cpu.Fn2[float32, bool]{F: cc.ref}, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
			for _, typ := range []string{wgsl.F32, wgsl.I32} {
				xb, yb := f32bytes(x), f32bytes(y)
				if typ == wgsl.I32 {
					xb, yb = i32bytes(xi), i32bytes(yi)
				}
				got := bytesU32(runEW(t, g, cc.expr, []string{typ, typ}, wgsl.Bool,
					wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, boolbytes(make([]bool, c.size[0])), [][]byte{xb, yb}))
				for i := range want {
					if got[i] != b2u(want[i]) {
						t.Fatalf("%s/%s/%s: [%d] = %d, want %v", cc.name, typ, c.name, i, got[i], want[i])
					}
				}
			}
		}
		// Logical ops on bools.
		for _, lc := range []struct {
			ref  func(x, y bool) bool
			expr string
		}{{func(x, y bool) bool { return x && y }, "x && y"}, {func(x, y bool) bool { return x || y }, "x || y"}} {
			x, y := randBools(&r, c.size[1]), randBools(&r, c.size[2])
			want := make([]bool, c.size[0])
			cpu.Binary(cpu.Fn2[bool, bool]{F: lc.ref}, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
			got := bytesU32(runEW(t, g, lc.expr, []string{wgsl.Bool, wgsl.Bool}, wgsl.Bool,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, boolbytes(make([]bool, c.size[0])), [][]byte{boolbytes(x), boolbytes(y)}))
			for i := range want {
				if got[i] != b2u(want[i]) {
					t.Fatalf("%s/%s: [%d] = %d, want %v", lc.expr, c.name, i, got[i], want[i])
				}
			}
		}
	}
}

func TestElementwiseTernaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(3)
	for _, c := range ewCases(3) {
		for _, tc := range []struct {
			ref  func(a, b, c float32) float32
			expr string
		}{
			{func(a, b, c float32) float32 { return a + 0.75*b*c }, "x + p0 * y * z"},
			{func(a, b, c float32) float32 { return a + 0.75*b/c }, "x + p0 * y / z"},
		} {
			a, b, d := r.f32s(c.size[1], -2, 2), r.f32s(c.size[2], -2, 2), r.f32s(c.size[3], 0.5, 2)
			init := r.f32s(c.size[0], -1, 1)
			got := bytesF32(runEW(t, g, tc.expr, []string{wgsl.F32, wgsl.F32, wgsl.F32}, wgsl.F32,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, P0: 0.75, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(a), f32bytes(b), f32bytes(d)}))
			want := append([]float32(nil), init...)
			cpu.Ternary(cpu.Fn3[float32]{F: tc.ref}, want, cl(c.out), a, cl(c.in[0]), b, cl(c.in[1]), d, cl(c.in[2]))
			approx.Require(t, tc.expr+"/"+c.name, got, want, approx.AbsRel(1e-6, 1e-6))
		}
		// where(cond, x, y) for f32 and i32.
		cond := randBools(&r, c.size[1])
		xi, yi := r.i32s(c.size[2], -100, 100), r.i32s(c.size[3], -100, 100)
		wantI := bytesI32(i32bytes(make([]int32, c.size[0])))
		cpu.Where(wantI, cl(c.out), cond, cl(c.in[0]), xi, cl(c.in[1]), yi, cl(c.in[2]))
		gotI := bytesI32(runEW(t, g, "select(z, y, x)", []string{wgsl.Bool, wgsl.I32, wgsl.I32}, wgsl.I32,
			wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, i32bytes(make([]int32, c.size[0])), [][]byte{boolbytes(cond), i32bytes(xi), i32bytes(yi)}))
		for i := range wantI {
			if gotI[i] != wantI[i] {
				t.Fatalf("where/%s: [%d] = %d, want %d", c.name, i, gotI[i], wantI[i])
			}
		}
	}
}

func TestElementwiseCastFillCopyGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(4)
	lim := limits(g)
	for _, c := range ewCases(1) {
		x := r.f32s(c.size[1], -100, 100)
		x[0], x[1] = 0, -0.75
		// f32 -> i32 truncates toward zero.
		wantI := make([]int32, c.size[0])
		cpu.Cast(wantI, cl(c.out), x, cl(c.in[0]))
		gotI := bytesI32(runEW(t, g, "i32(x)", []string{wgsl.F32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: lim}, i32bytes(make([]int32, c.size[0])), [][]byte{f32bytes(x)}))
		checkI32(t, "cast f32->i32/"+c.name, gotI, wantI)
		// i32 -> f32, bool -> f32, f32 -> bool.
		xi := r.i32s(c.size[1], -1000, 1000)
		wantF := make([]float32, c.size[0])
		cpu.Cast(wantF, cl(c.out), xi, cl(c.in[0]))
		gotF := bytesF32(runEW(t, g, "f32(x)", []string{wgsl.I32}, wgsl.F32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: lim}, f32bytes(make([]float32, c.size[0])), [][]byte{i32bytes(xi)}))
		approx.Require(t, "cast i32->f32/"+c.name, gotF, wantF, approx.AbsRel(0, 0))
		xb := randBools(&r, c.size[1])
		cpu.Cast(wantF, cl(c.out), xb, cl(c.in[0]))
		gotF = bytesF32(runEW(t, g, "f32(x)", []string{wgsl.Bool}, wgsl.F32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: lim}, f32bytes(make([]float32, c.size[0])), [][]byte{boolbytes(xb)}))
		approx.Require(t, "cast bool->f32/"+c.name, gotF, wantF, approx.AbsRel(0, 0))
		wantB := make([]bool, c.size[0])
		cpu.Cast(wantB, cl(c.out), x, cl(c.in[0]))
		gotB := bytesU32(runEW(t, g, "x != 0.0", []string{wgsl.F32}, wgsl.Bool, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: lim}, boolbytes(make([]bool, c.size[0])), [][]byte{f32bytes(x)}))
		for i := range wantB {
			if gotB[i] != b2u(wantB[i]) {
				t.Fatalf("cast f32->bool/%s: [%d] = %d, want %v", c.name, i, gotB[i], wantB[i])
			}
		}
		// Copy of i32 bits (the u32 identity kernel) and fill.
		cpu.Copy(wantI, cl(c.out), xi, cl(c.in[0]))
		gotI = bytesI32(runEW(t, g, "x", []string{wgsl.I32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: lim}, i32bytes(wantI0(c.size[0])), [][]byte{i32bytes(xi)}))
		want := wantI0(c.size[0])
		cpu.Copy(want, cl(c.out), xi, cl(c.in[0]))
		checkI32(t, "copy i32/"+c.name, gotI, want)
		want = wantI0(c.size[0])
		cpu.Fill(want, cl(c.out), int32(-7))
		gotI = bytesI32(runEW(t, g, "p0", nil, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, P0: -7, Limits: lim}, i32bytes(wantI0(c.size[0])), nil))
		checkI32(t, "fill i32/"+c.name, gotI, want)
	}
}

// In place: x = x * y with x read through the output binding.
func TestElementwiseInPlaceGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(5)
	for _, c := range ewCases(2) {
		xy := r.f32s(c.size[0], -3, 3)
		y := r.f32s(c.size[2], -3, 3)
		want := append([]float32(nil), xy...)
		mul := cpu.Fn2[float32, float32]{F: func(x, y float32) float32 { return x * y }, Vec: cpu.MulVec[float32]}
		cpu.Binary(mul, want, cl(c.out), want, cl(c.out), y, cl(c.in[1]))
		got := bytesF32(runEW(t, g, "x * y", []string{wgsl.F32, wgsl.F32}, wgsl.F32,
			wgsl.ElementwiseArgs{Out: c.out, In: []wgsl.Layout{c.out, c.in[1]}, Alias: []bool{true, false}, Limits: limits(g)},
			f32bytes(xy), [][]byte{nil, f32bytes(y)}))
		approx.Require(t, "inplace/"+c.name, got, want, approx.AbsRel(0, 0))
	}
}

// Grid folding: a small MaxWorkgroupsPerDimension folds a copy of 65·33
// elements into two dimensions; then one fill of more than 65535·256
// elements folds with the device's own limits.
func TestElementwiseFoldGPU(t *testing.T) {
	g := openGPU(t)
	lim := limits(g)
	small := lim
	small.MaxWorkgroupsPerDimension = 7
	small.MaxWorkgroupSize = 64
	r6 := rng(6)
	x := r6.i32s(65*33, -5, 5)
	for _, c := range []ewCase{{out: wgsl.Contiguous(65, 33), in: []wgsl.Layout{wgsl.Contiguous(65, 33)}}, {out: wgsl.Contiguous(65, 33), in: []wgsl.Layout{{Shape: []int{65, 33}, Strides: []int{1, 65}}}}} {
		k, err := wgsl.Elementwise("x", []string{wgsl.I32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: small})
		if err != nil {
			t.Fatal(err)
		}
		if k.Groups[1] < 2 {
			t.Fatalf("grid %v did not fold", k.Groups)
		}
		b := bufs{"out": alloc(t, g, 4*len(x)), "x": upload(t, g, i32bytes(x))}
		run(t, g, k, b)
		want := make([]int32, len(x))
		cpu.Copy(want, cl(c.out), x, cl(c.in[0]))
		checkI32(t, "folded copy", readI32(t, g, b["out"]), want)
	}

	n := 65535*256 + 4099
	k, err := wgsl.Elementwise("p0", nil, wgsl.F32, wgsl.ElementwiseArgs{Out: wgsl.Layout{Shape: []int{n}, Strides: []int{1}, Offset: 1}, P0: 1.5, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	if k.Groups[1] < 2 {
		t.Fatalf("grid %v did not fold", k.Groups)
	}
	out := alloc(t, g, 4*(n+1))
	if err := g.Fill(out, 0, 4*int64(n+1)); err != nil {
		t.Fatal(err)
	}
	run(t, g, k, bufs{"out": out})
	got := readF32(t, g, out)
	if got[0] != 0 {
		t.Fatalf("fill wrote before its offset: %v", got[0])
	}
	for i, v := range got[1:] {
		if v != 1.5 {
			t.Fatalf("fill of %d elements: [%d] = %v", n, i, v)
		}
	}
}

func randBools(r *rng, n int) []bool {
	v := make([]bool, n)
	for i := range v {
		v[i] = r.next()&1 == 1
	}
	return v
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func wantI0(n int) []int32 { return make([]int32, n) }

func checkI32(t testing.TB, what string, got, want []int32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: [%d] = %d, want %d", what, i, got[i], want[i])
		}
	}
}

// TestElementwiseI32GPU runs the op-table expressions that are valid for
// i32 (p0 and p1 are then i32; pow_ is the integer helper).
func TestElementwiseI32GPU(t *testing.T) {
	g := openGPU(t)
	r := rng(18)
	c := ewCases(2)[0]
	for _, uc := range []struct {
		ref  func(x int32) int32
		expr string
		p    float64
	}{
		{func(x int32) int32 { return -x }, "-x", 0},
		{func(x int32) int32 { return max(x, -x) }, "abs(x)", 0},
		{func(x int32) int32 { return x * x }, "x * x", 0},
		{func(x int32) int32 { return x - 7 }, "x + p0", -7},
		{func(x int32) int32 { return x * 3 }, "x * p0", 3},
		{func(x int32) int32 { return x * x * x }, "pow_(x, p0)", 3},
	} {
		x := r.i32s(c.size[1], -50, 50)
		init := r.i32s(c.size[0], -5, 5)
		got := bytesI32(runEW(t, g, uc.expr, []string{wgsl.I32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in[:1], P0: uc.p, Limits: limits(g)}, i32bytes(init), [][]byte{i32bytes(x)}))
		want := append([]int32(nil), init...)
		cpu.Unary(cpu.Fn1[int32, int32]{F: uc.ref}, want, cl(c.out), x, cl(c.in[0]))
		checkI32(t, uc.expr, got, want)
	}
	for _, bc := range []struct {
		ref  func(x, y int32) int32
		expr string
	}{
		{func(x, y int32) int32 { return x + y }, "x + y"},
		{func(x, y int32) int32 { return x - y }, "x - y"},
		{func(x, y int32) int32 { return x * y }, "x * y"},
		{func(x, y int32) int32 { return x / y }, "x / y"},
		{func(x, y int32) int32 { return int32(math.Pow(float64(x), float64(y))) }, "pow_(x, y)"},
		{func(x, y int32) int32 { return max(x, y) }, "select(select(y, x, x > y), x, x != x)"},
		{func(x, y int32) int32 { return min(x, y) }, "select(select(y, x, x < y), x, x != x)"},
	} {
		x, y := r.i32s(c.size[1], -20, 20), r.i32s(c.size[2], 1, 6)
		init := r.i32s(c.size[0], -5, 5)
		got := bytesI32(runEW(t, g, bc.expr, []string{wgsl.I32, wgsl.I32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, i32bytes(init), [][]byte{i32bytes(x), i32bytes(y)}))
		want := append([]int32(nil), init...)
		cpu.Binary(cpu.Fn2[int32, int32]{F: bc.ref}, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
		checkI32(t, bc.expr, got, want)
	}
}
