package cpu

import "sort"

// A ReduceOp names a reduction.
type ReduceOp uint8

// The reductions. MaxOp and MinOp are torch.amax/amin: values only, and
// a NaN anywhere in the reduced extent makes the result NaN.
const (
	SumOp ReduceOp = iota + 1
	MaxOp
	MinOp
	numReduceOps
)

// NumReduceOps is one more than the largest ReduceOp.
const NumReduceOps = int(numReduceOps)

// Reduce reduces x into dst. dl has x's rank; its Shape equals x's shape
// with size 1 on every reduced dim (the keepdim form; its strides may be
// anything, such as the contiguous strides of the keepdim shape). A dim
// of size 1 in x counts as kept.
//
// Sums of float32 and float64 accumulate in float64; int32 sums wrap in
// int32. Work above parallelThreshold elements is split across
// GOMAXPROCS goroutines: over the outputs when there are many, else over
// the reduced extent with private partial results combined in a fixed
// order (so the result does not depend on scheduling). An empty reduced
// extent gives 0 (for max and min too: rejecting it is the caller's job).
func Reduce[T Number](op ReduceOp, dst []T, dl Layout, x []T, xl Layout) {
	p := planReduce(dl, xl)
	if p.nOut == 0 {
		return
	}
	switch {
	case op == SumOp && isInt[T]():
		reduceWith(p, dst, x, sumFuncs[T, T]())
	case op == SumOp:
		reduceWith(p, dst, x, vecRows(op, sumFuncs[T, float64]()))
	case op == MaxOp:
		reduceWith(p, dst, x, vecRows(op, extremeFuncs[T](true)))
	case op == MinOp:
		reduceWith(p, dst, x, vecRows(op, extremeFuncs[T](false)))
	default:
		panic("cpu: unknown reduce op")
	}
}

// isInt reports whether T is an integer type.
func isInt[T Number]() bool {
	one := T(1)
	return one/2 == 0
}

// A reducePlan is a reduction with x's dimensions split into kept ones
// (one per output element) and reduced ones, each set ordered by x's
// stride, outermost first, and coalesced. Without kept (or reduced)
// dimensions the set is the single dimension [1] with stride 0.
type reducePlan struct {
	kShape, kX, kD []int // kept: extents, x strides, dst strides
	rShape, rX     []int // reduced: extents, x strides
	xOff, dOff     int
	nOut, nRed     int
	outer          bool // walk the innermost kept dim side by side
}

func planReduce(dl, xl Layout) *reducePlan {
	type dimInfo struct{ n, xs, ds int }
	var kept, red []dimInfo
	for d, n := range xl.Shape {
		switch {
		case dl.Shape[d] == n && n != 1:
			kept = append(kept, dimInfo{n, xl.Strides[d], dl.Strides[d]})
		case dl.Shape[d] != n:
			red = append(red, dimInfo{n, xl.Strides[d], 0})
		}
	}
	for _, s := range [][]dimInfo{kept, red} {
		sort.SliceStable(s, func(i, j int) bool { return abs(s[i].xs) > abs(s[j].xs) })
	}
	coalesce := func(ds []dimInfo) (shape, xs, dss []int) {
		for _, d := range ds {
			if n := len(shape); n > 0 && xs[n-1] == d.xs*d.n && dss[n-1] == d.ds*d.n {
				shape[n-1] *= d.n
				xs[n-1], dss[n-1] = d.xs, d.ds
				continue
			}
			shape, xs, dss = append(shape, d.n), append(xs, d.xs), append(dss, d.ds)
		}
		if len(shape) == 0 {
			return []int{1}, []int{0}, []int{0}
		}
		return shape, xs, dss
	}
	p := &reducePlan{xOff: xl.Offset, dOff: dl.Offset}
	p.kShape, p.kX, p.kD = coalesce(kept)
	p.rShape, p.rX, _ = coalesce(red)
	p.nOut, p.nRed = NumElements(p.kShape), NumElements(p.rShape)
	last := len(p.kShape) - 1
	p.outer = len(kept) > 0 && p.kShape[last] >= 8 && abs(p.kX[last]) < abs(p.rX[len(p.rX)-1])
	return p
}

// reduceFuncs are the pieces of one reduction with accumulator type A.
type reduceFuncs[T, A Number] struct {
	init  func(first T) A                      // the start value, given the first element
	row   func(a A, x []T, off, n, s int) A    // fold n elements at stride s
	cols  func(acc []A, x []T, off, s int)     // acc[j] op= x[off+j*s]
	cols4 func(acc []A, x []T, off, rs, s int) // cols at off, off+rs, off+2rs, off+3rs
	merge func(a, b A) A                       // combine partial results
	out   func(a A) T                          // the result
}

