package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
)

// lineShapes are the shapes the along-dim kernels are tested on: the odd
// shapes plus large ones for the parallel paths, with the dim innermost
// and outermost in memory.
var lineShapes = append(append([][]int(nil), oddShapes...), []int{300, 257}, []int{3, 20001}, []int{20001, 3})

// forLines calls fn for every line of shape along dim with the line's
// multi-indices (a 0-d shape has one line of one element).
func forLines(shape []int, dim int, fn func(idxs [][]int)) {
	if len(shape) == 0 {
		fn([][]int{{}})
		return
	}
	ks := append([]int(nil), shape...)
	ks[dim] = 1
	forEach(ks, func(o []int) {
		idxs := make([][]int, shape[dim])
		for k := range idxs {
			idxs[k] = append([]int(nil), o...)
			idxs[k][dim] = k
		}
		fn(idxs)
	})
}

func testCumSumType[T Number](t *testing.T) {
	r := newRand(4)
	for _, shape := range lineShapes {
		for dim := 0; dim < max(len(shape), 1); dim++ {
			for _, xk := range inKinds {
				for _, dk := range outKinds {
					xl, xn := makeLayout(r, shape, xk)
					x := make([]T, xn)
					randFill(r, x)
					dl, _ := makeLayout(r, shape, dk)
					dst := newOut[T](dl)
					CumSum(dst, dl, x, xl, dim)
					name := fmt.Sprintf("%T %v dim%d x:%s d:%s", x, shape, dim, xk, dk)
					checkUntouched(t, name, dst, dl)
					forLines(shape, dim, func(idxs [][]int) {
						var s, scale float64
						var si int32
						for _, idx := range idxs {
							v := f64(x[at(xl, idx)])
							s += v
							si += int32(v)
							scale += math.Abs(v)
							want := s
							if isInt[T]() {
								want = float64(si)
							}
							if got := f64(dst[at(dl, idx)]); !approx.Abs(tolFor[T]()*max(scale, 1)).Equal(got, want) {
								t.Fatalf("%s: at %v got %v, want %v", name, idx, got, want)
							}
						}
					})
				}
			}
		}
	}
}

func TestCumSum(t *testing.T) {
	t.Run("float32", testCumSumType[float32])
	t.Run("float64", testCumSumType[float64])
	t.Run("int32", testCumSumType[int32])
	// In place, and float32 accumulating in float64.
	x := []float32{1 << 24, 1, 1, 1, 1}
	CumSum(x, Contiguous(5), x, Contiguous(5), 0)
	if want := []float32{1 << 24, 1<<24 + 1, 1<<24 + 2, 1<<24 + 3, 1<<24 + 4}; fmt.Sprint(x) != fmt.Sprint(want) {
		t.Fatalf("in-place cumsum = %v, want %v", x, want)
	}
	// int32 wraps.
	y := []int32{math.MaxInt32, 1}
	CumSum(y, Contiguous(2), y, Contiguous(2), 0)
	if y[1] != math.MinInt32 {
		t.Fatalf("int32 cumsum wrap = %d", y[1])
	}
}
