package cpu

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	xcpu "golang.org/x/sys/cpu"
)

// The GEMM for amd64, in the Goto/BLIS structure: float32 with AVX2 and
// FMA or AVX-512, float64 with AVX-512 (gemmKit holds what differs). K is
// taken in steps of at most kc; for each, a kc×nc block of B is packed
// into panels of one register's width of columns (packB: 16 float32 or 8
// float64 values) and an mc×kc block of A into panels of gemmMR rows
// (packA), unless the AVX-512 kernels read a row-major A, or a row-major
// B of a product too small to repay its packing, in place; every
// block of C is computed by an assembly micro-kernel, stored on the first
// K step and added on the others.
//
// The AVX2 kernel computes 6×16 from one A and one B panel
// (sgemmKernel6x16, kc 256, mc 192: a B panel of 16 KiB stays in L1 while
// the kernel walks the A panels of the block, 192 KiB, in L2). The
// AVX-512 kernels compute 6×64 (float32) or 6×32 (float64) from four B
// panels read side by side, the shape of BLIS's 6×64 kernels for Zen 4
// and 5: 24 accumulators of the 32 registers, and per K step 4 loads and
// 6 broadcasts for 24 FMAs, under the two loads a cycle these cores
// sustain. Float32 takes kc 512 and mc 192, BLIS's blocking for its
// 6×64 kernel: a B micro-panel (128 KiB) and the A block (384 KiB) both
// stay in the 1 MiB L2, the B panel streaming to the kernel at a fraction
// of L2's bandwidth, and a K of up to 512 is one step, so C is stored
// once (measured on a Zen 5 core against kc 256, as shares of the
// 12-chain fma_peak of then: 94.7% at n = 1024, from 87.7%). Float64 takes kc 256 and mc 192 (94% of the
// float64 peak on one core at n = 1024, against 74% with mc 96). On a
// Zen 5 core a 512-bit FMA does twice the work of a 256-bit one (bench's
// fma_peak measures it).
//
// Blocks on the right edge use narrower AVX-512 kernels with masked
// loads and stores; the AVX2 path computes edge blocks into a temporary
// whose valid part is then written out, which also serves a C whose
// columns are not contiguous. Every product is computed, so a NaN or an Inf in an operand
// reaches every element of C it contributes to (0·Inf is NaN). Products
// with one row or column go to dot and axpy kernels (sgemv), float32
// products of at most 16 columns with a transposed B (a classifier's
// x·Wᵀ) to dot products of rows (gemmSkinny).
//
// One operand is shared: with more rows than columns, B is packed whole
// (every K step, up to gemmShared bytes at once, else in column blocks)
// and C is cut into blocks of rows, each of which packs its own rows of
// A; with more columns, the other way round (gemmRows, gemmCols).
// Packing the shared operand in parts and computing the blocks are the
// units that goroutines take in turn (runUnits), so a core that is slow to
// wake up costs nothing but its share. A product is split across
// goroutines only when it is large enough to repay waking them
// (splitProduct: its size, and for a small K a larger size).

const (
	gemmMR = 6    // rows of the micro-kernel's block
	gemmNR = 16   // columns of the micro-kernel's block
	gemmKC = 256  // K step: one B panel is 16 KiB
	gemmMC = 192  // rows of A packed at once (192 KiB at kc = 256)
	gemmNC = 4096 // columns of B in a block of C

	// gemmPackPanels is the number of panels of the shared operand that
	// one unit of work packs.
	gemmPackPanels = 8

	// gemmUnitsPerWorker is about how many blocks of C each goroutine
	// computes, for the work to even out when one starts late.
	gemmUnitsPerWorker = 4

	// gemmColsPerWorker is gemmUnitsPerWorker for the blocks of columns
	// of a product whose A is read in place: each block reads all of A,
	// so fewer blocks read it fewer times. At n = 1024 on two cores one
	// block each ran 405 GFLOP/s against 391 with four each (best of 10,
	// one run); in the MLP step one, two and four blocks each measured
	// the same (median of about 700 interleaved steps each).
	gemmColsPerWorker = 1

	// gemmParallelWork is the size m·n·k from which one product is
	// split across goroutines (about 10 µs of one core's work), when its
	// K is not small (splitProduct).
	gemmParallelWork = 1 << 19

	// gemmSmallWork is the size m·n·k up to which plain loops are faster
	// than packing and the kernel.
	gemmSmallWork = 256

	// gemmBatchB is the most bytes of B for which a batch of products is
	// split into whole products rather than each product across cores.
	gemmBatchB = 2 << 20
)

