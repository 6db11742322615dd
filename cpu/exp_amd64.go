package cpu

//go:generate python3 ../tools/asmgen/exp_avx.py exp_amd64.s

import (
	"math"

	xcpu "golang.org/x/sys/cpu"
)

// expAsm reports whether float32 exp and softmax over contiguous lines use
// the AVX2/FMA kernels of exp_amd64.s rather than float64 math.Exp; tests
// turn it off to compare the two.
//
// The vector exp is within 2 ulp of math.Exp rounded to float32 over the
// whole float32 range, subnormal results included (they are rounded once
// from the full-precision value, not flushed); exp(NaN) is NaN,
// exp(-Inf) = 0, exp(+Inf) = +Inf, and results past MaxFloat32 are +Inf.
var expAsm = xcpu.X86.HasAVX2 && xcpu.X86.HasFMA

// expSubAVX2 sets e_i = exp(x_i - m) for n (a positive multiple of 8)
// elements, stores them to dst when store is not 0, and returns Σ e_i.
//
//go:noescape
func expSubAVX2(dst, x *float32, n int, m float32, store int) float64

// maxAVX2 returns the largest of n (a positive multiple of 8) elements,
// or NaN when one is NaN.
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// minAVX2 returns the smallest of n (a positive multiple of 8) elements,
// or NaN when one is NaN: maxAVX2's mirror, for the min reduction of
// reduce_amd64.go (it needs AVX only).
//
//go:noescape
func minAVX2(x *float32, n int) float32

// scaleAVX2 multiplies n (a positive multiple of 8) elements by s.
//
//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// subAVX2 sets dst_i = float32(float64(x_i) - a - b) for n (a positive
// multiple of 8) elements.
//
//go:noescape
func subAVX2(dst, x *float32, n int, a, b float64)

// expSubMAVX2 sets dst_i = exp(x_i - m_i) for n (a positive multiple of
// 8) elements, each as expSubAVX2 computes it with m = m_i.
//
//go:noescape
func expSubMAVX2(dst, x, m *float32, n int)

// expAVX512 reports whether the softmax kernels use their AVX-512
// versions (16 lanes, twice the work per instruction on full-width cores)
// for the multiples of 16 elements; a variable for the tests.
var expAVX512 = cpuAVX512

// expSubAVX512 is expSubAVX2 for n a positive multiple of 16.
//
//go:noescape
func expSubAVX512(dst, x *float32, n int, m float32, store int) float64

// expSubMAVX512 is expSubMAVX2 for n a positive multiple of 16.
//
//go:noescape
func expSubMAVX512(dst, x, m *float32, n int)

// maxAVX512 is maxAVX2 for n a positive multiple of 16.
//
//go:noescape
func maxAVX512(x *float32, n int) float32

// scaleAVX512 is scaleAVX2 for n a positive multiple of 16.
//
//go:noescape
func scaleAVX512(x *float32, n int, s float32)

// expSubSum sets e_i = exp(x_i - m), stores e into dst when store is set
// (dst has len(x) elements, and may be x itself), and returns Σ e_i in
// float64. Only for expAsm.
func expSubSum(dst, x []float32, m float32, store bool) float64 {
	n8 := len(x) &^ 7
	st := 0
	if store {
		st = 1
		dst = dst[:len(x)]
	}
	s := 0.0
	if n8 > 0 {
		var d *float32
		if store {
			d = &dst[0]
		}
		if n16 := n8 &^ 15; expAVX512 && n16 > 0 {
			s = expSubAVX512(d, &x[0], n16, m, st)
			if n16 < n8 {
				if store {
					d = &dst[n16]
				}
				s += expSubAVX2(d, &x[n16], 8, m, st)
			}
		} else {
			s = expSubAVX2(d, &x[0], n8, m, st)
		}
	}
	if n8 < len(x) {
		// The tail goes through the kernel in a padded buffer: exp(-Inf - m)
		// adds 0 to the sum (or NaN, where the line is NaN anyway).
		var buf [8]float32
		for i := range buf {
			buf[i] = float32(math.Inf(-1))
		}
		k := copy(buf[:], x[n8:])
		s += expSubAVX2(&buf[0], &buf[0], 8, m, 1)
		if store {
			copy(dst[n8:], buf[:k])
		}
	}
	return s
}

// expSubEach sets dst_i = exp(x_i - m_i) for the len(x) elements of x,
// with dst and m at least as long (dst may be x or m), each as
// expSubSum computes it for m = m_i. Only for expAsm.
func expSubEach(dst, x, m []float32) {
	n8 := len(x) &^ 7
	dst, m = dst[:len(x)], m[:len(x)]
	if n16 := n8 &^ 15; expAVX512 && n16 > 0 {
		expSubMAVX512(&dst[0], &x[0], &m[0], n16)
		if n16 < n8 {
			expSubMAVX2(&dst[n16], &x[n16], &m[n16], 8)
		}
	} else if n8 > 0 {
		expSubMAVX2(&dst[0], &x[0], &m[0], n8)
	}
	if n8 < len(x) {
		// The tail goes through the kernel in padded buffers: exp(-Inf - 0)
		// is 0 in the unused lanes.
		var xb, mb [8]float32
		for i := range xb {
			xb[i] = float32(math.Inf(-1))
		}
		copy(xb[:], x[n8:])
		k := copy(mb[:], m[n8:])
		expSubMAVX2(&xb[0], &xb[0], &mb[0], 8)
		copy(dst[n8:], xb[:k])
	}
}

// expF32 sets dst_i = exp(x_i) (dst may be x). Only for expAsm.
func expF32(dst, x []float32) {
	expSubSum(dst, x, 0, true)
}

// maxF32 returns the largest element of x (len(x) > 0), or NaN when one
// is NaN. Only for expAsm.
func maxF32(x []float32) float32 {
	n8 := len(x) &^ 7
	m := x[0]
	if n16 := n8 &^ 15; expAVX512 && n16 > 0 {
		m = maxAVX512(&x[0], n16)
		if n16 < n8 {
			if v := maxAVX2(&x[n16], 8); v > m || v != v {
				m = v
			}
		}
	} else if n8 > 0 {
		m = maxAVX2(&x[0], n8)
	}
	for _, v := range x[n8:] {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// scaleF32 multiplies every element of x by s. Only for expAsm.
func scaleF32(x []float32, s float32) {
	n8 := len(x) &^ 7
	if n16 := n8 &^ 15; expAVX512 && n16 > 0 {
		scaleAVX512(&x[0], n16, s)
		if n16 < n8 {
			scaleAVX2(&x[n16], 8, s)
		}
	} else if n8 > 0 {
		scaleAVX2(&x[0], n8, s)
	}
	for i := n8; i < len(x); i++ {
		x[i] *= s
	}
}

// subF32 sets dst_i = float32(float64(x_i) - a - b) (dst may be x). Only
// for expAsm.
func subF32(dst, x []float32, a, b float64) {
	n8 := len(x) &^ 7
	dst = dst[:len(x)]
	if n8 > 0 {
		subAVX2(&dst[0], &x[0], n8, a, b)
	}
	for i := n8; i < len(x); i++ {
		dst[i] = float32(float64(x[i]) - a - b)
	}
}
