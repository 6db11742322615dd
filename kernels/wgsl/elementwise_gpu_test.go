package wgsl_test

import (
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/approx"
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

// The elementwise generator is tested here on expressions of its own
// (parameters, every operand mode, bool and i32 operands and results).
// The expressions of the op table (tensor/op.go) are tested where they
// ship: tensor's TestSpecElementwiseGPU runs every op's row on the GPU
// through its public call against its float64 reference.

func TestElementwiseUnaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(1)
	for _, c := range ewCases(1) {
		x := r.f32s(c.size[1], -10, 10)
		init := r.f32s(c.size[0], -1, 1)
		got := bytesF32(runEW(t, g, "x * p0 + p1", []string{wgsl.F32}, wgsl.F32,
			wgsl.ElementwiseArgs{Out: c.out, In: c.in, P0: -3, P1: 0.5, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(x)}))
		want := append([]float32(nil), init...)
		f := cpu.Fn1[float32, float32]{F: func(x float32) float32 { return float32(float64(x)*-3 + 0.5) }}
		cpu.Unary(f, want, cl(c.out), x, cl(c.in[0]))
		approx.Require(t, "x * p0 + p1/"+c.name, got, want, approx.AbsRel(1e-6, 1e-6))
	}
}

func TestElementwiseBinaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(2)
	for _, c := range ewCases(2) {
		x, y := r.f32s(c.size[1], -10, 10), r.f32s(c.size[2], -10, 10)
		init := r.f32s(c.size[0], -1, 1)
		got := bytesF32(runEW(t, g, "x * y - x", []string{wgsl.F32, wgsl.F32}, wgsl.F32,
			wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(x), f32bytes(y)}))
		want := append([]float32(nil), init...)
		f := cpu.Fn2[float32, float32]{F: func(x, y float32) float32 { return float32(float64(x)*float64(y) - float64(x)) }}
		cpu.Binary(f, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
		approx.Require(t, "x * y - x/"+c.name, got, want, approx.AbsRel(1e-5, 1e-6))

		// A bool result of f32 and i32 operands (small integers: ties).
		xi, yi := r.i32s(c.size[1], -3, 3), r.i32s(c.size[2], -3, 3)
		for _, typ := range []string{wgsl.F32, wgsl.I32} {
			xb, yb := i32bytes(xi), i32bytes(yi)
			if typ == wgsl.F32 {
				xb, yb = f32bytes(i32sToF32(xi)), f32bytes(i32sToF32(yi))
			}
			got := bytesU32(runEW(t, g, "x <= y && y <= x", []string{typ, typ}, wgsl.Bool,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, boolbytes(make([]bool, c.size[0])), [][]byte{xb, yb}))
			want := make([]bool, c.size[0])
			cpu.Binary(cpu.Fn2[int32, bool]{F: func(x, y int32) bool { return x == y }}, want, cl(c.out), xi, cl(c.in[0]), yi, cl(c.in[1]))
			approx.Require(t, "ties/"+typ+"/"+c.name, got, boolsU32(want), approx.Exact)
		}

		// Bool operands.
		xb, yb := randBools(&r, c.size[1]), randBools(&r, c.size[2])
		wantB := make([]bool, c.size[0])
		cpu.Binary(cpu.Fn2[bool, bool]{F: func(x, y bool) bool { return x != y }}, wantB, cl(c.out), xb, cl(c.in[0]), yb, cl(c.in[1]))
		gotB := bytesU32(runEW(t, g, "x != y", []string{wgsl.Bool, wgsl.Bool}, wgsl.Bool,
			wgsl.ElementwiseArgs{Out: c.out, In: c.in, Limits: limits(g)}, boolbytes(make([]bool, c.size[0])), [][]byte{boolbytes(xb), boolbytes(yb)}))
		approx.Require(t, "xor/"+c.name, gotB, boolsU32(wantB), approx.Exact)
	}
}

