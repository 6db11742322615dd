package cpu

import "testing"

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
