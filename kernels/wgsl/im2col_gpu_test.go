package wgsl_test

import (
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// TestIm2ColGPU runs Im2Col and Col2Im on odd geometries and strided
// operands and requires results bitwise equal to package cpu's.
func TestIm2ColGPU(t *testing.T) {
	g := openGPU(t)
	r := rng(61)
	for _, c := range []struct {
		name string
		w    wgsl.Window
	}{
		{"strided dilated padded", wgsl.Window{C: 3, H: 7, W: 6, OH: 4, OW: 4, KH: 3, KW: 2, SH: 2, SW: 1, DH: 1, DW: 2, PH: 1, PW: 0}},
		{"stride over dilation", wgsl.Window{C: 2, H: 5, W: 9, OH: 3, OW: 5, KH: 2, KW: 3, SH: 3, SW: 2, DH: 2, DW: 1, PH: 2, PW: 1}},
		{"same 3x3", wgsl.Window{C: 5, H: 33, W: 7, OH: 33, OW: 7, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PH: 1, PW: 1}},
	} {
		w := c.w
		const n = 2
		rows, l := w.C*w.KH*w.KW, w.OH*w.OW
		// x: (N, C, H, W) seen through a transpose of H and W, at offset 3.
		xl := wgsl.Layout{Shape: []int{n, w.C, w.H, w.W}, Strides: []int{w.C * w.H * w.W, w.H * w.W, 1, w.H}, Offset: 3}
		x := r.f32s(3+n*w.C*w.H*w.W, -1, 1)
		out := wgsl.Layout{Shape: []int{n, rows, l}, Strides: []int{rows * l, l, 1}, Offset: 1}
		k, err := wgsl.Im2Col(out, xl, w, -2, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": alloc(t, g, 4*(1+n*rows*l)), "x": upload(t, g, f32bytes(x))}
		run(t, g, k, b)
		want := make([]float32, n*rows*l)
		cpu.Im2Col(want, x, cl(xl), cpu.Window(w), -2)
		approx.Require(t, c.name+" im2col", readF32(t, g, b["out"])[1:], want, approx.AbsRel(0, 0))

		// cols: (N, rows, L) seen through a transpose of rows and L.
		cols := r.f32s(n*rows*l, -1, 1)
		colsL := wgsl.Layout{Shape: []int{n, rows, l}, Strides: []int{rows * l, 1, rows}}
		img := wgsl.Contiguous(n, w.C, w.H, w.W)
		k, err = wgsl.Col2Im(img, colsL, w, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b = bufs{"out": alloc(t, g, 4*n*w.C*w.H*w.W), "cols": upload(t, g, f32bytes(cols))}
		run(t, g, k, b)
		wantImg := make([]float32, n*w.C*w.H*w.W)
		cpu.Col2Im(wantImg, cols, cl(colsL), cpu.Window(w))
		approx.Require(t, c.name+" col2im", readF32(t, g, b["out"]), wantImg, approx.AbsRel(0, 0))
	}
}

// TestIm2ColErrors: geometry that does not match, and a Col2Im kernel
// whose loop would pass the trip limit, are errors.
func TestIm2ColErrors(t *testing.T) {
	w := wgsl.Window{C: 1, H: 4, W: 4, OH: 2, OW: 2, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1}
	if _, err := wgsl.Im2Col(wgsl.Contiguous(1, 9, 5), wgsl.Contiguous(1, 1, 4, 4), w, 0, wgsl.Limits{}); err == nil {
		t.Error("Im2Col with the wrong column count: no error")
	}
	bad := w
	bad.SH = 0
	if _, err := wgsl.Col2Im(wgsl.Contiguous(1, 1, 4, 4), wgsl.Contiguous(1, 9, 4), bad, wgsl.Limits{}); err == nil {
		t.Error("Col2Im with stride 0: no error")
	}
	if _, err := wgsl.Col2Im(wgsl.Contiguous(1, 1, 4, 4), wgsl.Contiguous(1, 9, 4), w, wgsl.Limits{MaxLoopTrips: 9}); err == nil {
		t.Error("Col2Im past the loop limit: no error")
	}
}
