package cpu

// gemmParallelK is the least K at which a product of m·n·k below
// gemmParallelBigWork is split across goroutines (with m·n·k at least
// gemmParallelWork): with a small K each output is a few FMAs, so the
// product's time is mostly storing C and the kernel's per-block work,
// and the split's fixed cost (waking a goroutine, packing the shared
// operand before either starts) is not repaid. The MLP step's dy·W,
// 256×512×10, ran in about 17 µs on one goroutine and 26 µs split in
// two. Measured on two cores (go test -bench GemmSplit, abGemm, both
// operands row-major, 20 or 30 rounds, median GFLOP/s one goroutine vs
// two, on a machine loaded by two other processes): at k = 2..16 and m,
// n ∈ {256, 512, 1024} × {128, 512, 1024}, one goroutine was as fast or
// faster in 26 of 30 shapes (256×512×10 158 vs 102 and 154 vs 54,
// 512×512×16 135 vs 128 and 157 vs 81); at k = 32 two won three shapes
// of nine (256×512×32 234 vs 184, 512×512×32 248 vs 183).
const gemmParallelK = 32

// gemmParallelBigWork is the m·n·k from which a product is split whatever
// its K, as before gemmParallelK: about 100 µs and more of one core's
// work at a small K, against a split's cost of a few µs.
const gemmParallelBigWork = 1 << 24

// splitProduct reports whether one m×n×k product is split across
// goroutines.
func splitProduct(m, n, k int) bool {
	w := m * n * k
	return w >= gemmParallelWork && (k >= gemmParallelK || w >= gemmParallelBigWork)
}
