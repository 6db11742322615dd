package cpu

import (
	"math"
	"unsafe"
)

// Softmax writes softmax (log false) or log-softmax (log true) of x along
// dim into dst (dl and xl have the same shape; a 0-d x counts as shape
// [1]). It is numerically stable: with m the line's max,
//
//	softmax(x)_i     = exp(x_i - m) / Σ_j exp(x_j - m)
//	log_softmax(x)_i = (x_i - m) - log Σ_j exp(x_j - m)
//
// computed in float64 and rounded once to T; float32 lines that are
// contiguous in both x and dst go through the AVX2/FMA kernels instead
// where expAsm is set (see softmaxF32: within a few float32 ulp, and
// the same special values). Special values follow from
// the formula as in torch: a NaN in a line makes the whole line NaN, a
// line that is all -inf gives NaN, a +inf makes the line NaN (inf - inf).
// dst may alias x when the layouts are equal.
func Softmax[T Float](log bool, dst []T, dl Layout, x []T, xl Layout, dim int) {
	li := newLineIter(xl.Shape, dim, dl, xl)
	dd, xd, length := li.dstep[0], li.dstep[1], li.length
	vec := expAsm && unsafe.Sizeof(T(0)) == 4 && dd == 1 && xd == 1
	li.run(func() func(offs []int, n int) {
		var mx []T
		var sum []float64
		return func(o []int, n int) {
			ds, xs := li.step(0), li.step(1)
			if !li.sideBySide(1, n) {
				for i := 0; i < n; i++ {
					d0, x0 := o[0]+i*ds, o[1]+i*xs
					if vec {
						softmaxF32(log, asF32(dst[d0:d0+length]), asF32(x[x0:x0+length]))
						continue
					}
					m := x[x0]
					for k := 1; k < length; k++ {
						if v := x[x0+k*xd]; v > m || v != v {
							m = v
						}
					}
					mf, s := float64(m), 0.0
					if log {
						for k := 0; k < length; k++ {
							s += math.Exp(float64(x[x0+k*xd]) - mf)
						}
						ls := math.Log(s)
						for k := 0; k < length; k++ {
							dst[d0+k*dd] = T(float64(x[x0+k*xd]) - mf - ls)
						}
						continue
					}
					for k := 0; k < length; k++ {
						e := math.Exp(float64(x[x0+k*xd]) - mf)
						s += e
						dst[d0+k*dd] = T(e)
					}
					r := 1 / s
					for k := 0; k < length; k++ {
						dst[d0+k*dd] = T(float64(dst[d0+k*dd]) * r)
					}
				}
				return
			}
			if cap(mx) < n {
				mx, sum = make([]T, n), make([]float64, n)
			}
			mx, sum = mx[:n], sum[:n]
			for i := range mx {
				mx[i] = x[o[1]+i*xs]
			}
			clear(sum)
			for k := 1; k < length; k++ {
				xk := o[1] + k*xd
				for i, m := range mx {
					if v := x[xk+i*xs]; v > m || v != v {
						mx[i] = v
					}
				}
			}
			for k := 0; k < length; k++ {
				dk, xk := o[0]+k*dd, o[1]+k*xd
				for i, m := range mx {
					e := math.Exp(float64(x[xk+i*xs]) - float64(m))
					sum[i] += e
					if !log {
						dst[dk+i*ds] = T(e)
					}
				}
			}
			for i, s := range sum {
				if log {
					sum[i] = math.Log(s)
				} else {
					sum[i] = 1 / s
				}
			}
			for k := 0; k < length; k++ {
				dk, xk := o[0]+k*dd, o[1]+k*xd
				for i, s := range sum {
					if log {
						dst[dk+i*ds] = T(float64(x[xk+i*xs]) - float64(mx[i]) - s)
					} else {
						dst[dk+i*ds] = T(float64(dst[dk+i*ds]) * s)
					}
				}
			}
		}
	})
}

// softmaxF32 is Softmax of one contiguous float32 line x into dst (which
// may be x), with the vector kernels: the max m, then e_i = exp(x_i - m)
// (the vector exp, with x_i - m carried to more than float32 precision)
// summed in float64, then dst_i = e_i · float32(1/Σ) or, for log-softmax,
// float32(float64(x_i) - m - log Σ). Each e_i is within about 1 ulp,
// so a softmax value is within about 3 float32 ulp (≤ 4e-7 relative) of
// the float64 result. Special values are as in Softmax: the sum is NaN
// for a line with a NaN, a +Inf, or nothing but -Inf.
func softmaxF32(log bool, dst, x []float32) {
	m := maxF32(x)
	if log {
		s := expSubSum(nil, x, m, false)
		subF32(dst, x, float64(m), math.Log(s))
		return
	}
	s := expSubSum(dst, x, m, true)
	scaleF32(dst, float32(1/s))
}
