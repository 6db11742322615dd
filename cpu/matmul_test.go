package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// Matrix layout kinds for MatMul: row-major and column-major matrices go
// to gonum in place, stepped ones through a copy, and a batch stride of 0
// broadcasts.
const (
	mRow   = "row"   // (B, R, C) contiguous
	mCol   = "col"   // each matrix column-major
	mBMid  = "bmid"  // memory order (R, B, C): row-major matrices, batch in the middle
	mStep  = "step"  // both matrix strides stepped: needs a copy
	mBcast = "bcast" // batch stride 0 (inputs only)
	mBStep = "bstep" // batch stride 0 and stepped: one copy reused by every batch
)

func matLayout(r *rand.Rand, b, rows, cols int, kind string) (Layout, int) {
	var l Layout
	switch kind {
	case mRow:
		l = Contiguous(b, rows, cols)
	case mCol:
		l = Layout{Shape: []int{b, rows, cols}, Strides: []int{rows * cols, 1, rows}}
	case mBMid:
		l = Layout{Shape: []int{b, rows, cols}, Strides: []int{cols, b * cols, 1}}
	case mStep:
		l = Layout{Shape: []int{b, rows, cols}, Strides: []int{rows * cols * 6, 3 * cols, 2}, Offset: 5}
	case mBStep:
		l = Layout{Shape: []int{b, rows, cols}, Strides: []int{0, 2 * cols, 2}, Offset: 1}
	case mBcast:
		l = Layout{Shape: []int{b, rows, cols}, Strides: []int{0, cols, 1}, Offset: 2}
		if r.IntN(2) == 0 {
			l.Strides = []int{0, 1, rows}
		}
	}
	l.Shape = []int{b, rows, cols}
	return l, span(l)
}

func checkMatMul[T Float](t *testing.T, r *rand.Rand, b, m, n, k int, ak, bk, dk string) {
	t.Helper()
	al, an := matLayout(r, b, m, k, ak)
	bl, bn := matLayout(r, b, k, n, bk)
	dl, _ := matLayout(r, b, m, n, dk)
	a, bm := make([]T, an), make([]T, bn)
	randFill(r, a)
	randFill(r, bm)
	dst := newOut[T](dl)
	MatMul(dst, dl, a, al, bm, bl)
	name := fmt.Sprintf("%T b%d m%d n%d k%d a:%s b:%s d:%s", a, b, m, n, k, ak, bk, dk)
	checkUntouched(t, name, dst, dl)
	for bi := 0; bi < b; bi++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s, scale float64
				for l := 0; l < k; l++ {
					p := f64(a[at(al, []int{bi, i, l})]) * f64(bm[at(bl, []int{bi, l, j})])
					s += p
					scale += math.Abs(p)
				}
				got := f64(dst[at(dl, []int{bi, i, j})])
				if !approx.Abs(4*tolFor[T]()*max(scale, 1)).Equal(got, s) {
					t.Fatalf("%s: dst[%d,%d,%d] = %v, want %v", name, bi, i, j, got, s)
				}
			}
		}
	}
}

func testMatMulType[T Float](t *testing.T) {
	r := newRand(6)
	sizes := []int{1, 7, 33, 65}
	kinds := []string{mRow, mCol, mBMid, mStep, mBcast, mBStep}
	for _, b := range []int{1, 3} {
		for _, m := range sizes {
			for _, n := range sizes {
				for _, k := range sizes {
					// Every operand kind once per size triple, cycling the others.
					for i, ak := range kinds {
						bk := kinds[(i+m+k)%len(kinds)]
						dk := kinds[(i+n)%4] // no broadcast dst
						checkMatMul[T](t, r, b, m, n, k, ak, bk, dk)
					}
				}
			}
		}
	}
	// Every combination of kinds on one shape.
	for _, ak := range kinds {
		for _, bk := range kinds {
			for _, dk := range kinds[:4] {
				checkMatMul[T](t, r, 2, 5, 6, 7, ak, bk, dk)
			}
		}
	}
	// Many small matrices (split across batches) and one large one
	// (gonum's own parallel path).
	checkMatMul[T](t, r, 96, 9, 10, 11, mRow, mStep, mRow)
	checkMatMul[T](t, r, 96, 9, 10, 11, mBcast, mCol, mCol)
	checkMatMul[T](t, r, 96, 9, 10, 11, mBStep, mBStep, mBMid)
	checkMatMul[T](t, r, 1, 200, 150, 70, mCol, mRow, mRow)
	checkMatMul[T](t, r, 2, 130, 129, 40, mRow, mCol, mStep)
}

func TestMatMul(t *testing.T) {
	t.Run("float32", testMatMulType[float32])
	t.Run("float64", testMatMulType[float64])
}

func TestMatMulEdges(t *testing.T) {
	// K = 0 zeroes dst; M = 0 or B = 0 write nothing.
	d := []float32{9, 9, 9, 9}
	MatMul(d, Contiguous(1, 2, 2), nil, Contiguous(1, 2, 0), nil, Contiguous(1, 0, 2))
	for _, v := range d {
		if v != 0 {
			t.Fatalf("K=0 product = %v", d)
		}
	}
	MatMul(d, Contiguous(1, 0, 2), nil, Contiguous(1, 0, 3), make([]float32, 6), Contiguous(1, 3, 2))
	MatMul(d, Contiguous(0, 2, 2), nil, Contiguous(0, 2, 3), nil, Contiguous(0, 3, 2))
	// dst is overwritten, not accumulated, even when it held NaN.
	e := []float64{math.NaN()}
	MatMul(e, Contiguous(1, 1, 1), []float64{2}, Contiguous(1, 1, 1), []float64{3}, Contiguous(1, 1, 1))
	if e[0] != 6 {
		t.Fatalf("1x1 product = %v", e[0])
	}
}
