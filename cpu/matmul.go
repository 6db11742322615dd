package cpu

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// MatMul computes dst[b] = a[b] · bm[b] for every batch b. All layouts
// are 3-D: dst (B, M, N), a (B, M, K), bm (B, K, N), with any strides (a
// batch stride of 0 broadcasts an operand over the batches). dst is
// written, not accumulated, and must not overlap a or bm.
//
// float32 products go to the package's own GEMM (sgemm, gemm_amd64.go)
// where the CPU has AVX2 and FMA, float64 ones (dgemm) where it has
// AVX-512: it packs the operands from any strides itself, so nothing is
// copied beforehand, and every product is computed (0·Inf and 0·NaN give
// NaN). One large product is split across goroutines; several small ones
// are split by batch.
//
// Otherwise (float64 without AVX-512, or no AVX2), each product is one
// call of gonum's
// Sgemm or Dgemm, C = P·Q with
// P = a, Q = bm, C = dst, or, when dst is column-major, P = bmᵀ, Q = aᵀ,
// C = dstᵀ (row-major). Q goes to gonum in place when its last two dims
// are row-major or transposed, with the matching transpose flag and
// leading dimension; P goes in place when it is row-major. Anything else
// is first copied to a contiguous temporary: a P that is transposed too,
// because gonum's kernels for a transposed first operand run 1.6× (Tᵀ·Q)
// to 10× (Tᵀ·Tᵀ) slower than the copy-then-NoTrans route (measured at
// n = 512), and a dst that is neither row- nor column-major, which is
// computed in a temporary and copied out. gonum splits one large GEMM
// across goroutines itself; when the matrices are too small for that
// (fewer than 4 blocks of 64×64 in C) and there are several batches, the
// batches are split across goroutines instead.
//
// Like gonum, some layouts skip the products of a zero in P, so 0·Inf and
// 0·NaN may contribute 0 rather than NaN on that path. With K = 0, dst is
// zeroed.
func MatMul[T Float](dst []T, dl Layout, a []T, al Layout, bm []T, bl Layout) {
	nb, m, n, k := dl.Shape[0], dl.Shape[1], dl.Shape[2], al.Shape[2]
	if nb == 0 || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		Fill(dst, dl, 0)
		return
	}
	if sgemmAsm && unsafe.Sizeof(T(0)) == 4 {
		matMulSgemm(asF32(dst), dl, asF32(a), al, asF32(bm), bl)
		return
	}
	if dgemmAsm && unsafe.Sizeof(T(0)) == 8 {
		matMulDgemm(asF64(dst), dl, asF64(a), al, asF64(bm), bl)
		return
	}
	gemm := gemmFunc[T]()
	mat := func(l Layout) matView {
		return matView{r: l.Shape[1], c: l.Shape[2], sr: l.Strides[1], sc: l.Strides[2]}
	}
	pv, qv, dm := mat(al), mat(bl), mat(dl)
	p, q, pl, ql := a, bm, al, bl
	rows, cols := m, n
	dT, ldc, dOK := dm.blas()
	if dOK && dT { // dstᵀ = bmᵀ · aᵀ, row-major
		pv, qv = qv.t(), pv.t()
		p, q, pl, ql = bm, a, bl, al
		rows, cols = n, m
	}
	if !dOK {
		ldc = n
	}
	pT, ldp, pOK := pv.blas()
	if pOK && pT {
		pOK = false
	}
	if !pOK {
		pT, ldp = false, k
	}
	qT, ldq, qOK := qv.blas()
	if !qOK {
		qT, ldq = false, cols
	}
	batch := func(scratch *matScratch[T], i int) {
		po, qo, do := pl.Offset+i*pl.Strides[0], ql.Offset+i*ql.Strides[0], dl.Offset+i*dl.Strides[0]
		pb, qb := p[po:], q[qo:]
		if !pOK {
			pb = scratch.p.load(p, po, pv, pl.Strides[0] == 0)
		}
		if !qOK {
			qb = scratch.q.load(q, qo, qv, ql.Strides[0] == 0)
		}
		cb := dst[do:]
		if !dOK {
			if len(scratch.c) < m*n {
				scratch.c = make([]T, m*n)
			}
			cb = scratch.c[:m*n]
		}
		gemm(pT, qT, rows, cols, k, pb, ldp, qb, ldq, cb, ldc)
		if !dOK {
			Copy(dst, Layout{Shape: []int{m, n}, Strides: dl.Strides[1:], Offset: do}, cb, Contiguous(m, n))
		}
	}
	blocks := ((m + 63) / 64) * ((n + 63) / 64)
	parts := 1
	if nb > 1 && blocks < 4 {
		parts = min(numWorkers(nb*m*n*k), nb)
	}
	parallelFor(parts, nb, func(_, lo, hi int) {
		var s matScratch[T]
		for i := lo; i < hi; i++ {
			batch(&s, i)
		}
	})
}

// A matView is the (rows × cols) matrix of a batch with its strides.
type matView struct{ r, c, sr, sc int }

// t returns the transposed view.
func (v matView) t() matView { return matView{r: v.c, c: v.r, sr: v.sc, sc: v.sr} }

// blas returns how gonum can read the matrix in place: trans false and
// ld the row stride when it is row-major, trans true and ld the column
// stride when it is column-major; ok is false when it is neither. The
// stride of a dim of extent 1 does not matter.
func (v matView) blas() (trans bool, ld int, ok bool) {
	if v.sc == 1 || v.c == 1 { // row-major?
		if v.r == 1 {
			return false, max(1, v.c), true
		}
		if v.sr >= max(1, v.c) {
			return false, v.sr, true
		}
	}
	if v.sr == 1 || v.r == 1 { // column-major?
		if v.c == 1 {
			return true, max(1, v.r), true
		}
		if v.sc >= max(1, v.r) {
			return true, v.sc, true
		}
	}
	return false, 0, false
}

// matScratch holds one goroutine's temporaries.
type matScratch[T Float] struct {
	p, q copyCache[T]
	c    []T
}

// A copyCache is a contiguous copy of an operand matrix that is reused
// while the operand's offset stays the same (a broadcast batch).
type copyCache[T Float] struct {
	buf   []T
	off   int
	valid bool
}

// load returns the matrix v at off in src as a contiguous slice.
func (cc *copyCache[T]) load(src []T, off int, v matView, reuse bool) []T {
	size := v.r * v.c
	if reuse && cc.valid && cc.off == off {
		return cc.buf[:size]
	}
	if len(cc.buf) < size {
		cc.buf = make([]T, size)
	}
	Copy(cc.buf[:size], Contiguous(v.r, v.c), src, Layout{Shape: []int{v.r, v.c}, Strides: []int{v.sr, v.sc}, Offset: off})
	cc.off, cc.valid = off, true
	return cc.buf[:size]
}

// gemmFunc returns c = op(a)·op(b) (alpha 1, beta 0) for T through gonum,
// viewing []T as []float32 or []float64 (T's underlying type).
func gemmFunc[T Float]() func(tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	var impl gonum.Implementation
	tr := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	if unsafe.Sizeof(T(0)) == 4 {
		return func(tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
			impl.Sgemm(tr(tA), tr(tB), m, n, k, 1, asF32(a), lda, asF32(b), ldb, 0, asF32(c), ldc)
		}
	}
	return func(tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
		impl.Dgemm(tr(tA), tr(tB), m, n, k, 1, asF64(a), lda, asF64(b), ldb, 0, asF64(c), ldc)
	}
}

func asF32[T Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func asF64[T Float](s []T) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
