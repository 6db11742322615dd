package cpu

import (
	"math"
	"testing"
)

// TestTernaryScalarC checks that Ternary's run with a broadcast c
// (Fn3.VecScalarC) gives what the element function gives.
func TestTernaryScalarC(t *testing.T) {
	const n = 37
	a, b, c := make([]float32, n), make([]float32, n), []float32{1.5}
	for i := range a {
		a[i], b[i] = float32(i)*0.37-3, float32(n-i)*1.3
	}
	f := func(x, y, z float32) float32 { return x + 0.1*y*z }
	cl := Layout{Shape: []int{n}, Strides: []int{0}}
	elem, loop := make([]float32, n), make([]float32, n)
	calls := 0
	Ternary(Fn3[float32]{F: f}, elem, Contiguous(n), a, Contiguous(n), b, Contiguous(n), c, cl)
	Ternary(Fn3[float32]{F: f, VecScalarC: func(d, x, y []float32, z float32) {
		calls++
		for i := range d {
			d[i] = f(x[i], y[i], z)
		}
	}}, loop, Contiguous(n), a, Contiguous(n), b, Contiguous(n), c, cl)
	if calls == 0 {
		t.Fatal("VecScalarC was not used for a broadcast c")
	}
	for i := range elem {
		if elem[i] != loop[i] {
			t.Fatalf("element %d: loop %v, element function %v", i, loop[i], elem[i])
		}
	}
}

// TestWhereSelectsBits checks Where's branch-free run (4-byte elements,
// contiguous cond and x, y contiguous or one broadcast value) against
// the plain selection, bit for bit (NaN payloads and -0 included), and
// an int32 run too.
func TestWhereSelectsBits(t *testing.T) {
	const n = 61
	cond, x, y := make([]bool, n), make([]float32, n), make([]float32, n)
	for i := range x {
		cond[i] = (i*7)%3 == 0
		x[i], y[i] = float32(i)-30, -float32(i)*0.5
	}
	x[3], x[6], y[4] = float32(math.NaN()), float32(math.Copysign(0, -1)), float32(math.Inf(-1))
	c := Contiguous(n)
	for _, yl := range []Layout{c, {Shape: []int{n}, Strides: []int{0}}} {
		got := make([]float32, n)
		Where(got, c, cond, c, x, c, y, yl)
		for i := range got {
			want := y[i*yl.Strides[0]]
			if cond[i] {
				want = x[i]
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("y strides %v, element %d: got %v, want %v", yl.Strides, i, got[i], want)
			}
		}
	}
	xi, yi, gi := []int32{1, 2, 3, 4}, []int32{-1, -2, -3, -4}, make([]int32, 4)
	Where(gi, Contiguous(4), []bool{true, false, false, true}, Contiguous(4), xi, Contiguous(4), yi, Contiguous(4))
	if gi[0] != 1 || gi[1] != -2 || gi[2] != -3 || gi[3] != 4 {
		t.Fatalf("int32 Where: %v", gi)
	}
}