// gemmShared is the most bytes the shared operand is packed into (16
// MiB); a variable for the tests.
var gemmShared = 1 << 24

// sharedValues is gemmShared in values of T.
func sharedValues[T Float]() int { return gemmShared / int(unsafe.Sizeof(T(0))) }

// sgemmAsm reports whether MatMul computes float32 products with sgemm
// rather than gonum; tests turn it off to compare the two.
var sgemmAsm = xcpu.X86.HasAVX2 && xcpu.X86.HasFMA

// dgemmAsm reports whether MatMul computes float64 products with dgemm
// (the AVX-512 kernels) rather than gonum; tests turn it off to compare
// the two.
var dgemmAsm = cpuAVX512

// sgemmKernel6x16 computes the 6×16 block a·b from a packed A panel (k
// groups of 6) and a packed B panel (k groups of 16) and stores it to c,
// whose rows are ldc floats apart, or adds it to c when accum is not 0.
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32, ldc int, accum int)

// matMulSgemm is MatMul for float32 through sgemm.
func matMulSgemm(dst []float32, dl Layout, a []float32, al Layout, bm []float32, bl Layout) {
	matMulGemm(dst, dl, a, al, bm, bl, sgemmKit())
}

// matMulDgemm is MatMul for float64 through dgemm.
func matMulDgemm(dst []float64, dl Layout, a []float64, al Layout, bm []float64, bl Layout) {
	matMulGemm(dst, dl, a, al, bm, bl, dgemmKit())
}

// matMulGemm is MatMul through gemm: one product per batch, split across
// goroutines when splitProduct says so, else the batches are.
func matMulGemm[T Float](dst []T, dl Layout, a []T, al Layout, bm []T, bl Layout, kit *gemmKit[T]) {
	nb, m, n, k := dl.Shape[0], dl.Shape[1], dl.Shape[2], al.Shape[2]
	view := func(s []T, l Layout, i int) mat[T] {
		return mat[T]{data: s, off: l.Offset + i*l.Strides[0], rs: l.Strides[1], cs: l.Strides[2]}
	}
	w := runtime.GOMAXPROCS(0)
	// Each product on its own, split when splitProduct says so (nb = 1 without the
	// closure below: a small model makes thousands a step), unless there
	// are at least two products a goroutine and each one's B is at most
	// gemmBatchB bytes: then whole products are the units, each on one
	// core with its own operands (a convolution's per-sample products).
	// Measured on two cores against splitting every product (go test
	// -bench Workloads, old and new interleaved, two or three runs each):
	// cnn_step 55 -> 64 steps/s, conv2d 32×256×14² (B 1.8 MB a sample)
	// 240 -> 300 GFLOP/s; 32×128×28² (B 3.6 MB) fell from 254 to 237 and
	// 32×64×56² (7.2 MB) from 195 to 126, so they stay split.
	wholeProducts := nb >= 2*w && k*n*int(unsafe.Sizeof(T(0))) <= gemmBatchB
	split := splitProduct(m, n, k)
	if nb == 1 || split && !wholeProducts {
		parts := 1
		if split {
			parts = w
		}
		for i := range nb {
			gemm(m, n, k, view(a, al, i), view(bm, bl, i), view(dst, dl, i), parts, kit, nil)
		}
		return
	}
	parts := 1
	if nb*m*n*k >= gemmParallelWork {
		parts = w
	}
	runUnits(parts, nb, func(i int) { gemm(m, n, k, view(a, al, i), view(bm, bl, i), view(dst, dl, i), 1, kit, nil) })
}

// sgemm computes c = a·b for float32 (see gemm).
func sgemm(m, n, k int, a, b, c f32Mat, parts int) { gemm(m, n, k, a, b, c, parts, sgemmKit(), nil) }

// dgemm computes c = a·b for float64 (see gemm); only where dgemmAsm.
func dgemm(m, n, k int, a, b, c mat[float64], parts int) {
	gemm(m, n, k, a, b, c, parts, dgemmKit(), nil)
}

