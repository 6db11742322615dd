package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
)

// vecLens are row lengths around the kernels' steps of 8 and 32 and the
// reduceAsmMin threshold.
var vecLens = []int{1, 7, 8, 9, 31, 33, 63, 64, 65, 1000, 1<<20 + 3}

// refF32 returns x's sum, max and min in float64 (NaN propagating) and
// the sum of |x|.
func refF32(x []float32) (sum, mx, mn, scale float64) {
	mx, mn = float64(x[0]), float64(x[0])
	for _, v := range x {
		f := float64(v)
		sum += f
		scale += math.Abs(f)
		if f > mx || f != f || mx != mx {
			if mx == mx {
				mx = f
			}
		}
		if f < mn || f != f || mn != mn {
			if mn == mn {
				mn = f
			}
		}
	}
	return sum, mx, mn, scale
}

// sameF reports whether got and want are both NaN or equal.
func sameF(got, want float64) bool {
	return got == want || got != got && want != want
}

// reduceF32All reduces all of x with op through Reduce.
func reduceF32All(op string, x []float32) float32 {
	dst := []float32{0}
	reduceBy(op, dst, Layout{Shape: []int{1}, Strides: []int{1}},
		x, Layout{Shape: []int{len(x)}, Strides: []int{1}})
	return dst[0]
}

// checkVec checks the kernels' helpers and Reduce (with and without the
// kernels) on x against refF32. The sums must keep float64 accuracy: a
// float32 accumulation would be far outside 1e-12·Σ|x|.
func checkVec(t *testing.T, name string, x []float32) {
	t.Helper()
	sum, mx, mn, scale := refF32(x)
	if got := sumF32(x); !approx.Abs(1e-12*max(scale, 1)).Equal(got, sum) {
		t.Fatalf("%s: sumF32 = %v, want %v", name, got, sum)
	}
	if got := float64(maxAnyF32(x)); !sameF(got, mx) {
		t.Fatalf("%s: maxAnyF32 = %v, want %v", name, got, mx)
	}
	if got := float64(minF32(x)); !sameF(got, mn) {
		t.Fatalf("%s: minF32 = %v, want %v", name, got, mn)
	}
	old := reduceAsm
	defer func() { reduceAsm = old }()
	for _, asm := range []bool{false, old} {
		reduceAsm = asm
		if got := float64(reduceF32All("sum", x)); !sameF(got, float64(float32(sum))) &&
			!approx.Abs(1e-7*max(scale, 1)).Equal(got, float64(float32(sum))) {
			t.Fatalf("%s asm=%v: Reduce sum = %v, want %v", name, asm, got, float32(sum))
		}
		if got := float64(reduceF32All("max", x)); !sameF(got, mx) {
			t.Fatalf("%s asm=%v: Reduce max = %v, want %v", name, asm, got, mx)
		}
		if got := float64(reduceF32All("min", x)); !sameF(got, mn) {
			t.Fatalf("%s asm=%v: Reduce min = %v, want %v", name, asm, got, mn)
		}
	}
}

func TestReduceVecF32(t *testing.T) {
	r := newRand(11)
	for _, n := range vecLens {
		buf := make([]float32, n+1)
		randFill(r, buf)
		for i := range buf {
			buf[i] += 0.25 // a nonzero mean, so the sum grows with n
		}
		checkVec(t, fmt.Sprint(n), buf[:n])
		checkVec(t, fmt.Sprint(n, " unaligned"), buf[1:])
	}
}

func TestReduceVecF32Special(t *testing.T) {
	r := newRand(12)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, n := range vecLens {
		if n > 1000 {
			n = 4099
		}
		for _, at := range []int{0, n / 2, n - 1} {
			for _, c := range []struct {
				name string
				vals []float32
			}{
				{"nan", []float32{nan}},
				{"+inf", []float32{inf}},
				{"-inf", []float32{-inf}},
				{"+inf-inf", []float32{inf, -inf}},
				{"nan+inf", []float32{inf, nan}},
			} {
				x := make([]float32, n)
				randFill(r, x)
				for k, v := range c.vals {
					x[(at+k*(n/3+1))%n] = v
				}
				checkVec(t, fmt.Sprintf("%d %s at %d", n, c.name, at), x)
			}
		}
	}
}

