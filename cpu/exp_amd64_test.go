package cpu

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// ulpDiff returns how many float32 values lie between got and want (0
// when equal, both NaN counting as equal), or a large number when one is
// NaN and the other not, or their signs differ.
func ulpDiff(got, want float32) int64 {
	if got != got || want != want {
		if got != got && want != want {
			return 0
		}
		return 1 << 40
	}
	if got == want {
		return 0
	}
	if math.Signbit(float64(got)) != math.Signbit(float64(want)) {
		return 1 << 40
	}
	d := int64(math.Float32bits(got)) - int64(math.Float32bits(want))
	if d < 0 {
		d = -d
	}
	return d
}

func needExpAsm(t *testing.T) {
	if !expAsm {
		t.Skip("no AVX2/FMA: softmax and exp use math.Exp")
	}
}

// TestExpF32Accuracy checks the vector exp against math.Exp rounded to
// float32: every 2^12-th float32 between -104 and 89 (subnormal and
// overflowing results included), and special values, within 2 ulp.
func TestExpF32Accuracy(t *testing.T) {
	needExpAsm(t)
	var xs []float32
	for b := uint32(0); b <= math.Float32bits(89); b += 1 << 12 {
		xs = append(xs, math.Float32frombits(b))
	}
	for b := uint32(1 << 31); b <= math.Float32bits(-104); b += 1 << 12 {
		xs = append(xs, math.Float32frombits(b))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		1, -1, 0.5, -0.5, float32(math.Ln2), -float32(math.Ln2), float32(math.Ln2)/2, -float32(math.Ln2)/2,
		88.72283, 88.72284, 88.7229, 89, 100, 1e10,
		-87.33654, -87.3365, -87.34, -100, -103.278, -103.28, -103.97, -103.973, -103.98, -104, -104.5, -105, -106, -150, -1e10)
	for b := math.Float32bits(88.7); b < math.Float32bits(88.8); b++ { // around overflow
		xs = append(xs, math.Float32frombits(b))
	}
	for b := math.Float32bits(-103.9); b < math.Float32bits(-104.1); b += 7 { // around the last subnormal
		xs = append(xs, math.Float32frombits(b))
	}
	xs = append(xs, 1.5) // an odd length, for the tail
	got := make([]float32, len(xs))
	expF32(got, xs)
	worst, at := int64(0), float32(0)
	for i, x := range xs {
		want := float32(math.Exp(float64(x)))
		if d := ulpDiff(got[i], want); d > worst {
			worst, at = d, x
		}
		if d := ulpDiff(got[i], want); d > 2 {
			t.Errorf("exp(%v) = %v (%#x), want %v (%#x): %d ulp", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want), d)
		}
	}
	t.Logf("%d values, worst %d ulp at %v", len(xs), worst, at)
	// In place.
	c := append([]float32(nil), xs...)
	expF32(c, c)
	for i := range c {
		if math.Float32bits(c[i]) != math.Float32bits(got[i]) && !(c[i] != c[i] && got[i] != got[i]) {
			t.Fatalf("in place: exp(%v) = %v, out of place %v", xs[i], c[i], got[i])
		}
	}
}

// TestExpSubSum checks exp(x - m) where x - m is not a float32 (the
// TwoSum correction), the sum, and every length of tail.
func TestExpSubSum(t *testing.T) {
	needExpAsm(t)
	r := newRand(7)
	for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 25, 33, 48, 88, 100} {
		for _, m := range []float32{0, 1.25, 37.3, -20.7, 90, 1e4} {
			x := make([]float32, n)
			for i := range x {
				x[i] = m - float32(r.Float64()*100) - float32(r.Float64())
			}
			dst := make([]float32, n+1)
			dst[n] = 42
			s := expSubSum(dst[:n], x, m, true)
			if dst[n] != 42 {
				t.Fatalf("n=%d: wrote past the end", n)
			}
			ws := 0.0
			for i, v := range x {
				w := math.Exp(float64(v) - float64(m))
				ws += float64(float32(w)) // the sum of float32 values
				if d := ulpDiff(dst[i], float32(w)); d > 2 {
					t.Errorf("n=%d: exp(%v - %v) = %v, want %v (%d ulp)", n, v, m, dst[i], float32(w), d)
				}
			}
			if math.Abs(s-ws) > 1e-6*ws+float64(2*n)*math.SmallestNonzeroFloat32 {
				t.Errorf("n=%d m=%v: sum %v, want %v", n, m, s, ws)
			}
			if s2 := expSubSum(nil, x, m, false); math.Abs(s2-s) > 1e-6*ws+float64(2*n)*math.SmallestNonzeroFloat32 {
				t.Errorf("n=%d: sum without store %v, with %v", n, s2, s)
			}
		}
	}
}

