package cpu

import (
	"math"
	"unsafe"
)

// ArgReduce finds the best element of x along dim, better(v, best)
// telling whether v replaces the best so far (a strict comparison, so
// that ties go to the first occurrence; for torch's max and min, NaN
// beats every number and the first NaN wins): idx gets its position
// along dim (int32, where torch returns int64) and vals, unless nil, its
// value. vl and il are keepdim layouts (x's shape with size 1 at dim). A
// 0-d x counts as shape [1]. An empty extent along dim writes nothing
// (the caller rejects it).
func ArgReduce[T Number](better func(v, best T) bool, vals []T, vl Layout, idx []int32, il Layout, x []T, xl Layout, dim int) {
	ArgReduceRuns(better, nil, vals, vl, idx, il, x, xl, dim)
}

// ArgReduceRuns is ArgReduce with runs, when not nil, the fast path of
// better over lines side by side whose elements at one position along
// dim are contiguous (a reduction over any dim but the innermost): it
// must do what applying better to every i does, replacing best[i] by
// row[i] and at[i] by k when better(row[i], best[i]). ArgMaxRuns and
// ArgMinRuns are those of torch's max and min.
func ArgReduceRuns[T Number](better func(v, best T) bool, runs func(best []T, at []int32, row []T, k int32), vals []T, vl Layout, idx []int32, il Layout, x []T, xl Layout, dim int) {
	if vals == nil {
		vl = il
	}
	li := newLineIter(xl.Shape, dim, xl, il, vl)
	xd := li.dstep[0]
	li.run(func() func(offs []int, n int) {
		var best []T
		var at []int32
		return func(o []int, n int) {
			xs, is, vs := li.step(0), li.step(1), li.step(2)
			if !li.sideBySide(0, n) {
				for i := 0; i < n; i++ {
					xo := o[0] + i*xs
					b, bi := x[xo], int32(0)
					for k := 1; k < li.length; k++ {
						if v := x[xo+k*xd]; better(v, b) {
							b, bi = v, int32(k)
						}
					}
					idx[o[1]+i*is] = bi
					if vals != nil {
						vals[o[2]+i*vs] = b
					}
				}
				return
			}
			if cap(best) < n {
				best, at = make([]T, n), make([]int32, n)
			}
			best, at = best[:n], at[:n]
			if runs != nil && xs == 1 && is == 1 {
				// The best so far goes straight to idx, and to vals when
				// they are contiguous too.
				at = idx[o[1] : o[1]+n]
				if vals != nil && vs == 1 {
					best = vals[o[2] : o[2]+n]
				}
				copy(best, x[o[0]:o[0]+n])
				clear(at)
				for k := 1; k < li.length; k++ {
					xo := o[0] + k*xd
					runs(best, at, x[xo:xo+n], int32(k))
				}
				if vals != nil && vs != 1 {
					for i, b := range best {
						vals[o[2]+i*vs] = b
					}
				}
				return
			}
			for i := range best {
				best[i], at[i] = x[o[0]+i*xs], 0
			}
			for k := 1; k < li.length; k++ {
				xo := o[0] + k*xd
				for i := range best {
					if v := x[xo+i*xs]; better(v, best[i]) {
						best[i], at[i] = v, int32(k)
					}
				}
			}
			for i := range best {
				idx[o[1]+i*is] = at[i]
				if vals != nil {
					vals[o[2]+i*vs] = best[i]
				}
			}
		}
	})
}

// ArgMaxRuns is the runs of ArgReduceRuns for torch's max: row[i]
// replaces best[i] when it is greater, or a NaN where best[i] is not.
// at and row hold at least len(best) values; it panics if they do not.
func ArgMaxRuns[T Number](best []T, at []int32, row []T, k int32) {
	if b, ok := any(best).([]float32); ok {
		argRunsF32(b, at, any(row).([]float32), k, true)
		return
	}
	at, row = at[:len(best)], row[:len(best)]
	for i, v := range row {
		if b := best[i]; v > b || (v != v && b == b) {
			best[i], at[i] = v, k
		}
	}
}

// ArgMinRuns is ArgMaxRuns for torch's min: row[i] replaces best[i] when
// it is smaller, or a NaN where best[i] is not.
func ArgMinRuns[T Number](best []T, at []int32, row []T, k int32) {
	if b, ok := any(best).([]float32); ok {
		argRunsF32(b, at, any(row).([]float32), k, false)
		return
	}
	at, row = at[:len(best)], row[:len(best)]
	for i, v := range row {
		if b := best[i]; v < b || (v != v && b == b) {
			best[i], at[i] = v, k
		}
	}
}

// argRunsF32 is ArgMaxRuns (isMax) or ArgMinRuns for float32 without a
// branch per element, whose outcome random data cannot predict: the
// AVX-512 loops where the CPU has them (vecZ), else Go that compares
// order keys (orderKeyF32) and selects with masks.
func argRunsF32(best []float32, at []int32, row []float32, k int32, isMax bool) {
	at, row = at[:len(best)], row[:len(best)] // the loops below read and write through pointers
	if vecZ && len(best) > 0 {
		if isMax {
			argMaxRunsZ(&best[0], &at[0], &row[0], len(best), k)
		} else {
			argMinRunsZ(&best[0], &at[0], &row[0], len(best), k)
		}
		return
	}
	bb := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(best))), len(best))
	rb := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(row))), len(best))
	nan, sign := int64(math.MaxInt32), int64(1)
	if !isMax {
		nan, sign = math.MinInt32, -1
	}
	for i, v := range rb {
		b := bb[i]
		// take is all ones when v's key beats b's (both keys are scaled
		// by sign, so that min compares like max).
		take := (sign*orderKeyF32(b, nan) - sign*orderKeyF32(v, nan)) >> 63
		bb[i] = b ^ (b^v)&uint32(take)
		at[i] ^= (at[i] ^ k) & int32(take)
	}
}

// orderKeyF32 maps the bits u of a float32 to an integer that orders as
// the float does, -0 and +0 alike, and a NaN to nan.
func orderKeyF32(u uint32, nan int64) int64 {
	s := int32(u) >> 31 // all ones for a negative float
	key := int64(int32(u) ^ (s & math.MaxInt32) - s)
	isNaN := (int64(0x7f800000) - int64(u&math.MaxInt32)) >> 63 // all ones for a NaN
	return key&^isNaN | nan&isNaN
}
