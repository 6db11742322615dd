package wgsl_test

import (
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestSliceScatterGPU checks that one dispatch writes every element of
// out: x's where the slice covers it (strided x and steps included), 0
// elsewhere, against a loop over coordinates.
func TestSliceScatterGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(31)
	type ssCase struct {
		name             string
		out              []int
		x                wgsl.Layout
		size             int
		dim, start, step int
	}
	for _, c := range []ssCase{
		{"select-row", []int{7, 33}, wgsl.Layout{Shape: []int{1, 33}, Strides: []int{33, 1}, Offset: 2}, 35, 0, 4, 1},
		{"cols-step", []int{7, 33}, wgsl.Contiguous(7, 11), 77, 1, 2, 3},
		{"transposed", []int{33, 7}, wgsl.Layout{Shape: []int{33, 3}, Strides: []int{1, 33}}, 99, 1, 1, 2},
		{"middle-dim", []int{3, 65, 2}, wgsl.Contiguous(3, 5, 2), 30, 1, 60, 1},
		{"empty-slice", []int{5, 7}, wgsl.Contiguous(5, 0), 0, 1, 7, 1},
	} {
		x := r.i32s(max(c.size, 1), -1000, 1000)
		out := wgsl.Contiguous(c.out...)
		n := layout.Numel(c.out)
		k, err := wgsl.SliceScatter(out, c.x, c.dim, c.start, c.step, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": upload(t, g, i32bytes(r.i32s(n, 1, 9))), "x": upload(t, g, i32bytes(x))} // garbage in out
		run(t, g, k, b)
		want := make([]int32, n)
		os := layout.ContiguousStrides(c.out)
		for i := range n {
			off, inside := c.x.Offset, true
			for d := range c.out {
				co := i / os[d] % c.out[d]
				if d == c.dim {
					if co < c.start || (co-c.start)%c.step != 0 || (co-c.start)/c.step >= c.x.Shape[d] {
						inside = false
						break
					}
					co = (co - c.start) / c.step
				}
				off += co * c.x.Strides[d]
			}
			if inside {
				want[i] = x[off]
			}
		}
		approx.Require(t, c.name, readI32(t, g, b["out"]), want, approx.Exact)
	}
	for _, c := range []struct {
		name             string
		out, x           wgsl.Layout
		dim, start, step int
	}{
		{"past the end", wgsl.Contiguous(5, 7), wgsl.Contiguous(5, 3), 1, 2, 3},
		{"step 0", wgsl.Contiguous(5, 7), wgsl.Contiguous(5, 3), 1, 0, 0},
		{"negative start", wgsl.Contiguous(5, 7), wgsl.Contiguous(5, 3), 1, -1, 1},
		{"dim out of range", wgsl.Contiguous(5, 7), wgsl.Contiguous(5, 3), 2, 0, 1},
		{"negative dim", wgsl.Contiguous(5, 7), wgsl.Contiguous(5, 3), -1, 0, 1},
		{"ranks differ", wgsl.Contiguous(5, 7), wgsl.Contiguous(3), 1, 0, 1},
		{"other dim differs", wgsl.Contiguous(5, 7), wgsl.Contiguous(6, 3), 1, 0, 1},
	} {
		if _, err := wgsl.SliceScatter(c.out, c.x, c.dim, c.start, c.step, limits(g)); err == nil {
			t.Errorf("%s: out %v, x %v, dim %d, start %d, step %d was accepted", c.name, c.out.Shape, c.x.Shape, c.dim, c.start, c.step)
		}
	}
}
