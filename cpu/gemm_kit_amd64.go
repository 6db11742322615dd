//go:build amd64

package cpu

import (
	"runtime"
	"sync"
)

// A gemmKit is one element type's GEMM: the micro-kernel's block (mr rows
// of A by nr columns of B a packed panel, nb columns of C a kernel call at
// most), the cache blocks (kc steps of K, mc rows of A packed at once),
// the packing of A and B and the macro-kernel over a packed block.
//
// With direct set, the kernels read a row-major A in place (six rows a
// block, by broadcasts along each row) rather than packed: the packing
// saved is a pass over A, and the rows a block reads (mc·kc values) stay
// in L2 as the packed copy would.
type gemmKit[T Float] struct {
	mr, nr, nb int
	kc, mc     int
	direct     bool
	packA      func(dst []T, a mat[T], mc, kc int)
	packB      func(dst []T, b mat[T], kc, nc int)
	macro      func(mc, nc, kc int, a aPanels[T], bp []T, c mat[T], accum bool)
	gemv       func(m, k int, a, b, c mat[T]) bool // products with one column, when it takes them; or nil
	outer      func(m, n int, a, b, c mat[T]) bool // products with K = 1, when it takes them; or nil
	bufs       *gemmCache[T]
}

// inPlace reports whether the kernels read a in place.
func (kit *gemmKit[T]) inPlace(a mat[T]) bool { return kit.direct && (a.cs == 1 || a.rs == 1) }

var (
	sgemmBufs gemmCache[float32]
	dgemmBufs gemmCache[float64]
)

// A gemmCache keeps packing buffers from one product to the next. Unlike
// a sync.Pool it is not emptied by the garbage collector: a large product
// that got fresh buffers after every collection would spend a few percent
// of its time zeroing them (16 MiB of packed B at n = 2048). It keeps as
// many sets as one product uses at once on every core (gemmCacheKeep):
// with fewer, the sets of the blocks, handed back first, filled it, and
// the shared operand's, the largest (up to gemmShared, 16 MiB), handed
// back last, was dropped and made afresh by the next product.
type gemmCache[T Float] struct {
	mu   sync.Mutex
	free []*gemmBufs[T]
}

// gemmCacheKeep is how many sets of packing buffers a gemmCache keeps
// for the next products: one per goroutine of a product, and the shared
// operand's.
func gemmCacheKeep() int { return runtime.GOMAXPROCS(0) + 1 }

// get returns a set of buffers, empty or kept from an earlier product.
func (c *gemmCache[T]) get() *gemmBufs[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b
	}
	return new(gemmBufs[T])
}

// put hands b back, to be kept if there is room.
func (c *gemmCache[T]) put(b *gemmBufs[T]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free) < gemmCacheKeep() {
		c.free = append(c.free, b)
	}
}

// sgemmKit is the float32 GEMM: the AVX-512 kernels where the CPU has them
// (and sgemmAVX512 is set), else the AVX2 one. The kits are built once: a
// product of a small model must not pay an allocation for them; but one
// is built afresh while a benchmark has changed the blocking (gemmKCZ,
// gemmMCZ, gemmDirectA), which the kit built at start-up would ignore.
func sgemmKit() *gemmKit[float32] {
	if !sgemmAVX512 {
		return sgemmKit2
	}
	if k := sgemmKitZ; k.kc != gemmKCZ || k.mc != gemmMCZ || k.direct != gemmDirectA {
		return newSgemmKitZ()
	}
	return sgemmKitZ
}

var (
	sgemmKitZ = newSgemmKitZ()
	sgemmKit2 = &gemmKit[float32]{mr: gemmMR, nr: gemmNR, nb: gemmNR, kc: gemmKC, mc: gemmMC,
		packA: packA, packB: packB, macro: sgemmMacro, bufs: &sgemmBufs}
)

// newSgemmKitZ returns the AVX-512 float32 kit with the blocking set now.
func newSgemmKitZ() *gemmKit[float32] {
	return &gemmKit[float32]{mr: gemmMR, nr: gemmNR, nb: gemmNRZ, kc: gemmKCZ, mc: gemmMCZ, direct: gemmDirectA,
		packA: packA, packB: packB, macro: sgemmMacroZ, gemv: sgemv, outer: souter, bufs: &sgemmBufs}
}

// dgemmKit is the float64 GEMM, with the AVX-512 kernels (dgemmAsm):
// built once, as sgemmKit's, and afresh only while a benchmark has
// changed the blocking (dgemmKC, dgemmMC, gemmDirectA).
func dgemmKit() *gemmKit[float64] {
	if k := dgemmKitZ; k.kc != dgemmKC || k.mc != dgemmMC || k.direct != gemmDirectA {
		return newDgemmKit()
	}
	return dgemmKitZ
}

var dgemmKitZ = newDgemmKit()

// newDgemmKit returns the float64 kit with the blocking set now.
func newDgemmKit() *gemmKit[float64] {
	return &gemmKit[float64]{mr: gemmMR, nr: dgemmNR, nb: 4 * dgemmNR, kc: dgemmKC, mc: dgemmMC, direct: gemmDirectA,
		packA: packAGo[float64], packB: packBGo[float64], macro: dgemmMacroZ, bufs: &dgemmBufs}
}
