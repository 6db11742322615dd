//go:build amd64

package cpu

import (
	"math/rand/v2"
	"testing"
)

// TestOuterProduct checks MatMul with K = 1 (the outer products of an
// RNN's weight gradients, souter when the AVX-512 kernels are in use)
// against the products rounded once, for row-major and transposed
// operands.
func TestOuterProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, mn := range [][2]int{{1, 1}, {3, 17}, {17, 3}, {100, 100}, {65, 100}, {7, 33}} {
		m, n := mn[0], mn[1]
		a, b := make([]float32, m), make([]float32, n)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for j := range b {
			b[j] = float32(r.NormFloat64())
		}
		for _, transposedC := range []bool{false, true} {
			dst := make([]float32, m*n)
			dl := Layout{Shape: []int{1, m, n}, Strides: []int{m * n, n, 1}}
			if transposedC {
				dl.Strides = []int{m * n, 1, m}
			}
			MatMul(dst, dl, a, Layout{Shape: []int{1, m, 1}, Strides: []int{m, 1, 1}}, b, Layout{Shape: []int{1, 1, n}, Strides: []int{n, n, 1}})
			for i := range m {
				for j := range n {
					got := dst[i*dl.Strides[1]+j*dl.Strides[2]]
					if want := float32(float64(a[i]) * float64(b[j])); got != want {
						t.Fatalf("%d×%d (c transposed %v): c[%d][%d] = %v, want %v", m, n, transposedC, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestAxpy4MatchesAxpy checks that axpy4Z gives the bits of four axpyZ
// calls in order, for lengths around its step of 16, and writes nothing
// past n.
func TestAxpy4MatchesAxpy(t *testing.T) {
	if !sgemmAVX512 {
		t.Skip("no AVX-512 kernels on this CPU")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 15, 16, 17, 65, 100} {
		ld := n + 3
		x := make([]float32, 4*ld)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		a := [4]float32{0.3, -1.7, 2.5e-3, 9}
		want, got := make([]float32, n+16), make([]float32, n+16)
		for i := range want {
			want[i] = float32(r.NormFloat64())
			got[i] = want[i]
		}
		for c := range 4 {
			axpyZ(&want[0], &x[c*ld], n, a[c])
		}
		axpy4Z(&got[0], &x[0], ld, n, a[0], a[1], a[2], a[3])
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d: element %d is %v, four axpyZ give %v", n, i, got[i], want[i])
			}
		}
	}
}
