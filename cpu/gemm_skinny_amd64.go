package cpu

//go:generate python3 ../tools/asmgen/gemm_skinny.py gemm_skinny_amd64.s

import "unsafe"

// Products with few columns (n ≤ skinnyMaxN) whose A is row-major and
// whose B is column-major, such as a linear layer's forward product x·Wᵀ
// with a row-major W of few rows (a classifier head: 256×10×512 in the
// MLP step), waste most of the 6×16 kernel: ten of its sixteen lanes are
// useful and it broadcasts one element of A per FMA. gemmSkinny computes
// them as dot products instead: two rows of A against up to 14 rows of
// Bᵀ (= columns of B), sixteen K a ZMM FMA with every lane useful, one
// horizontal reduction an output (gemm_skinny_amd64.s).

// skinnyMaxN is the most columns of C that gemmSkinny takes.
const skinnyMaxN = 16

// gemmSkinnyOn reports whether gemm routes the products that gemmSkinny
// takes to it; a variable for the tests and benchmarks.
var gemmSkinnyOn = cpuAVX512

// skinnyAnyK makes gemmSkinny take products whatever their K; a
// variable for the benchmarks.
var skinnyAnyK = false

// sdotKernels[J-1] computes a 2×J block of C (see gemm_skinny_amd64.s).
var sdotKernels = [...]func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int){
	sdotZ1, sdotZ2, sdotZ3, sdotZ4, sdotZ5, sdotZ6, sdotZ7, sdotZ8, sdotZ9, sdotZ10, sdotZ11, sdotZ12, sdotZ13, sdotZ14,
}

// gemmSkinny computes c = a·b (as gemm) and returns true when it takes
// the product: float32, gemmSkinnyOn and sgemmAVX512, n ≤ skinnyMaxN,
// k ≥ n²/2, a row-major (a.cs = 1) and b column-major (b.rs = 1); any
// strides of c. Pairs of rows of C are split across up to parts
// goroutines.
//
// Below k = n²/2 the reductions (nine instructions an output) outweigh the
// lanes the 6×16 kernel wastes, fewer as n nears 16. Measured on one
// core (go test -bench GemmSkinny, abGemm, 10 rounds, thread CPU time,
// median GFLOP/s, the 6×16 kernel against gemmSkinny at any K), m = 256:
// n = 4 k = 16 19 against 24; n = 8 k = 16 38 against 32, k = 32 44
// against 55; n = 10 k = 32 61 against 58, k = 48 67 against 78, k = 512
// 74 against 186; n = 12 k = 32 74 against 58, k = 64 82 against 96; n =
// 14 k = 64 95 against 94, k = 96 97 against 117; n = 16 k = 96 129
// against 111, k = 128 132 against 130, k = 512 138 against 184. At k =
// 512: 64×4 20 against 101, 1024×4 34 against 117, 1024×10 84 against
// 184, 1024×16 138 against 170.
//
// The split pays even for the quickest products on two cores otherwise
// quiet (abGemm, 20 rounds, wall clock, median GFLOP/s, one goroutine
// against two): 256×10×512 171 against 223, 1024×10×512 163 against
// 287, 256×10×2048 94 against 172; on the same machine loaded by two
// other processes, split ran 2-3× slower.
func gemmSkinny[T Float](m, n, k int, a, b, c mat[T], parts int) bool {
	if !gemmSkinnyOn || !sgemmAVX512 || unsafe.Sizeof(T(0)) != 4 || n > skinnyMaxN || 2*k < n*n && !skinnyAnyK || a.cs != 1 || b.rs != 1 {
		return false
	}
	a.check(m, k)
	b.check(k, n)
	c.check(m, n)
	ad, bd, cd := asF32(a.data), asF32(b.data), asF32(c.data)
	pairs := (m + 1) / 2
	units := 1
	if parts > 1 {
		units = min(pairs, parts*gemmUnitsPerWorker)
	}
	runUnits(parts, units, func(u int) {
		for p := pairs * u / units; p < pairs*(u+1)/units; p++ {
			i, lda, ldc := 2*p, a.rs, c.rs
			if i+1 == m { // the last row alone: computed twice, stored twice
				lda, ldc = 0, 0
			}
			for j := 0; j < n; {
				w := n - j
				if w > len(sdotKernels) {
					w = (w + 1) / 2
				}
				sdotKernels[w-1](k, &ad[a.off+i*a.rs], lda, &bd[b.off+j*b.cs], b.cs, &cd[c.off+i*c.rs+j*c.cs], ldc, c.cs)
				j += w
			}
		}
	})
	return true
}

// sdotZ1 computes a 2×1 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ1(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ2 computes a 2×2 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ3 computes a 2×3 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ3(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ4 computes a 2×4 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ5 computes a 2×5 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ5(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ6 computes a 2×6 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ6(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ7 computes a 2×7 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ7(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ8 computes a 2×8 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ8(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ9 computes a 2×9 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ9(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ10 computes a 2×10 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ10(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ11 computes a 2×11 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ11(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ12 computes a 2×12 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ12(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ13 computes a 2×13 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ13(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)

// sdotZ14 computes a 2×14 block of C (see gemm_skinny_amd64.s).
//
//go:noescape
func sdotZ14(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc, cs int)
