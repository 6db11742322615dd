package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestReduceFusedGPU reduces select(0, x·y, m) (x strided, y broadcast
// along rows, m bool) over rows and columns, by invocations, workgroups
// and two stages, for sum and max, against a float64 loop.
func TestReduceFusedGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(31)
	for _, sh := range [][2]int{{7, 33}, {65, 9}, {2, 20001}} {
		rows, cols := sh[0], sh[1]
		x := r.f32s(rows*cols, -1, 1) // stored transposed: x[i][j] at j·rows + i
		y := r.f32s(cols, -1, 1)
		m := make([]bool, rows*cols)
		for i := range m {
			m[i] = i%5 != 1
		}
		shape := []int{rows, cols}
		pro := &wgsl.Prologue{
			Nodes: []wgsl.FusedNode{
				{Expr: "x * y", Args: []int{-1, -2}, Out: wgsl.F32},
				{Expr: "select(y, x, z)", Args: []int{0, -4, -3}, Out: wgsl.F32},
			},
			InTypes: []string{wgsl.F32, wgsl.F32, wgsl.Bool, wgsl.F32},
			In: []wgsl.Layout{
				{Shape: shape, Strides: []int{1, rows}},
				{Shape: shape, Strides: []int{0, 1}},
				wgsl.Contiguous(shape...),
				{Shape: shape, Strides: []int{0, 0}}, // a broadcast zero
			},
		}
		// The select's else value is the fourth input, a broadcast zero.
		val := func(i, j int) float64 {
			if !m[i*cols+j] {
				return 0
			}
			return float64(x[j*rows+i]) * float64(y[j])
		}
		for _, op := range []string{"sum", "max"} {
			for dim := range 2 {
				outShape := []int{rows, 1}
				if dim == 0 {
					outShape = []int{1, cols}
				}
				want := make([]float32, outShape[0]*outShape[1])
				for o := range want {
					acc := 0.0
					if op == "max" {
						acc = math.Inf(-1)
					}
					n := cols
					if dim == 0 {
						n = rows
					}
					for k := range n {
						i, j := o, k
						if dim == 0 {
							i, j = k, o
						}
						if op == "sum" {
							acc += val(i, j)
						} else {
							acc = math.Max(acc, val(i, j))
						}
					}
					want[o] = float32(acc)
				}
				p, err := wgsl.ReduceFused(op, wgsl.F32, wgsl.Contiguous(outShape...), shape, pro, limits(g))
				if err != nil {
					t.Fatal(err)
				}
				zero := make([]float32, 1)
				bs := bufs{"out": alloc(t, g, 4*len(want)), "x": upload(t, g, f32bytes(x)), "y": upload(t, g, f32bytes(y)),
					"z": upload(t, g, boolbytes(m)), "x3": upload(t, g, f32bytes(zero))}
				runPlan(t, g, p, bs)
				tol := approx.AbsRel(1e-5*math.Sqrt(float64(rows*cols)), 1e-5)
				approx.Require(t, op, readF32(t, g, bs["out"]), want, tol)
			}
		}
	}
}
