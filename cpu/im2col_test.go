package cpu

import (
	"math"
	"testing"
)

// im2colWindows are odd geometries: strides above and below the
// dilation, padding on one side, 1×1 kernels.
var im2colWindows = []Window{
	{C: 3, H: 7, W: 6, KH: 3, KW: 2, SH: 2, SW: 1, DH: 1, DW: 2, PH: 1, PW: 0},
	{C: 2, H: 5, W: 9, KH: 2, KW: 3, SH: 3, SW: 2, DH: 2, DW: 1, PH: 2, PW: 1},
	{C: 1, H: 4, W: 5, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, PH: 0, PW: 0},
	{C: 2, H: 6, W: 6, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PH: 1, PW: 1},
	{C: 2, H: 3, W: 37, KH: 3, KW: 5, SH: 1, SW: 1, DH: 1, DW: 1, PH: 1, PW: 2}, // rows long enough for AddVec
	{C: 2, H: 7, W: 8, KH: 3, KW: 3, SH: 1, SW: 1, DH: 2, DW: 2, PH: 2, PW: 2},  // dilated, output as wide as x
	{C: 1, H: 5, W: 2, KH: 3, KW: 3, SH: 2, SW: 1, DH: 1, DW: 1, PH: 1, PW: 2},  // an output row spans two rows of x
	{C: 1, H: 3, W: 3, KH: 3, KW: 3, SH: 1, SW: 1, DH: 3, DW: 3, PH: 3, PW: 3},  // kernel elements that only see padding
	{C: 1, H: 3, W: 16, KH: 3, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1, PH: 1, PW: 0}, // rows of whole vectors
}

// withPositions fills g's positions from its geometry.
func withPositions(g Window) Window {
	g.OH = (g.H+2*g.PH-g.DH*(g.KH-1)-1)/g.SH + 1
	g.OW = (g.W+2*g.PW-g.DW*(g.KW-1)-1)/g.SW + 1
	return g
}

// TestIm2ColReference compares Im2Col with its definition on every kind
// of input layout, and Col2Im with Im2Col's adjoint: ⟨Im2Col(x), c⟩ =
// ⟨x, Col2Im(c)⟩ for random x and c.
func TestIm2ColReference(t *testing.T) {
	r := newRand(41)
	for _, g := range im2colWindows {
		g = withPositions(g)
		const n = 2
		shape := []int{n, g.C, g.H, g.W}
		rows, l := g.C*g.KH*g.KW, g.OH*g.OW
		for _, kind := range []string{kContig, kPerm, kStep} {
			xl, size := makeLayout(r, shape, kind)
			x := make([]float64, size)
			for i := range x {
				x[i] = r.Float64()*2 - 1
			}
			got := make([]float64, n*rows*l)
			Im2Col(got, x, xl, g, -7)
			for b := range n {
				for row := range rows {
					c, i, j := row/(g.KH*g.KW), row/g.KW%g.KH, row%g.KW
					for p := range l {
						h, w := p/g.OW*g.SH-g.PH+i*g.DH, p%g.OW*g.SW-g.PW+j*g.DW
						want := -7.0
						if h >= 0 && h < g.H && w >= 0 && w < g.W {
							want = x[xl.Offset+b*xl.Strides[0]+c*xl.Strides[1]+h*xl.Strides[2]+w*xl.Strides[3]]
						}
						if v := got[(b*rows+row)*l+p]; v != want {
							t.Fatalf("%+v %s: [%d %d %d] = %g, want %g", g, kind, b, row, p, v, want)
						}
					}
				}
			}
			// The adjoint, with zero padding and contiguous columns.
			Im2Col(got, x, xl, g, 0)
			cols := make([]float64, len(got))
			for i := range cols {
				cols[i] = r.Float64()*2 - 1
			}
			img := make([]float64, n*g.C*g.H*g.W)
			Col2Im(img, cols, Layout{Shape: []int{n, rows, l}, Strides: []int{rows * l, l, 1}}, g)
			lhs, rhs := 0.0, 0.0
			for i := range got {
				lhs += got[i] * cols[i]
			}
			for b := range n {
				for c := range g.C {
					for h := range g.H {
						for w := range g.W {
							rhs += x[xl.Offset+b*xl.Strides[0]+c*xl.Strides[1]+h*xl.Strides[2]+w*xl.Strides[3]] * img[((b*g.C+c)*g.H+h)*g.W+w]
						}
					}
				}
			}
			if math.Abs(lhs-rhs) > 1e-12*max(1, math.Abs(lhs)) {
				t.Errorf("%+v %s: ⟨Im2Col x, c⟩ = %g, ⟨x, Col2Im c⟩ = %g", g, kind, lhs, rhs)
			}
		}
	}
}

// TestCol2ImStrided checks that Col2Im reads columns of any strides: a
// stepped copy of the columns, and one whose rows are adjacent (the
// transpose of (N, OH·OW, C·KH·KW)), fold to the same image as the
// contiguous one, bit for bit, with and without the vector loop.
func TestCol2ImStrided(t *testing.T) {
	defer func(z bool) { vecZ = z }(vecZ)
	for _, z := range []bool{vecZ, false} {
		vecZ = z
		checkCol2ImStrided(t)
	}
}

func checkCol2ImStrided(t *testing.T) {
	r := newRand(43)
	for _, g := range im2colWindows {
		g = withPositions(g)
		const n = 2
		shape := []int{n, g.C * g.KH * g.KW, g.OH * g.OW}
		stepped, size := makeLayout(r, shape, kStep)
		byPosition := Layout{Shape: shape, Strides: []int{shape[1] * shape[2], 1, shape[1]}}
		for _, cl := range []Layout{stepped, byPosition} {
			cols := make([]float32, max(size, n*shape[1]*shape[2]))
			for i := range cols {
				cols[i] = r.Float32()*2 - 1
			}
			dense := make([]float32, n*shape[1]*shape[2])
			Copy(dense, Contiguous(shape...), cols, cl)
			want, got := make([]float32, n*g.C*g.H*g.W), make([]float32, n*g.C*g.H*g.W)
			Col2Im(want, dense, Contiguous(shape...), g)
			Col2Im(got, cols, cl, g)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%+v, strides %v, vector loop %v: element %d = %g, want %g", g, cl.Strides, vecZ, i, got[i], want[i])
				}
			}
		}
	}
}
