package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// refSoftmax is the float64 reference of one line.
func refSoftmax(line []float64, log bool) []float64 {
	m := math.Inf(-1)
	for _, v := range line {
		if v > m || math.IsNaN(v) {
			m = v
		}
		if math.IsNaN(m) {
			break
		}
	}
	s := 0.0
	for _, v := range line {
		s += math.Exp(v - m)
	}
	out := make([]float64, len(line))
	for i, v := range line {
		if log {
			out[i] = v - m - math.Log(s)
		} else {
			out[i] = math.Exp(v-m) / s
		}
	}
	return out
}

func testSoftmaxType[T Float](t *testing.T) {
	r := newRand(5)
	for _, shape := range lineShapes {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, xk := range inKinds {
				for _, dk := range outKinds {
					for _, log := range []bool{false, true} {
						xl, xn := makeLayout(r, shape, xk)
						x := make([]T, xn)
						for i := range x {
							x[i] = T(r.NormFloat64() * 10)
						}
						dl, _ := makeLayout(r, shape, dk)
						dst := newOut[T](dl)
						Softmax(log, dst, dl, x, xl, dim)
						name := fmt.Sprintf("%T log=%v %v dim%d x:%s d:%s", x, log, shape, dim, xk, dk)
						checkUntouched(t, name, dst, dl)
						compareSoftmax(t, name, shape, dim, log, dst, dl, x, xl)
					}
				}
			}
		}
	}
}

func compareSoftmax[T Float](t *testing.T, name string, shape []int, dim int, log bool, dst []T, dl Layout, x []T, xl Layout) {
	t.Helper()
	forLines(shape, dim, func(idxs [][]int) {
		line := make([]float64, len(idxs))
		for k, idx := range idxs {
			line[k] = f64(x[at(xl, idx)])
		}
		want := refSoftmax(line, log)
		for k, idx := range idxs {
			scale := 1.0
			if log {
				scale = math.Abs(want[k]) + math.Abs(line[k])
			}
			if got := f64(dst[at(dl, idx)]); !approx.Abs(2*tolFor[T]()*max(scale, 1)).Equal(got, want[k]) {
				t.Fatalf("%s: at %v got %v, want %v", name, idx, got, want[k])
			}
		}
	})
}

func TestSoftmax(t *testing.T) {
	t.Run("float32", testSoftmaxType[float32])
	t.Run("float64", testSoftmaxType[float64])
}

// TestSoftmaxSpecial checks the torch behaviour on infinities and NaN:
// all -inf gives NaN, +inf gives NaN (inf - inf), a NaN poisons the line,
// -inf entries among finite ones get 0 (log: -inf).
func TestSoftmaxSpecial(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		x         []float64
		soft, log []float64
	}{
		{[]float64{-inf, -inf}, []float64{nan, nan}, []float64{nan, nan}},
		{[]float64{inf, 1}, []float64{nan, nan}, []float64{nan, nan}},
		{[]float64{1, nan, 2}, []float64{nan, nan, nan}, []float64{nan, nan, nan}},
		{[]float64{-inf, 0}, []float64{0, 1}, []float64{-inf, 0}},
		{[]float64{1000, 1000}, []float64{0.5, 0.5}, []float64{-math.Ln2, -math.Ln2}},
		{[]float64{3}, []float64{1}, []float64{0}},
	}
	for _, c := range cases {
		for _, log := range []bool{false, true} {
			want := c.soft
			if log {
				want = c.log
			}
			n := len(c.x)
			// Contiguous (per-line walk) and as a column (side by side).
			d := make([]float64, n)
			Softmax(log, d, Contiguous(n), c.x, Contiguous(n), 0)
			col := make([]float64, 2*n)
			xs := make([]float64, 2*n)
			for i, v := range c.x {
				xs[2*i], xs[2*i+1] = v, v
			}
			Softmax(log, col, Contiguous(n, 2), xs, Contiguous(n, 2), 0)
			f := make([]float32, n)
			x32 := make([]float32, n)
			for i, v := range c.x {
				x32[i] = float32(v)
			}
			Softmax(log, f, Contiguous(n), x32, Contiguous(n), 0)
			for i := range want {
				if !approx.Abs(1e-15).Equal(d[i], want[i]) || !approx.Abs(1e-15).Equal(col[2*i], want[i]) ||
					!approx.Abs(1e-15).Equal(col[2*i+1], want[i]) || !approx.Abs(1e-7).Equal(float64(f[i]), want[i]) {
					t.Errorf("softmax(log=%v) of %v = %v / %v / %v, want %v", log, c.x, d, col, f, want)
					break
				}
			}
		}
	}
}
