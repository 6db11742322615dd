package cpu

import "math"

// Softmax writes softmax (log false) or log-softmax (log true) of x along
// dim into dst (dl and xl have the same shape; a 0-d x counts as shape
// [1]). It is numerically stable: with m the line's max,
//
//	softmax(x)_i     = exp(x_i - m) / Σ_j exp(x_j - m)
//	log_softmax(x)_i = (x_i - m) - log Σ_j exp(x_j - m)
//
// computed in float64 and rounded once to T. Special values follow from
// the formula as in torch: a NaN in a line makes the whole line NaN, a
// line that is all -inf gives NaN, a +inf makes the line NaN (inf - inf).
// dst may alias x when the layouts are equal.
func Softmax[T Float](log bool, dst []T, dl Layout, x []T, xl Layout, dim int) {
	li := newLineIter(xl.Shape, dim, dl, xl)
	dd, xd, length := li.dstep[0], li.dstep[1], li.length
	li.run(func() func(offs []int, n int) {
		var mx []T
		var sum []float64
		return func(o []int, n int) {
			ds, xs := li.step(0), li.step(1)
			if !li.sideBySide(1, n) {
				for i := 0; i < n; i++ {
					d0, x0 := o[0]+i*ds, o[1]+i*xs
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
