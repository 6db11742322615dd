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