// gemm computes c = a·b for a (m×k), b (k×n) and c (m×n), m, n, k > 0,
// with up to parts goroutines, then epi (unless nil) on each block of c
// as the macro-kernel stores it on the last K step; MatMulEpilogue only
// passes one where gemm computes c in blocks, as is. c must not overlap
// a or b.
func gemm[T Float](m, n, k int, a, b, c mat[T], parts int, kit *gemmKit[T], epi *Epilogue) {
	if epi != nil {
		// Only the blocks apply an epilogue: the other ways (products
		// transposed, small, one column or row, K = 1, skinny) are not
		// taken, and MatMulEpilogue declines those it cannot do in blocks.
		gemmBlocks(m, n, k, a, b, c, parts, kit, epi)
		return
	}
	if n == 1 {
		c.cs = 1
	}
	if c.cs != 1 && (c.rs == 1 || m == 1) { // column-major c: cᵀ = bᵀ·aᵀ
		m, n, a, b, c = n, m, b.t(), a.t(), c.t()
		c.cs = 1
	}
	if m*n*k <= gemmSmallWork {
		gemmSmall(m, n, k, a, b, c)
		return
	}
	if m == 1 && c.cs == 1 { // a row: cᵀ = bᵀ·aᵀ is a column
		m, n, a, b, c = n, m, b.t(), a.t(), c.t()
	}
	if n == 1 {
		if kit.gemv != nil && kit.gemv(m, k, a, b, c) {
			return
		}
	}
	if k == 1 && kit.outer != nil && kit.outer(m, n, a, b, c) {
		return
	}
	if n <= skinnyMaxN && gemmSkinny(m, n, k, a, b, c, parts) {
		return
	}
	gemmBlocks(m, n, k, a, b, c, parts, kit, nil)
}

// gemmBlocks computes c = a·b in blocks, sharing B (gemmRows) or A
// (gemmCols), then epi (unless nil) on each block as it is stored.
func gemmBlocks[T Float](m, n, k int, a, b, c mat[T], parts int, kit *gemmKit[T], epi *Epilogue) {
	// The kernels read and write through pointers, and the goroutines
	// must not panic: bounds first.
	a.check(m, k)
	b.check(k, n)
	c.check(m, n)
	if m >= n && !kit.colsInPlace(a, n, parts) {
		gemmRows(m, n, k, a, b, c, parts, kit, epi)
	} else {
		gemmCols(m, n, k, a, b, c, parts, kit, epi)
	}
}

// colsInPlace reports whether a product with A read in place and n
// columns is split into blocks of columns even when it has more rows:
// then nothing is packed for all goroutines to share and none waits for
// another, where sharing B (gemmRows) makes every goroutine wait until
// all of B is packed and read the halves the others packed. Measured on
// two Zen 5 cores, best of 10 runs, the two ways interleaved twice:
// sharing B ran n = 1024 at 369-372 GFLOP/s and n = 2048 at 373-381;
// blocks of columns at 398 and 392-394, near two independent products
// side by side (408). It takes at least two of the kernel's
// widest blocks a goroutine.
func (kit *gemmKit[T]) colsInPlace(a mat[T], n, parts int) bool {
	return kit.inPlace(a) && n >= 2*parts*kit.nb
}

