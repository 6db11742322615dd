package cpu

// ArgReduce finds the best element of x along dim, better(v, best)
// telling whether v replaces the best so far (a strict comparison, so
// that ties go to the first occurrence; for torch's max and min, NaN
// beats every number and the first NaN wins): idx gets its position
// along dim (int32, where torch returns int64) and vals, unless nil, its
// value. vl and il are keepdim layouts (x's shape with size 1 at dim). A
// 0-d x counts as shape [1]. An empty extent along dim writes nothing
// (the caller rejects it).
func ArgReduce[T Number](better func(v, best T) bool, vals []T, vl Layout, idx []int32, il Layout, x []T, xl Layout, dim int) {
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
