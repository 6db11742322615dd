package cpu

// gemmParallelK is the least K at which a product of m·n·k below
// gemmParallelBigWork is split across goroutines (with m·n·k at least
// gemmParallelWork): with a small K each output is a few FMAs, so the
// product's time is mostly storing C and the kernel's per-block work,
// and the split's fixed cost (waking a goroutine, packing the shared
// operand before either starts) is not repaid, unless C is large
// (gemmParallelOut). The MLP step's dy·W, 256×512×10, ran in about 17
// µs on one goroutine and 26 µs split in two with C in cache.
//
// Measured on two cores (go test -bench GemmSplit, abGemm, both operands
// row-major, 20 rounds, median GFLOP/s on one goroutine against two),
// with the machine otherwise quiet: 256×512 at k = 4 92 against 45, k =
// 10 157 against 109, k = 16 164 against 146, k = 32 186 against 249, k
// = 64 200 against 316; 256×1024×10 126 against 122, ×16 166 against
// 179, ×32 188 against 272; 1024×512 at k = 4 102 against 73, k = 10
// 136 against 133, k = 16 148 against 178, k = 32 177 against 261;
// 1024×1024 at k = 4 56 against 73, k = 10 119 against 163; 2048×512×4
// 94 against 76; 512×512×24 168 against 207. On a machine loaded by two
// other processes one goroutine won nearly every small-K shape, up to
// 2048×2048×32.
const gemmParallelK = 32

// gemmParallelBigWork is the m·n·k from which a product is split whatever
// its K, as before gemmParallelK: there the small-K products measured
// (see gemmParallelK) ran faster split, by 20 to 37%, and below it some
// ran slower.
const gemmParallelBigWork = 1 << 23

// gemmParallelOut is the size of C from which a product with K of at
// least gemmParallelMinK is split below gemmParallelK too: storing C
// is then most of its time, and in a program C comes cold from the
// allocator, where the measurements of gemmParallelK store a C that the
// previous run left in cache. The MLP step's dy·W, 256×512×10 (C of
// 512 KiB), split against on one goroutine, interleaved in one process
// (go test -bench Workloads/mlp_step's step, 80 rounds of 40 steps,
// median of the per-round ratios of the whole step, six runs, the first
// three with helpers that slept after 100 µs): 1.015, 1.009, 1.026,
// 1.019, 1.014, 1.029.
const (
	gemmParallelOut  = 1 << 17
	gemmParallelMinK = 8
)

// splitProduct reports whether one m×n×k product is split across
// goroutines.
func splitProduct(m, n, k int) bool {
	w := m * n * k
	return w >= gemmParallelWork && (k >= gemmParallelK || w >= gemmParallelBigWork || k >= gemmParallelMinK && m*n >= gemmParallelOut)
}

// A split cuts n into count blocks on multiples of unit, whose sizes
// differ by one unit at most (the last one possibly short of a unit).
type split struct{ n, unit, count, units int }

// splitFor returns the blocks that cut n for parts goroutines: of at most
// most (give or take a unit), in as few blocks as that allows when parts
// is 1, else in a number of blocks that is a multiple of parts and at
// least per a goroutine, so that the goroutines finish
// together, and block sizes as even as the unit allows: 256 rows in
// panels of six for two goroutines are eight blocks of five or six
// panels, not seven of six and one of a part of one, which left one
// goroutine 144 rows and the other 112.
func splitFor(n, parts, per, most, unit int) split {
	units := (n + unit - 1) / unit
	count := (n + most - 1) / most
	if parts > 1 {
		count = (max(count, per*parts) + parts - 1) / parts * parts
	}
	return split{n: n, unit: unit, count: min(count, units), units: units}
}

// block returns block u's bounds.
func (s split) block(u int) (lo, hi int) {
	return s.units * u / s.count * s.unit, min(s.n, s.units*(u+1)/s.count*s.unit)
}

// most returns the size of the largest block.
func (s split) most() int { return (s.units + s.count - 1) / s.count * s.unit }
