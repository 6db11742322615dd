package cpu

import (
	"math"
	"sync"
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
// the same special values), a block of lines at a time when they are
// short (see softmaxShort). Special values follow from
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
			if !li.sideBySide(1, n) && vec && shortLine(length) {
				softmaxShort(log, asF32(dst), o[0], ds, asF32(x), o[1], xs, n, length)
				return
			}
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

// softmaxShortLine is the length below which contiguous float32 lines may
// go through softmaxShort rather than softmaxF32 one at a time; a
// variable for the benchmarks (0 turns the block path off).
var softmaxShortLine = 64

// shortLine reports whether contiguous float32 lines of length l go
// through softmaxShort: those shorter than softmaxShortLine, except the
// multiples of 16, which softmaxF32 does in whole AVX-512 vectors, with
// no tail, as fast or faster. Measured with BenchmarkSoftmaxShort (256 lines, 3
// runs of 0.3 s, softmax / log-softmax, µs, block path vs softmaxF32):
// l=10 5.4/11.3 vs 25.4/28.6, l=16 7.6/12.1 vs 8.0/12.2, l=24 10.1/17.3
// vs 13.0/20.0, l=32 14.8/23.9 vs 10.8/19.5, l=48 21.7/30.4 vs
// 10.6/23.3, l=63 28.5/39.6 vs 33.9/44.5.
func shortLine(l int) bool {
	return l < softmaxShortLine && l%16 != 0
}

// shortLineBlock is how many elements softmaxShort passes to the vector exp
// at once (whole lines, at least one): its buffers stay in L1.
const shortLineBlock = 1024

// shortLines holds the buffers of softmaxShort, pooled (shortLinePool):
// a block of lines of x (when they are not adjacent), their maxima
// repeated over each line, and their exp(x_i - m).
type shortLines struct {
	x, m, e [shortLineBlock]float32
}

var shortLinePool = sync.Pool{New: func() any { return new(shortLines) }}

// softmaxShort is Softmax over short contiguous float32 lines.
// softmaxF32 costs about 100 ns a line of 10 (three kernel calls, each
// with a scalar or padded tail); softmaxShort takes a block of lines at
// once: each line's max m in Go, then one
// vector exp call over the block with m repeated over each line's
// elements (expSubEach: the same e_i as softmaxF32's, bit for bit, x_i -
// m carried past float32 precision), then per-line sums of the e_i in
// float64, then dst_i = e_i · float32(1/Σ) or float32(float64(x_i) - m -
// log Σ) as softmaxF32 does. So the accuracy and the special values are
// softmaxF32's.
//
// It writes softmax (log false) or log-softmax of n lines of length l
// (0 < l < shortLineBlock) into dst: line i is x[x0+i*xs:][:l], its result
// dst[d0+i*ds:][:l] (a step may be 0 for x, or negative; dst may be x
// when the offsets and steps are equal).
func softmaxShort(log bool, dst []float32, d0, ds int, x []float32, x0, xs, n, l int) {
	b := shortLinePool.Get().(*shortLines)
	defer shortLinePool.Put(b)
	per := shortLineBlock / l
	for i0 := 0; i0 < n; i0 += per {
		k := min(per, n-i0)
		t := k * l
		xb, mb, eb := b.x[:t], b.m[:t], b.e[:t]
		if xs == l {
			xb = x[x0+i0*xs : x0+i0*xs+t]
		} else {
			for i := range k {
				copy(xb[i*l:(i+1)*l], x[x0+(i0+i)*xs:])
			}
		}
		for i := range k {
			line := xb[i*l : (i+1)*l]
			m := line[0]
			for _, v := range line[1:] {
				if v > m || v != v {
					m = v
				}
			}
			ml := mb[i*l : (i+1)*l]
			for j := range ml {
				ml[j] = m
			}
		}
		expSubEach(eb, xb, mb)
		for i := range k {
			line, el := xb[i*l:(i+1)*l], eb[i*l:(i+1)*l]
			s, s1, j := 0.0, 0.0, 0 // two sums: half the chain of dependent adds
			for ; j+1 < l; j += 2 {
				s += float64(el[j])
				s1 += float64(el[j+1])
			}
			if j < l {
				s += float64(el[j])
			}
			s += s1
			d := dst[d0+(i0+i)*ds:][:l]
			if log {
				m, ls := float64(mb[i*l]), math.Log(s)
				for j, v := range line {
					d[j] = float32(float64(v) - m - ls)
				}
				continue
			}
			r := float32(1 / s)
			for j, e := range el {
				d[j] = e * r
			}
		}
	}
}
