package cpu

import (
	"fmt"
	"math"
	"testing"
)

// TestMatMulEpilogue checks that MatMulEpilogue gives, bit for bit, the
// product followed by the bias's Add and, with a ReLU, the ReLU, over
// odd shapes (edge tiles, K past one step, products split across
// goroutines), every operand layout, and NaN, Inf and −0 in the bias.
func TestMatMulEpilogue(t *testing.T) {
	if !sgemmAsm || !cpuAVX512 {
		t.Skip("no AVX-512: MatMulEpilogue declines")
	}
	r := newRand(31)
	for i, s := range [][3]int{{7, 33, 65}, {65, 17, 33}, {257, 130, 600}, {300, 513, 70}, {6, 64, 2}} {
		m, n, k := s[0], s[1], s[2]
		for j, ak := range gKinds {
			bk, ck := gKinds[(i+j)%4], []string{gRow, gPad}[j%2]
			a, b := gemmMat(r, m, k, ak, false), gemmMat(r, k, n, bk, false)
			want := gemmMat(r, m, n, ck, true)
			sgemm(m, n, k, a, b, want, 1)
			for _, relu := range []bool{false, true} {
				epi := Epilogue{Bias: make([]float32, n), ReLU: relu}
				for c := range epi.Bias {
					epi.Bias[c] = float32(r.NormFloat64())
				}
				epi.Bias[n/2] = float32(math.Inf(1))
				epi.Bias[0] = float32(math.NaN())
				epi.Bias[n-1] = float32(math.Copysign(0, -1))
				ref := f32Mat{data: append([]float32(nil), want.data...), off: want.off, rs: want.rs, cs: want.cs}
				for i := range m {
					for j := range n {
						v := &ref.data[ref.off+i*ref.rs+j]
						*v += epi.Bias[j]
						if relu {
							*v = max(*v, 0) // NaN stays NaN, −0 becomes +0, as ReLU
						}
					}
				}
				got := gemmMat(r, m, n, ck, true)
				dl := Layout{Shape: []int{1, m, n}, Strides: []int{m * n, got.rs, got.cs}, Offset: got.off}
				al := Layout{Shape: []int{1, m, k}, Strides: []int{0, a.rs, a.cs}, Offset: a.off}
				bl := Layout{Shape: []int{1, k, n}, Strides: []int{0, b.rs, b.cs}, Offset: b.off}
				name := fmt.Sprintf("relu=%v m%d n%d k%d a:%s b:%s c:%s", relu, m, n, k, ak, bk, ck)
				if !MatMulEpilogue(got.data, dl, a.data, al, b.data, bl, epi) {
					t.Fatalf("%s: declined", name)
				}
				for x := range got.data {
					if math.Float32bits(got.data[x]) != math.Float32bits(ref.data[x]) {
						t.Fatalf("%s: element %d = %v, want %v", name, x, got.data[x], ref.data[x])
					}
				}
			}
		}
	}
}

// TestMatMulEpilogueDeclines checks the products MatMulEpilogue leaves
// to its caller, untouched, and its panics on short operands.
func TestMatMulEpilogueDeclines(t *testing.T) {
	if !sgemmAsm || !cpuAVX512 {
		t.Skip("no AVX-512: MatMulEpilogue declines")
	}
	lay := func(b, r, c int, st ...int) Layout { return Layout{Shape: []int{b, r, c}, Strides: st} }
	buf := func(n int) []float32 { return make([]float32, n) }
	epi := Epilogue{Bias: make([]float32, 64)}
	for _, c := range []struct {
		name       string
		dl, al, bl Layout
	}{
		{"batch of 2", lay(2, 8, 8, 64, 8, 1), lay(2, 8, 8, 64, 8, 1), lay(2, 8, 8, 64, 8, 1)},
		{"column-major dst", lay(1, 8, 8, 64, 1, 8), lay(1, 8, 8, 64, 8, 1), lay(1, 8, 8, 64, 8, 1)},
		{"one row", lay(1, 1, 64, 64, 64, 1), lay(1, 1, 64, 64, 64, 1), lay(1, 64, 64, 4096, 64, 1)},
		{"one column", lay(1, 64, 1, 64, 1, 1), lay(1, 64, 64, 4096, 64, 1), lay(1, 64, 1, 64, 1, 1)},
		{"16 columns", lay(1, 64, 16, 1024, 16, 1), lay(1, 64, 64, 4096, 64, 1), lay(1, 64, 16, 1024, 16, 1)},
		{"K = 1", lay(1, 64, 64, 4096, 64, 1), lay(1, 64, 1, 64, 1, 1), lay(1, 1, 64, 64, 64, 1)},
		{"small", lay(1, 4, 4, 16, 4, 1), lay(1, 4, 4, 16, 4, 1), lay(1, 4, 4, 16, 4, 1)},
	} {
		d := buf(8192)
		for i := range d {
			d[i] = 7
		}
		if MatMulEpilogue(d, c.dl, buf(8192), c.al, buf(8192), c.bl, epi) {
			t.Errorf("%s: took the epilogue", c.name)
		}
		for i, v := range d {
			if v != 7 {
				t.Fatalf("%s: declined but wrote element %d", c.name, i)
			}
		}
	}
	l := lay(1, 16, 16, 256, 16, 1)
	for _, e := range []Epilogue{{Bias: buf(15)}, {}, {ReLU: true}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic for short operands", e)
				}
			}()
			MatMulEpilogue(buf(256), l, buf(256), l, buf(256), l, e)
		}()
	}
}
