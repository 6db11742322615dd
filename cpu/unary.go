package cpu

// Fn1 is a one-input elementwise function from S to D, as a value: F
// computes one element, and Vec, when not nil, a contiguous run of
// elements (dst and x of equal length; dst may be x), for ops whose loop
// must not pay a call per element. Vec must give the same results as F,
// element for element (within the op's documented accuracy).
type Fn1[S, D Elem] struct {
	F   func(S) D
	Vec func(dst []D, x []S)
}

// Unary computes dst = f(x) elementwise. dl and xl must have the same
// shape (broadcast x beforehand with stride 0); dst may alias x when the
// layouts are equal. Runs where both operands are contiguous go to f.Vec
// when it is set.
func Unary[S, D Elem](f Fn1[S, D], dst []D, dl Layout, x []S, xl Layout) {
	if serialRun(dl, 0, xl) {
		n := dl.NumElements()
		d, s := dst[dl.Offset:dl.Offset+n], x[xl.Offset:xl.Offset+n]
		if f.Vec != nil {
			f.Vec(d, s)
			return
		}
		g := f.F
		for i := range d {
			d[i] = g(s[i])
		}
		return
	}
	it := newIter(dl.Shape, dl, xl)
	ds, xs := it.step(0), it.step(1)
	g := f.F
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 {
			d, s := dst[o[0]:o[0]+n], x[o[1]:o[1]+n]
			if f.Vec != nil {
				f.Vec(d, s)
				return
			}
			for i := range d {
				d[i] = g(s[i])
			}
			return
		}
		for i, di, xi := 0, o[0], o[1]; i < n; i, di, xi = i+1, di+ds, xi+xs {
			dst[di] = g(x[xi])
		}
	})
}

// Copy copies x into dst elementwise (a strided copy; both layouts have
// the same shape). It is how views become contiguous.
func Copy[T Elem](dst []T, dl Layout, x []T, xl Layout) {
	if serialRun(dl, 0, xl) {
		n := dl.NumElements()
		copy(dst[dl.Offset:dl.Offset+n], x[xl.Offset:xl.Offset+n])
		return
	}
	it := newIter(dl.Shape, dl, xl)
	ds, xs := it.step(0), it.step(1)
	it.runParallel(func(o []int, n int) {
		if ds == 1 && xs == 1 {
			copy(dst[o[0]:o[0]+n], x[o[1]:o[1]+n])
			return
		}
		for i, di, xi := 0, o[0], o[1]; i < n; i, di, xi = i+1, di+ds, xi+xs {
			dst[di] = x[xi]
		}
	})
}

// Fill sets every element of the view dl of dst to v.
func Fill[T Elem](dst []T, dl Layout, v T) {
	if serialRun(dl, 0) {
		d := dst[dl.Offset : dl.Offset+dl.NumElements()]
		for i := range d {
			d[i] = v
		}
		return
	}
	it := newIter(dl.Shape, dl)
	ds := it.step(0)
	it.runParallel(func(o []int, n int) {
		for i, di := 0, o[0]; i < n; i, di = i+1, di+ds {
			dst[di] = v
		}
	})
}

// Cast converts x to dst's element type with Go's conversion rules,
// which match PyTorch's: floats to int32 truncate toward zero, anything
// to bool is x != 0, bool to a number is 0 or 1.
func Cast[D, S Elem](dst []D, dl Layout, x []S, xl Layout) {
	Unary(Fn1[S, D]{F: castFunc[D, S]()}, dst, dl, x, xl)
}

func castFunc[D, S Elem]() func(S) D {
	var f any
	switch any(*new(S)).(type) {
	case float32:
		f = castFrom[D, float32]()
	case float64:
		f = castFrom[D, float64]()
	case int32:
		f = castFrom[D, int32]()
	case bool:
		f = func(x bool) D {
			if x {
				return one[D]()
			}
			return *new(D)
		}
	}
	return f.(func(S) D)
}

// castFrom returns the conversion from the numeric type S to D as an any
// holding a func(S) D.
func castFrom[D Elem, S Number]() any {
	switch any(*new(D)).(type) {
	case float32:
		return func(x S) float32 { return float32(x) }
	case float64:
		return func(x S) float64 { return float64(x) }
	case int32:
		return func(x S) int32 { return int32(x) }
	case bool:
		return func(x S) bool { return x != 0 }
	}
	panic("cpu: unknown element type")
}

// one returns 1 (or true) as a D.
func one[D Elem]() D {
	var v any
	switch any(*new(D)).(type) {
	case float32:
		v = float32(1)
	case float64:
		v = float64(1)
	case int32:
		v = int32(1)
	case bool:
		v = true
	}
	return v.(D)
}