func TestMaxF32(t *testing.T) {
	needExpAsm(t)
	nan := float32(math.NaN())
	for _, n := range []int{1, 7, 8, 9, 16, 17, 25, 33, 88} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(-i)
		}
		for p := 0; p < n; p++ {
			x[p] = 5
			if m := maxF32(x); m != 5 {
				t.Errorf("n=%d max at %d: got %v", n, p, m)
			}
			x[p] = nan
			if m := maxF32(x); m == m {
				t.Errorf("n=%d NaN at %d: got %v", n, p, m)
			}
			x[p] = float32(-p)
		}
	}
}

// TestSoftmaxF32Vector compares the vector softmax of contiguous float32
// lines with the float64 reference, to 1e-6 relative, on line lengths
// around the vector width, with -inf entries and special lines.
func TestSoftmaxF32Vector(t *testing.T) {
	needExpAsm(t)
	r := newRand(11)
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, n := range []int{1, 7, 8, 9, 33, 65, 1024, 1031} {
		for _, kind := range []string{"normal", "wide", "-inf", "all-inf", "+inf", "nan"} {
			const rows = 3
			x := make([]float32, rows*n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 10)
				if kind == "wide" {
					x[i] = float32(r.NormFloat64() * 1000)
				}
			}
			switch kind {
			case "-inf":
				for i := range x {
					if i%3 == 1 {
						x[i] = -inf
					}
				}
			case "all-inf":
				for i := range x {
					x[i] = -inf
				}
			case "+inf":
				x[n/2] = inf
			case "nan":
				x[rows*n-1] = nan
			}
			for _, log := range []bool{false, true} {
				for _, inPlace := range []bool{false, true} {
					name := fmt.Sprintf("n=%d %s log=%v inPlace=%v", n, kind, log, inPlace)
					dst := make([]float32, rows*n)
					src := x
					if inPlace {
						copy(dst, x)
						src = dst
					}
					Softmax(log, dst, Contiguous(rows, n), src, Contiguous(rows, n), 1)
					for row := range rows {
						line := make([]float64, n)
						for k := range line {
							line[k] = float64(x[row*n+k])
						}
						want := refSoftmax(line, log)
						for k, w := range want {
							got := float64(dst[row*n+k])
							// Relative 1e-6, but float32 results below the normal
							// range have an absolute spacing of 2⁻¹⁴⁹.
							if !approx.Abs((1e-6*math.Abs(w)+4*math.SmallestNonzeroFloat32)).Equal(got, w) &&
								!(math.Abs(got-w) <= 1e-6*math.Abs(w)+4*math.SmallestNonzeroFloat32) {
								t.Fatalf("%s: row %d [%d] (x=%v): got %v, want %v", name, row, k, line[k], got, w)
							}
						}
					}
				}
			}
		}
	}
}

// TestExpVectorMatchesScalar checks that ExpVecF32 and
// Softmax agree with the float64 path (expAsm off) on strided and
// contiguous layouts.
func TestExpVectorMatchesScalar(t *testing.T) {
	needExpAsm(t)
	r := newRand(3)
	x := make([]float32, 37*29)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 20)
	}
	l := Contiguous(37, 29)
	run := func() (e, s []float32) {
		e, s = make([]float32, len(x)), make([]float32, len(x))
		ExpVecF32(e, x)
		Softmax(false, s, l, x, l, 1)
		return
	}
	e1, s1 := run()
	expAsm = false
	e0, s0 := run()
	expAsm = true
	for i := range x {
		if d := ulpDiff(e1[i], e0[i]); d > 2 {
			t.Fatalf("exp(%v): vector %v, scalar %v", x[i], e1[i], e0[i])
		}
		if math.Abs(float64(s1[i]-s0[i])) > 1e-6*math.Abs(float64(s0[i])) {
			t.Fatalf("softmax [%d]: vector %v, scalar %v", i, s1[i], s0[i])
		}
	}
}