// TestElementwiseI32GPU runs an i32 expression with an i32 parameter.
func TestElementwiseI32GPU(t *testing.T) {
	g := openGPU(t)
	r := rng(18)
	for _, c := range ewCases(2) {
		x, y := r.i32s(c.size[1], -50, 50), r.i32s(c.size[2], -50, 50)
		init := r.i32s(c.size[0], -5, 5)
		got := bytesI32(runEW(t, g, "x * p0 - y", []string{wgsl.I32, wgsl.I32}, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, In: c.in, P0: -7, Limits: limits(g)}, i32bytes(init), [][]byte{i32bytes(x), i32bytes(y)}))
		want := append([]int32(nil), init...)
		cpu.Binary(cpu.Fn2[int32, int32]{F: func(x, y int32) int32 { return x*-7 - y }}, want, cl(c.out), x, cl(c.in[0]), y, cl(c.in[1]))
		approx.Require(t, "x * p0 - y/"+c.name, got, want, approx.Exact)
	}
}

func i32sToF32(v []int32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func boolsU32(b []bool) []uint32 {
	out := make([]uint32, len(b))
	for i, v := range b {
		out[i] = b2u(v)
	}
	return out
}

func TestElementwiseTernaryGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(3)
	for _, c := range ewCases(3) {
		for _, tc := range []struct {
			ref  func(a, b, c float32) float32
			expr string
		}{
			{func(a, b, c float32) float32 { return a*b + 0.75*c }, "x * y + p0 * z"},
			{func(a, b, c float32) float32 { return (a - b) / c }, "(x - y) / z"},
		} {
			a, b, d := r.f32s(c.size[1], -2, 2), r.f32s(c.size[2], -2, 2), r.f32s(c.size[3], 0.5, 2)
			init := r.f32s(c.size[0], -1, 1)
			got := bytesF32(runEW(t, g, tc.expr, []string{wgsl.F32, wgsl.F32, wgsl.F32}, wgsl.F32,
				wgsl.ElementwiseArgs{Out: c.out, In: c.in, P0: 0.75, Limits: limits(g)}, f32bytes(init), [][]byte{f32bytes(a), f32bytes(b), f32bytes(d)}))
			want := append([]float32(nil), init...)
			cpu.Ternary(cpu.Fn3[float32]{F: tc.ref}, want, cl(c.out), a, cl(c.in[0]), b, cl(c.in[1]), d, cl(c.in[2]))
			approx.Require(t, tc.expr+"/"+c.name, got, want, approx.AbsRel(1e-6, 1e-6))
		}
		// A bool operand selecting between i32 ones.
		cond := randBools(&r, c.size[1])
		xi, yi := r.i32s(c.size[2], -100, 100), r.i32s(c.size[3], -100, 100)
		wantI := bytesI32(i32bytes(make([]int32, c.size[0])))
		cpu.Where(wantI, cl(c.out), cond, cl(c.in[0]), xi, cl(c.in[1]), yi, cl(c.in[2]))
		gotI := bytesI32(runEW(t, g, "select(y, z, !x)", []string{wgsl.Bool, wgsl.I32, wgsl.I32}, wgsl.I32,
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
		approx.Require(t, "cast f32->i32/"+c.name, gotI, wantI, approx.Exact)
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
		approx.Require(t, "copy i32/"+c.name, gotI, want, approx.Exact)
		want = wantI0(c.size[0])
		cpu.Fill(want, cl(c.out), int32(-7))
		gotI = bytesI32(runEW(t, g, "p0", nil, wgsl.I32, wgsl.ElementwiseArgs{Out: c.out, P0: -7, Limits: lim}, i32bytes(wantI0(c.size[0])), nil))
		approx.Require(t, "fill i32/"+c.name, gotI, want, approx.Exact)
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
		approx.Require(t, "folded copy", readI32(t, g, b["out"]), want, approx.Exact)
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
