package cpu

// CumSum writes the inclusive cumulative sum of x along dim into dst (dl
// and xl have the same shape): dst[..., i, ...] = x[..., 0, ...] + ... +
// x[..., i, ...]. Floats accumulate in float64 (as torch does on the
// CPU) and round once per element; int32 wraps in int32 (torch would
// return int64). A 0-d x counts as shape [1]. dst may alias x when the
// layouts are equal.
func CumSum[T Number](dst []T, dl Layout, x []T, xl Layout, dim int) {
	if isInt[T]() {
		cumSumWith[T, T](dst, dl, x, xl, dim)
		return
	}
	cumSumWith[T, float64](dst, dl, x, xl, dim)
}

func cumSumWith[T, A Number](dst []T, dl Layout, x []T, xl Layout, dim int) {
	li := newLineIter(xl.Shape, dim, dl, xl)
	dd, xd := li.dstep[0], li.dstep[1]
	li.run(func() func(offs []int, n int) {
		var acc []A
		return func(o []int, n int) {
			ds, xs := li.step(0), li.step(1)
			if !li.sideBySide(1, n) {
				for i := 0; i < n; i++ {
					var a A
					for k, di, xi := 0, o[0]+i*ds, o[1]+i*xs; k < li.length; k, di, xi = k+1, di+dd, xi+xd {
						a += A(x[xi])
						dst[di] = T(a)
					}
				}
				return
			}
			if cap(acc) < n {
				acc = make([]A, n)
			}
			acc = acc[:n]
			clear(acc)
			for k := 0; k < li.length; k++ {
				di, xi := o[0]+k*dd, o[1]+k*xd
				for i := range acc {
					acc[i] += A(x[xi+i*xs])
					dst[di+i*ds] = T(acc[i])
				}
			}
		}
	})
}