// TestExpAVX2Only runs the vector tests again with the AVX-512 kernels
// off, so that the AVX2 ones stay tested on a CPU that has both.
func TestExpAVX2Only(t *testing.T) {
	needExpAsm(t)
	if !expAVX512 {
		t.Skip("the AVX2 kernels are the ones in use")
	}
	defer func() { expAVX512 = true }()
	expAVX512 = false
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"accuracy", TestExpF32Accuracy}, {"expsubsum", TestExpSubSum}, {"max", TestMaxF32},
		{"softmax", TestSoftmaxF32Vector}, {"scalar", TestExpVectorMatchesScalar},
	} {
		t.Run(tc.name, tc.f)
	}
}

// TestExpAVX512MatchesAVX2 checks that the AVX-512 exp (VSCALEFPS for the
// scale) gives the AVX2 one's results bit for bit, over every 2^12-th
// float32 from -110 to 95 less several shifts m, and special values.
func TestExpAVX512MatchesAVX2(t *testing.T) {
	needExpAsm(t)
	if !cpuAVX512 {
		t.Skip("no AVX-512")
	}
	defer func(on bool) { expAVX512 = on }(expAVX512)
	var xs []float32
	for b := math.Float32bits(-110); b > math.Float32bits(-0.0); b -= 1 << 12 {
		xs = append(xs, math.Float32frombits(b))
	}
	for b := uint32(0); b < math.Float32bits(95); b += 1 << 12 {
		xs = append(xs, math.Float32frombits(b))
	}
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, -0.0)
	xs = xs[:len(xs)&^15]
	for _, m := range []float32{0, 1.5, -30, 88} {
		got, want := make([]float32, len(xs)), make([]float32, len(xs))
		expAVX512 = true
		expSubSum(got, xs, m, true)
		expAVX512 = false
		expSubSum(want, xs, m, true)
		for i := range xs {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("exp(%v - %v): AVX-512 %v (%#x), AVX2 %v (%#x)", xs[i], m, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// expKernelHash returns an FNV-1a hash of what kernel (expSubAVX2 or
// expSubAVX512, of the given lane count) computes for every 2^10-th
// float32 bit pattern, less m for several m, storing and not: every
// output's bits and every sum's.
func expKernelHash(kernel func(dst, x *float32, n int, m float32, store int) float64, lanes int) uint64 {
	const n = 1 << 12
	h := fnv.New64a()
	x, dst := make([]float32, n), make([]float32, n)
	var b [8]byte
	put := func(v uint64, size int) {
		for i := range size {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:size])
	}
	for _, m := range []float32{0, 1.5, -30, 88, 37.25} {
		for base := uint64(0); base < 1<<32; base += n << 10 {
			for i := range x {
				x[i] = math.Float32frombits(uint32(base + uint64(i)<<10))
			}
			for _, store := range []int{0, 1} {
				for off := 0; off < n; off += 256 { // lines of 256, then 16 or 8
					w := 256 - lanes*(off/256%2)
					s := kernel(&dst[off], &x[off], w, m, store)
					put(math.Float64bits(s), 8)
				}
				if store == 1 {
					for _, v := range dst {
						put(uint64(math.Float32bits(v)), 4)
					}
				}
			}
		}
	}
	return h.Sum64()
}

// TestExpKernelsPinned pins the vector exp's results bit for bit: both
// widths must hash as the hand-written kernels did before
// tools/asmgen/exp_avx.py generated them (which was checked against
// them on every float32, m = 0 and 37.25). A change to the template that
// moves any result by one ulp fails here; if it is meant, explain it and
// update the hash.
func TestExpKernelsPinned(t *testing.T) {
	needExpAsm(t)
	// The widths differ in their sums (16 lanes of partial sums, not 8).
	if got, want := expKernelHash(expSubAVX2, 8), uint64(0xfa025ad9fe2835bf); got != want {
		t.Errorf("expSubAVX2 hashes %#x, want %#x", got, want)
	}
	if !cpuAVX512 {
		return
	}
	if got, want := expKernelHash(expSubAVX512, 16), uint64(0xabc4c965fdbf0e9b); got != want {
		t.Errorf("expSubAVX512 hashes %#x, want %#x", got, want)
	}
}