func sumFuncs[T, A Number]() reduceFuncs[T, A] {
	return reduceFuncs[T, A]{
		init: func(T) A { return 0 },
		row: func(a A, x []T, off, n, s int) A {
			if s == 1 {
				v := x[off : off+n]
				var a0, a1, a2, a3 A
				i := 0
				for ; i+4 <= len(v); i += 4 {
					a0 += A(v[i])
					a1 += A(v[i+1])
					a2 += A(v[i+2])
					a3 += A(v[i+3])
				}
				for ; i < len(v); i++ {
					a0 += A(v[i])
				}
				return a + ((a0 + a1) + (a2 + a3))
			}
			for i := 0; i < n; i, off = i+1, off+s {
				a += A(x[off])
			}
			return a
		},
		cols: func(acc []A, x []T, off, s int) {
			if s == 1 {
				v := x[off : off+len(acc)]
				for j := range acc {
					acc[j] += A(v[j])
				}
				return
			}
			for j := range acc {
				acc[j] += A(x[off+j*s])
			}
		},
		cols4: func(acc []A, x []T, off, rs, s int) {
			if s == 1 {
				n := len(acc)
				v0, v1, v2, v3 := x[off:off+n], x[off+rs:off+rs+n], x[off+2*rs:off+2*rs+n], x[off+3*rs:off+3*rs+n]
				for j := range acc {
					acc[j] += (A(v0[j]) + A(v1[j])) + (A(v2[j]) + A(v3[j]))
				}
				return
			}
			for j := range acc {
				o := off + j*s
				acc[j] += (A(x[o]) + A(x[o+rs])) + (A(x[o+2*rs]) + A(x[o+3*rs]))
			}
		},
		merge: func(a, b A) A { return a + b },
		out:   func(a A) T { return T(a) },
	}
}

// reduceAsmMin is the shortest contiguous float32 row that vecRows hands
// to the vector kernels.
const reduceAsmMin = 64

// vecRows returns f with its row fold sending contiguous float32 rows of
// at least reduceAsmMin elements to the kernels of reduce_amd64.s (sumF32
// for SumOp, maxAnyF32 and minF32 for MaxOp and MinOp) when reduceAsm is
// set; otherwise, and for other element types, f itself. The kernels
// split a row the same way on every run, so results stay deterministic.
func vecRows[T, A Number](op ReduceOp, f reduceFuncs[T, A]) reduceFuncs[T, A] {
	if !reduceAsm {
		return f
	}
	switch g := any(&f).(type) {
	case *reduceFuncs[float32, float64]: // float32 sums
		row := g.row
		g.row = func(a float64, x []float32, off, n, s int) float64 {
			if s == 1 && n >= reduceAsmMin {
				return a + sumF32(x[off:off+n])
			}
			return row(a, x, off, n, s)
		}
	case *reduceFuncs[float32, float32]: // float32 max and min
		row, merge, ext := g.row, g.merge, maxAnyF32
		if op == MinOp {
			ext = minF32
		}
		g.row = func(a float32, x []float32, off, n, s int) float32 {
			if s == 1 && n >= reduceAsmMin {
				return merge(a, ext(x[off:off+n])) // a NaN a stays NaN
			}
			return row(a, x, off, n, s)
		}
	}
	return f
}

// extremeFuncs returns max (isMax) or min with NaN propagation.
func extremeFuncs[T Number](isMax bool) reduceFuncs[T, T] {
	pick := func(a, v T) T { // a NaN accumulator stays NaN
		if v > a || v != v {
			return v
		}
		return a
	}
	if !isMax {
		pick = func(a, v T) T {
			if v < a || v != v {
				return v
			}
			return a
		}
	}
	return reduceFuncs[T, T]{
		init: func(first T) T { return first },
		row: func(a T, x []T, off, n, s int) T {
			if isMax {
				for i := 0; i < n; i, off = i+1, off+s {
					if v := x[off]; v > a || v != v {
						a = v
					}
				}
				return a
			}
			for i := 0; i < n; i, off = i+1, off+s {
				if v := x[off]; v < a || v != v {
					a = v
				}
			}
			return a
		},
		cols: func(acc []T, x []T, off, s int) {
			for j := range acc {
				acc[j] = pick(acc[j], x[off+j*s])
			}
		},
		cols4: func(acc []T, x []T, off, rs, s int) {
			for j := range acc {
				o := off + j*s
				acc[j] = pick(pick(pick(pick(acc[j], x[o]), x[o+rs]), x[o+2*rs]), x[o+3*rs])
			}
		},
		merge: func(a, b T) T {
			if a != a {
				return a
			}
			return pick(a, b)
		},
		out: func(a T) T { return a },
	}
}

// reduceBlock is the most outputs computed into one accumulator buffer.
const reduceBlock = 4096

