package cpu

import (
	"fmt"
	"math"
	"testing"
)

// shortCase builds n lines of length l, the lines step apart (step ≥ l;
// negative: the lines in reverse order), with values of scale sc and, when
// special is set, a NaN, a +Inf, some -Inf or a line of nothing but -Inf
// in some lines. It returns x and its layout.
func shortCase(n, l, step int, sc float64, special bool, seed uint64) ([]float32, Layout) {
	r := newRand(seed)
	a := max(step, -step)
	x := make([]float32, (n-1)*a+l+2)
	for i := range x {
		x[i] = float32(r.NormFloat64() * sc)
	}
	xl := Layout{Shape: []int{n, l}, Strides: []int{step, 1}, Offset: 1}
	if step < 0 {
		xl.Offset = 1 + (n-1)*a
	}
	if special {
		inf := float32(math.Inf(1))
		for i := range n {
			line := x[xl.Offset+i*step:][:l]
			switch r.IntN(6) {
			case 0:
				line[r.IntN(l)] = float32(math.NaN())
			case 1:
				line[r.IntN(l)] = inf
			case 2:
				line[r.IntN(l)] = -inf
			case 3:
				for j := range line {
					line[j] = -inf
				}
			}
		}
	}
	return x, xl
}

// TestSoftmaxShortLines checks the block path for short contiguous float32
// lines (softmaxShort, directly and through Softmax) against the float64
// reference: every length below softmaxShortLine, odd counts of lines (more than one block for the short
// lengths), lines adjacent, stepped apart and reversed, in place, values
// large enough that x - m needs more than float32 precision, and the special
// values. A softmax value must be within 3 float32 ulp (4e-7 relative), a
// log-softmax value within 4e-7 of |x - m| + 1.
func TestSoftmaxShortLines(t *testing.T) {
	if !expAsm {
		t.Skip("no vector exp: short lines take the float64 path")
	}
	for l := 1; l < softmaxShortLine; l++ {
		for _, n := range []int{1, 3, 1025/l + 2} {
			for _, step := range []int{l, l + 3, -l - 1} {
				for _, special := range []bool{false, true} {
					for _, log := range []bool{false, true} {
						for _, inPlace := range []bool{false, true} {
							sc := 3.0
							if l%2 == 0 {
								sc = 40 // exp(x - m) down to subnormal and 0
							}
							x, xl := shortCase(n, l, step, sc, special, uint64(l*1000+n))
							x0 := append([]float32(nil), x...)
							d := make([]float32, len(x))
							if inPlace {
								d = x
							}
							Softmax(log, d, xl, x, xl, 1)
							name := fmt.Sprintf("l=%d n=%d step=%d special=%v log=%v inPlace=%v", l, n, step, special, log, inPlace)
							checkShortLines(t, name, log, d, x0, xl)
							// The block path itself, for the lengths Softmax
							// gives to softmaxF32.
							copy(x, x0)
							softmaxShort(log, d, xl.Offset, step, x, xl.Offset, step, n, l)
							checkShortLines(t, name+" softmaxShort", log, d, x0, xl)
						}
					}
				}
			}
		}
	}
}

func checkShortLines(t *testing.T, name string, log bool, d, x []float32, xl Layout) {
	t.Helper()
	n, l := xl.Shape[0], xl.Shape[1]
	for i := range n {
		off := xl.Offset + i*xl.Strides[0]
		line := make([]float64, l)
		for j := range line {
			line[j] = float64(x[off+j])
		}
		want := refSoftmax(line, log)
		for j, w := range want {
			got := float64(d[off+j])
			tol := 4e-7*math.Abs(w) + 1e-44
			if log {
				tol = 4e-7 * (math.Abs(w) + 1)
			}
			if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && !(got == w || math.Abs(got-w) <= tol) {
				t.Fatalf("%s: line %d %v: element %d = %v, want %v", name, i, line, j, got, w)
			}
		}
	}
}

// BenchmarkSoftmaxShort runs softmax and log-softmax along the last dim
// of (256, l) float32 matrices, l = 10 being the classifier head of the
// MLP training step, with the block path for short lines (block=true) and
// without (one softmaxF32 a line).
func BenchmarkSoftmaxShort(b *testing.B) {
	for _, l := range []int{10, 24, 63} {
		x, d := make([]float32, 256*l), make([]float32, 256*l)
		randFill(newRand(4), x)
		xl := Contiguous(256, l)
		for _, block := range []bool{true, false} {
			for _, log := range []bool{false, true} {
				b.Run(fmt.Sprintf("256x%d/log=%v/block=%v", l, log, block), func(b *testing.B) {
					defer func(v int) { softmaxShortLine = v }(softmaxShortLine)
					if !block {
						softmaxShortLine = 0
					}
					for b.Loop() {
						Softmax(log, d, xl, x, xl, 1)
					}
				})
			}
		}
	}
}

// TestExpSubEachMatchesExpSubSum checks that the per-element-m kernels
// give expSubSum's e_i bit for bit, for every length up to 80 (both
// widths and the padded tail) and m spread over lines of random lengths.
func TestExpSubEachMatchesExpSubSum(t *testing.T) {
	if !expAsm {
		t.Skip("no vector exp")
	}
	r := newRand(9)
	for n := 1; n <= 80; n++ {
		x, m, got := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 50)
		}
		for i := 0; i < n; {
			k := min(1+r.IntN(12), n-i)
			v := float32(r.NormFloat64() * 50)
			for j := i; j < i+k; j++ {
				m[j] = v
			}
			i += k
		}
		expSubEach(got, x, m)
		for i := range x {
			var want [1]float32
			expSubSum(want[:], x[i:i+1], m[i], true)
			if math.Float32bits(got[i]) != math.Float32bits(want[0]) {
				t.Fatalf("n=%d: exp(%v - %v) = %v, want %v", n, x[i], m[i], got[i], want[0])
			}
		}
	}
}
