package cpu

// The fast paths of the standard reductions, for the op table to name in
// its Folds: sums, and max and min with NaN propagation
// (torch.amax/amin: a NaN anywhere in the extent makes the result NaN).
// Float32 rows of at least reduceAsmMin contiguous elements go to the
// AVX2 kernels of reduce_amd64.s where the CPU has them (reduceAsm).

// SumFoldVec returns the fast paths of a sum of T in an accumulator A:
// rows in four interleaved partial sums, columns four rows at a time.
// Float32 rows summed in float64 use the AVX2 kernel (sumF32), which
// keeps float64 accuracy and splits a row the same way on every run, and
// so do columns four rows at a time (foldCols4F32 and, for many groups of
// four rows, foldColsF32: the Go loop's order).
func SumFoldVec[T, A Number]() FoldVec[T, A] {
	v := FoldVec[T, A]{
		Run: func(a A, x []T, off, n, s int) A {
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
		Cols: func(acc []A, x []T, off, s int) {
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
		Cols4: func(acc []A, x []T, off, rs, s int) {
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
	}
	if g, ok := any(&v).(*FoldVec[float32, float64]); ok {
		run, cols4 := g.Run, g.Cols4
		g.Run = func(a float64, x []float32, off, n, s int) float64 {
			if reduceAsm && s == 1 && n >= reduceAsmMin {
				return a + sumF32(x[off:off+n])
			}
			return run(a, x, off, n, s)
		}
		g.Cols4 = func(acc []float64, x []float32, off, rs, s int) {
			if reduceAsm && s == 1 && rs >= 0 && len(acc) >= 4 {
				foldCols4F32(acc, x, off, rs)
				return
			}
			cols4(acc, x, off, rs, s)
		}
		g.Groups = func(acc []float64, x []float32, off, rs, groups, s int) {
			if reduceAsm && s == 1 && rs >= 0 && len(acc) >= 4 {
				foldColsF32(acc, x, off, rs, groups)
				return
			}
			for range groups {
				cols4(acc, x, off, rs, s)
				off += 4 * rs
			}
		}
	}
	return v
}

// MaxFoldVec returns the fast paths of a max of T: the accumulator is an
// element, and a NaN accumulator stays NaN.
func MaxFoldVec[T Number]() FoldVec[T, T] { return extremeVec[T](true) }

// MinFoldVec returns the fast paths of a min of T, as MaxFoldVec.
func MinFoldVec[T Number]() FoldVec[T, T] { return extremeVec[T](false) }

// reduceAsmMin is the shortest contiguous float32 row that the fast
// paths hand to the vector kernels.
const reduceAsmMin = 64

// extremeVec returns the fast paths of max (isMax) or min.
func extremeVec[T Number](isMax bool) FoldVec[T, T] {
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
	v := FoldVec[T, T]{
		Run: func(a T, x []T, off, n, s int) T {
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
		Cols: func(acc []T, x []T, off, s int) {
			for j := range acc {
				acc[j] = pick(acc[j], x[off+j*s])
			}
		},
		Cols4: func(acc []T, x []T, off, rs, s int) {
			for j := range acc {
				o := off + j*s
				acc[j] = pick(pick(pick(pick(acc[j], x[o]), x[o+rs]), x[o+2*rs]), x[o+3*rs])
			}
		},
	}
	if g, ok := any(&v).(*FoldVec[float32, float32]); ok {
		run, ext, better := g.Run, maxAnyF32, func(m, a float32) bool { return m > a || m != m }
		if !isMax {
			ext, better = minF32, func(m, a float32) bool { return m < a || m != m }
		}
		g.Run = func(a float32, x []float32, off, n, s int) float32 {
			if !reduceAsm || s != 1 || n < reduceAsmMin {
				return run(a, x, off, n, s)
			}
			if m := ext(x[off : off+n]); a == a && better(m, a) { // a NaN a stays NaN
				return m
			}
			return a
		}
	}
	return v
}