func reduceWith[T, A Number](p *reducePlan, dst, x []T, f reduceFuncs[T, A]) {
	if p.nRed == 0 {
		zero := make([]A, min(p.nOut, reduceBlock))
		for lo := 0; lo < p.nOut; lo += reduceBlock {
			hi := min(lo+reduceBlock, p.nOut)
			reduceWrite(p, dst, lo, zero[:hi-lo], f.out)
		}
		return
	}
	w := numWorkers(p.nOut * p.nRed)
	r0 := p.rShape[0]
	// Few outputs (or, side by side, too few for each goroutine to own
	// whole cache lines of every x row): split the outermost reduced dim
	// and combine partial results, unless that dim is too short to feed
	// every goroutine and the outputs can.
	few := p.nOut < 16*w || p.outer && p.nOut < 512*w
	if w > 1 && r0 >= 2 && few && !(r0 < w && p.nOut >= w) {
		parts := min(w, r0)
		partial := make([][]A, parts)
		parallelFor(parts, r0, func(i, lo, hi int) {
			partial[i] = make([]A, p.nOut)
			reduceCompute(p, f, x, 0, p.nOut, lo, hi, partial[i])
		})
		acc := partial[0]
		for _, q := range partial[1:] {
			for j := range acc {
				acc[j] = f.merge(acc[j], q[j])
			}
		}
		reduceWrite(p, dst, 0, acc, f.out)
		return
	}
	parallelFor(w, p.nOut, func(_, lo, hi int) {
		acc := make([]A, min(hi-lo, reduceBlock))
		for b := lo; b < hi; b += reduceBlock {
			e := min(b+reduceBlock, hi)
			reduceCompute(p, f, x, b, e, 0, r0, acc[:e-b])
			reduceWrite(p, dst, b, acc[:e-b], f.out)
		}
	})
}

// reduceCompute reduces, for the outputs olo..ohi-1 (flat index over kShape),
// the part of the reduced box whose outermost index is in [r0lo, r0hi),
// into acc[0:ohi-olo].
func reduceCompute[T, A Number](p *reducePlan, f reduceFuncs[T, A], x []T, olo, ohi, r0lo, r0hi int, acc []A) {
	// The reduced box as rows: outer dims walked by an odometer, the
	// innermost as a strided run of rn elements.
	rl := len(p.rShape) - 1
	rn, rs := p.rShape[rl], p.rX[rl]
	base := r0lo * p.rX[0]
	router := append([]int(nil), p.rShape[:rl]...)
	rows := 1
	if rl == 0 {
		rn = r0hi - r0lo
	} else {
		router[0] = r0hi - r0lo
		rows = NumElements(router)
	}
	ro := newOdo(router, p.rX[:rl], 0)
	if !p.outer {
		ko := newOdo(p.kShape, p.kX, olo)
		for i := range acc {
			xb := p.xOff + ko.off + base
			a := f.init(x[xb])
			ro.reset()
			for r := 0; r < rows; r++ {
				a = f.row(a, x, xb+ro.off, rn, rs)
				ro.next()
			}
			acc[i] = a
			ko.next()
		}
		return
	}
	// Side by side: kept rows of kn outputs, each reduced element folded
	// into a run of accumulators.
	kl := len(p.kShape) - 1
	kn, ks := p.kShape[kl], p.kX[kl]
	ko := newOdo(p.kShape[:kl], p.kX[:kl], olo/kn)
	for pos, c := olo, olo%kn; pos < ohi; c = 0 {
		m := min(kn-c, ohi-pos)
		seg := acc[pos-olo : pos-olo+m]
		xb := p.xOff + ko.off + c*ks + base
		for j := range seg {
			seg[j] = f.init(x[xb+j*ks])
		}
		ro.reset()
		for r := 0; r < rows; r++ {
			off, i := xb+ro.off, 0
			for ; i+4 <= rn; i, off = i+4, off+4*rs {
				f.cols4(seg, x, off, rs, ks)
			}
			for ; i < rn; i, off = i+1, off+rs {
				f.cols(seg, x, off, ks)
			}
			ro.next()
		}
		pos += m
		ko.next()
	}
}

// reduceWrite stores out(acc[i]) to the output olo+i.
func reduceWrite[T, A Number](p *reducePlan, dst []T, olo int, acc []A, out func(A) T) {
	ko := newOdo(p.kShape, p.kD, olo)
	for _, a := range acc {
		dst[p.dOff+ko.off] = out(a)
		ko.next()
	}
}

// ArgReduce finds the max (op MaxOp) or min (op MinOp) of x along dim:
// idx gets the position along dim (int32, where torch returns int64) and
// vals, unless nil, the value. vl and il are keepdim layouts (x's shape
// with size 1 at dim). Ties go to the first occurrence; NaN counts as both
// the max and the min, the first NaN winning, as in torch. A 0-d x counts
// as shape [1]. An empty extent along dim writes nothing (the caller
// rejects it).
func ArgReduce[T Number](op ReduceOp, vals []T, vl Layout, idx []int32, il Layout, x []T, xl Layout, dim int) {
	if op != MaxOp && op != MinOp {
		panic("cpu: ArgReduce needs MaxOp or MinOp")
	}
	isMax := op == MaxOp
	better := func(v, best T) bool { // v replaces best
		if isMax {
			return v > best || (v != v && best == best)
		}
		return v < best || (v != v && best == best)
	}
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
