//go:build amd64

package cpu

import (
	"runtime"
	"sync"
	"unsafe"
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
	directB    bool
	packA      func(dst []T, a mat[T], mc, kc int)
	packB      func(dst []T, b mat[T], kc, nc int)
	macro      func(mc, nc, kc int, a aPanels[T], b bPanels[T], c mat[T], accum bool, epi Epilogue)
	gemv       func(m, k int, a, b, c mat[T]) bool // products with one column, when it takes them; or nil
	outer      func(m, n int, a, b, c mat[T]) bool // products with K = 1, when it takes them; or nil
	bufs       *gemmCache[T]
}

// inPlace reports whether the kernels read a in place.
func (kit *gemmKit[T]) inPlace(a mat[T]) bool { return kit.direct && (a.cs == 1 || a.rs == 1) }

// inPlaceB reports whether the kernels read the k×n matrix b in place
// rather than packed: with directB set, when b is row-major, its data
// reaches past the last row's whole panels, which the kernels load whole
// (the columns past n only reach columns of C that the masked stores
// leave alone), and a panel's kc rows span at most gemmDirectBSpan bytes
// at a row stride that is not a multiple of 4 KiB.
//
// Packing B costs a pass over it for every product, which a product of
// few rows does not repay. Measured on two Zen 5 cores (go test -bench
// GemmDirectB: abGemm, 40 interleaved rounds, median GFLOP/s, two runs),
// in place against packed: the MLP step's 512×512×256 301–318 against
// 275–278 and 256×512×512 317–325 against 292–293, 256×256×256 330–334
// against 302–318; 512×784×256 and 512×512×512 within 3% either way. With
// the two limits lifted, 4 KiB strides ran slower in place (1024×1024×
// 1024 347–349 against 387–395, 512×1024×256 308–315 against 339–353)
// and so did the 2.1 MiB span of a padded 1024×1024×1024 (381–383
// against 394–396); 768×768×768 (a 1.15 MiB span) ran 388–392 against
// 382–384, within the rounds' spread: variants running identical code
// differed by up to 9% in these runs.
func (kit *gemmKit[T]) inPlaceB(b mat[T], k, n int) bool {
	size := int(unsafe.Sizeof(T(0)))
	return kit.directB && b.cs == 1 && b.rs >= 0 && b.rs*size%4096 != 0 &&
		steps(k, kit.kc, 1)*b.rs*size <= gemmDirectBSpan &&
		b.off+(k-1)*b.rs+(n+kit.nr-1)/kit.nr*kit.nr <= len(b.data)
}

// gemmDirectBSpan is the most bytes that the kc rows of a panel of B read
// in place may span (see inPlaceB).
const gemmDirectBSpan = 1 << 20

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
	if k := sgemmKitZ; k.kc != gemmKCZ || k.mc != gemmMCZ || k.direct != gemmDirectA || k.directB != gemmDirectB {
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
	return &gemmKit[float32]{mr: gemmMR, nr: gemmNR, nb: gemmNRZ, kc: gemmKCZ, mc: gemmMCZ, direct: gemmDirectA, directB: gemmDirectB,
		packA: packA, packB: packB, macro: sgemmMacroZ, gemv: sgemv, outer: souter, bufs: &sgemmBufs}
}

// dgemmKit is the float64 GEMM, with the AVX-512 kernels (dgemmAsm):
// built once, as sgemmKit's, and afresh only while a benchmark has
// changed the blocking (dgemmKC, dgemmMC, gemmDirectA).
func dgemmKit() *gemmKit[float64] {
	if k := dgemmKitZ; k.kc != dgemmKC || k.mc != dgemmMC || k.direct != gemmDirectA || k.directB != gemmDirectB {
		return newDgemmKit()
	}
	return dgemmKitZ
}

var dgemmKitZ = newDgemmKit()

// newDgemmKit returns the float64 kit with the blocking set now.
func newDgemmKit() *gemmKit[float64] {
	return &gemmKit[float64]{mr: gemmMR, nr: dgemmNR, nb: 4 * dgemmNR, kc: dgemmKC, mc: dgemmMC, direct: gemmDirectA, directB: gemmDirectB,
		packA: packAGo[float64], packB: packBGo[float64], macro: dgemmMacroZ, bufs: &dgemmBufs}
}
