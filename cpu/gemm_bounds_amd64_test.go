package cpu

import "testing"

// TestSgemmBounds checks that an operand one element too short for its
// matrix panics before the kernels read or write through a pointer, on
// each way a product runs: B packed or read in place, A packed, and the
// dot products of few columns.
func TestSgemmBounds(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T) {
		r := newRand(14)
		for _, c := range []struct {
			name       string
			m, n, k    int
			ak, bk, ck string
		}{
			{"packed", 12, 32, 8, gRow, gCol, gRow},
			{"B in place", 12, 32, 8, gRow, gRow, gRow},
			{"A packed", 40, 48, 33, gStep, gRow, gRow},
			{"few columns", 9, 10, 200, gRow, gCol, gRow},
		} {
			for short := range 3 {
				ms := []f32Mat{gemmMat(r, c.m, c.k, c.ak, false), gemmMat(r, c.k, c.n, c.bk, false), gemmMat(r, c.m, c.n, c.ck, true)}
				v, dims := &ms[short], [3][2]int{{c.m, c.k}, {c.k, c.n}, {c.m, c.n}}[short]
				v.data = v.data[:v.off+(dims[0]-1)*v.rs+(dims[1]-1)*v.cs] // one short of the last element
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s: sgemm took operand %d one element short", c.name, short)
						}
					}()
					sgemm(c.m, c.n, c.k, ms[0], ms[1], ms[2], 1)
				}()
			}
		}
	})
}

// TestInPlaceB checks which B the AVX-512 kit reads in place: row-major,
// with room in the buffer for the last row's whole panels, a row stride
// that is not a multiple of 4 KiB, and panels spanning at most 1 MiB;
// any other B is packed.
func TestInPlaceB(t *testing.T) {
	kit := &gemmKit[float32]{nr: gemmNR, kc: 512, directB: true}
	row := func(k, n, rs, extra int) mat[float32] {
		return mat[float32]{data: make([]float32, (k-1)*rs+n+extra), rs: rs, cs: 1}
	}
	for _, c := range []struct {
		name string
		b    mat[float32]
		k, n int
		want bool
	}{
		{"whole panels", row(256, 512, 512, 0), 256, 512, true},
		{"padded rows", row(256, 33, 54, 15), 256, 33, true},
		{"last panel past the buffer", row(256, 33, 33, 0), 256, 33, false},
		{"last panel one short", row(256, 33, 54, 14), 256, 33, false},
		{"4 KiB stride", row(256, 1024, 1024, 0), 256, 1024, false},
		{"span past 1 MiB", row(768, 784, 784, 0), 768, 784, false},
		{"span of 1 MiB", row(512, 512, 512, 0), 512, 512, true},
		{"column-major", mat[float32]{data: make([]float32, 256*512), rs: 1, cs: 256}, 256, 512, false},
		{"negative stride", mat[float32]{data: make([]float32, 256*512), off: 255 * 512, rs: -512, cs: 1}, 256, 512, false},
	} {
		if got := kit.inPlaceB(c.b, c.k, c.n); got != c.want {
			t.Errorf("%s: inPlaceB = %v, want %v", c.name, got, c.want)
		}
	}
	kit.directB = false
	if kit.inPlaceB(row(256, 512, 512, 0), 256, 512) {
		t.Error("inPlaceB with directB off")
	}
}