// TestReduceVecDeterministic checks that a parallel float32 sum gives the
// same bits on every run.
func TestReduceVecDeterministic(t *testing.T) {
	x := make([]float32, 1<<20+3)
	randFill(newRand(13), x)
	want := reduceF32All("sum", x)
	for i := 0; i < 20; i++ {
		if got := reduceF32All("sum", x); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("run %d: %v, want %v", i, got, want)
		}
	}
}

// TestReduceVecRows compares the kernels with the plain loops on rows
// reduced inside larger tensors (kept outer dims, split reduced extent).
func TestReduceVecRows(t *testing.T) {
	if !reduceAsm {
		t.Skip("no reduce kernels")
	}
	r := newRand(14)
	for _, shape := range [][]int{{3, 65}, {5, 1000}, {2, 3, 97}, {4, 70000}} {
		n := layout.Numel(shape)
		x := make([]float32, n)
		randFill(r, x)
		x[r.IntN(n)] = float32(math.NaN())
		rows := n / shape[len(shape)-1]
		xl := Layout{Shape: []int{rows, shape[len(shape)-1]}, Strides: []int{shape[len(shape)-1], 1}}
		dl := Layout{Shape: []int{rows, 1}, Strides: []int{1, 1}}
		for _, op := range reduceOps {
			got, want := make([]float32, rows), make([]float32, rows)
			reduceBy(op, got, dl, x, xl)
			reduceAsm = false
			reduceBy(op, want, dl, x, xl)
			reduceAsm = true
			for i := range got {
				if !sameF(float64(got[i]), float64(want[i])) &&
					!approx.Abs(1e-6).Equal(float64(got[i]), float64(want[i])) {
					t.Fatalf("%v %s row %d: %v, plain loops %v", shape, op, i, got[i], want[i])
				}
			}
		}
	}
}

// TestReduceVecCols compares float32 column sums (a bias gradient's sum
// over the batch) through foldCols4F32 and foldColsF32 with the plain
// loops: the same bits, NaN and infinities included, for rows that are
// contiguous or pad columns apart, and column counts on either side of
// the AVX-512 kernel's sixteen.
func TestReduceVecCols(t *testing.T) {
	if !reduceAsm {
		t.Skip("no reduce kernels")
	}
	r := newRand(15)
	for _, c := range []struct {
		shape []int
		pad   int
	}{
		{[]int{7, 33}, 0}, {[]int{256, 512}, 0}, {[]int{5, 3}, 0}, {[]int{9, 130}, 0}, {[]int{4, 4}, 0},
		{[]int{65, 47}, 5}, {[]int{33, 16}, 1}, {[]int{12, 17}, 0},
	} {
		shape := c.shape
		rs := shape[1] + c.pad
		n := (shape[0]-1)*rs + shape[1]
		x := make([]float32, n)
		randFill(r, x)
		x[r.IntN(n)] = float32(math.NaN())
		x[r.IntN(n)] = float32(math.Inf(1))
		xl := Layout{Shape: shape, Strides: []int{rs, 1}}
		dl := Layout{Shape: []int{1, shape[1]}, Strides: []int{shape[1], 1}}
		got, want := make([]float32, shape[1]), make([]float32, shape[1])
		reduceBy("sum", got, dl, x, xl)
		reduceAsm = false
		reduceBy("sum", want, dl, x, xl)
		reduceAsm = true
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) && !(got[j] != got[j] && want[j] != want[j]) {
				t.Fatalf("%v column %d: %v, plain loops %v", shape, j, got[j], want[j])
			}
		}
	}
}