// gemmRows computes c = a·b sharing B: B is packed whole (all K steps of
// a block of columns), then each block of rows of C packs its rows of A
// and computes them.
func gemmRows[T Float](m, n, k int, a, b, c mat[T], parts int, kit *gemmKit[T], epi *Epilogue) {
	mr, nr := kit.mr, kit.nr
	kcs := steps(k, kit.kc, 1)
	kb := (k + kcs - 1) / kcs
	ncs := steps(n, max(kit.nb, min(gemmNC, sharedValues[T]()/k)), kit.nb)
	rows := splitFor(m, parts, gemmUnitsPerWorker, kit.mc, mr)
	items := rows.count
	shared := kit.bufs.get()
	defer kit.bufs.put(shared)
	directB := kit.inPlaceB(b, k, n)
	for jc := 0; jc < n; jc += ncs {
		nc := min(ncs, n-jc)
		np := (nc + nr - 1) / nr
		bp, groups, packs := sharedPanels(&shared.b, directB, np, nr, k, kb)
		var packed atomic.Int64
		runUnits(parts, packs+items, func(u int) {
			if u < packs { // pack panels of one K step of B
				pc, j0 := u/groups*kcs, u%groups*gemmPackPanels*nr
				kc := min(kcs, k-pc)
				defer packed.Add(1) // even on a panic, for the others not to wait forever
				kit.packB(bp[pc*np*nr+j0*kc:], b.at(pc, jc+j0), kc, min(nc-j0, gemmPackPanels*nr))
				return
			}
			for packed.Load() < int64(packs) {
				runtime.Gosched()
			}
			i0, i1 := rows.block(u - packs)
			mc := i1 - i0
			bufs := kit.bufs.get()
			defer kit.bufs.put(bufs)
			var ap []T
			if !kit.inPlace(a) {
				ap = aligned(&bufs.a, (mc+mr-1)/mr*mr*kcs)
			}
			edge := aligned(&bufs.edge, mr*kcs)
			for pc := 0; pc < k; pc += kcs {
				kc := min(kcs, k-pc)
				blk := inPlaceA(a.at(i0, pc), edge)
				if ap != nil {
					kit.packA(ap, a.at(i0, pc), mc, kc)
					blk = packedA(ap, kc)
				}
				blkB := inPlaceB(b.at(pc, jc), nr)
				if !directB {
					blkB = packedB(bp[pc*np*nr:], nr, kc)
				}
				kit.macro(mc, nc, kc, blk, blkB, c.at(i0, jc), pc > 0, epi.at(jc, pc+kc >= k))
			}
		})
	}
}

// gemmCols computes c = a·b sharing A: A is packed whole (all K steps of
// a block of rows) unless it is read in place, then each block of
// columns of C packs its columns of B and computes them, kit.mc rows at a
// time.
func gemmCols[T Float](m, n, k int, a, b, c mat[T], parts int, kit *gemmKit[T], epi *Epilogue) {
	mr, nr := kit.mr, kit.nr
	kcs := steps(k, kit.kc, 1)
	kb := (k + kcs - 1) / kcs
	mcs := steps(m, max(mr, sharedValues[T]()/k), mr)
	shared := kit.bufs.get()
	defer kit.bufs.put(shared)
	direct, directB := kit.inPlace(a), kit.inPlaceB(b, k, n)
	per := gemmUnitsPerWorker
	if direct {
		per = gemmColsPerWorker
	}
	cols := splitFor(n, parts, per, gemmNC, kit.nb)
	items := cols.count
	for ic := 0; ic < m; ic += mcs {
		mc := min(mcs, m-ic)
		np := (mc + mr - 1) / mr
		ap, groups, packs := sharedPanels(&shared.a, direct, np, mr, k, kb)
		var packed atomic.Int64
		runUnits(parts, packs+items, func(u int) {
			if u < packs { // pack panels of one K step of A
				pc, i0 := u/groups*kcs, u%groups*gemmPackPanels*mr
				kc := min(kcs, k-pc)
				defer packed.Add(1)
				kit.packA(ap[pc*np*mr+i0*kc:], a.at(ic+i0, pc), min(mc-i0, gemmPackPanels*mr), kc)
				return
			}
			for packed.Load() < int64(packs) {
				runtime.Gosched()
			}
			j0, j1 := cols.block(u - packs)
			nc := j1 - j0
			bufs := kit.bufs.get()
			defer kit.bufs.put(bufs)
			var bp []T
			if !directB {
				bp = aligned(&bufs.b, (nc+nr-1)/nr*nr*kcs)
			}
			edge := aligned(&bufs.edge, mr*kcs)
			for pc := 0; pc < k; pc += kcs {
				kc := min(kcs, k-pc)
				blkB := inPlaceB(b.at(pc, j0), nr)
				if !directB {
					kit.packB(bp, b.at(pc, j0), kc, nc)
					blkB = packedB(bp, nr, kc)
				}
				for i0 := 0; i0 < mc; i0 += kit.mc {
					blk := inPlaceA(a.at(ic+i0, pc), edge)
					if !direct {
						blk = packedA(ap[pc*np*mr+i0*kc:], kc)
					}
					kit.macro(min(kit.mc, mc-i0), nc, kc, blk, blkB, c.at(ic+i0, j0), pc > 0, epi.at(j0, pc+kc >= k))
				}
			}
		})
	}
}

// sharedPanels returns the room in *buf for the shared operand's np
// packed panels of unit values by k, the groups of gemmPackPanels panels
// each of its kb K steps packs in, and the pack units (kb·groups); none
// of them when the operand is read in place.
func sharedPanels[T Float](buf *[]T, inPlace bool, np, unit, k, kb int) (p []T, groups, packs int) {
	if inPlace {
		return nil, 0, 0
	}
	groups = (np + gemmPackPanels - 1) / gemmPackPanels
	return aligned(buf, np*unit*k), groups, kb * groups
}

// gemmSmall computes c = a·b with plain loops, for products too small to
// repay packing.
func gemmSmall[T Float](m, n, k int, a, b, c mat[T]) {
	for i := range m {
		for j := range n {
			var s T
			ao, bo := a.off+i*a.rs, b.off+j*b.cs
			for l := range k {
				s += a.data[ao+l*a.cs] * b.data[bo+l*b.rs]
			}
			c.data[c.off+i*c.rs+j*c.cs] = s
		}
	}
}

// check panics unless every element of the r×c matrix v is in v.data.
func (v mat[T]) check(r, c int) {
	lo, hi := v.off, v.off
	for _, e := range [2]int{(r - 1) * v.rs, (c - 1) * v.cs} {
		if e < 0 {
			lo += e
		} else {
			hi += e
		}
	}
	if lo < 0 || hi >= len(v.data) {
		panic(fmt.Sprintf("cpu: gemm: %d×%d matrix at offset %d, strides (%d, %d), out of range of %d elements",
			r, c, v.off, v.rs, v.cs, len(v.data)))
	}
}

// gemmBufs are one goroutine's packing buffers: A's block, B's block, and
// the last, short panel of rows of an A read in place.
type gemmBufs[T Float] struct{ a, b, edge []T }

// aligned returns n values of *s starting on a 64-byte boundary, growing
// *s when it is too short.
func aligned[T Float](s *[]T, n int) []T {
	const pad = 64 / 4 // values of padding, enough for float32
	if len(*s) < n+pad {
		*s = make([]T, n+pad)
	}
	size := int(unsafe.Sizeof(T(0)))
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(*s)))%64) / size
	return (*s)[skip : skip+n]
}

// steps returns the block size to cover n in steps of at most max that
// are as even as possible, rounded up to a multiple of unit.
func steps(n, max, unit int) int {
	parts := (n + max - 1) / max
	s := (n + parts - 1) / parts
	return (s + unit - 1) / unit * unit
}

// sgemmMacro computes the mc×nc block c from packed A and B, storing it,
// or adding it to c when accum is set. c is in range (sgemm checked it).
func sgemmMacro(mc, nc, kc int, a aPanels[float32], b bPanels[float32], c f32Mat, accum bool, epi Epilogue) {
	if !a.packed || !b.packed || epi.Bias != nil {
		panic("cpu: sgemmMacro: A and B must be packed for the AVX2 kernel, which takes no epilogue")
	}
	ap, bp := a.data[a.off:], b.data[b.off:]
	// The kernel reads whole panels through pointers.
	_ = ap[(mc+gemmMR-1)/gemmMR*gemmMR*kc-1]
	_ = bp[(nc+gemmNR-1)/gemmNR*gemmNR*kc-1]
	acc := 0
	if accum {
		acc = 1
	}
	var tile [gemmMR * gemmNR]float32
	for jr := 0; jr < nc; jr += gemmNR {
		nr := min(gemmNR, nc-jr)
		bpan := &bp[jr*kc]
		for ir := 0; ir < mc; ir += gemmMR {
			mr := min(gemmMR, mc-ir)
			apan := &ap[ir*kc]
			if mr == gemmMR && nr == gemmNR && c.cs == 1 {
				sgemmKernel6x16(kc, apan, bpan, &c.data[c.off+ir*c.rs+jr], c.rs, acc)
				continue
			}
			sgemmKernel6x16(kc, apan, bpan, &tile[0], gemmNR, 0)
			storeTile(c.at(ir, jr), tile[:], gemmNR, mr, nr, accum)
		}
	}
}

// storeTile writes the mr×nr block at the start of tile, whose rows are
// ld values apart, to c, or adds it to c when accum is set.
func storeTile[T Float](c mat[T], tile []T, ld, mr, nr int, accum bool) {
	for i := range mr {
		o := c.off + i*c.rs
		t := tile[i*ld : i*ld+nr]
		if accum {
			for j, v := range t {
				c.data[o+j*c.cs] += v
			}
		} else {
			for j, v := range t {
				c.data[o+j*c.cs] = v
			}
		}
	}
}
