package cpu

import (
	"math"
	"math/bits"
	"unsafe"
)

// Random numbers come from a counter-based generator, Philox4x32-10, so
// that the stream is a pure function of (seed, offset, element index) and
// the GPU (a WGSL kernel) draws the very same numbers. The definition,
// which both implementations follow exactly:
//
//   - Block j of the stream for a seed is
//     Philox4x32({lo32(j), hi32(j), 0, 0}, {lo32(seed), hi32(seed)}),
//     four 32-bit words.
//   - A draw of n elements with (seed, offset) reads words 0..n-1 where
//     word i is word i%4 of block offset + i/4 (uint64 arithmetic,
//     wrapping). It consumes BlocksNeeded(n) blocks: the caller advances
//     its offset by that much before the next draw.
//   - Uniform: u_i = float(word_i >> 8) · 2⁻²⁴, exactly representable in
//     float32, in [0, 1). The result is lo + (hi-lo)·u_i computed in
//     float64 and rounded to T; a result that rounds up to hi is replaced
//     by the largest T below hi, so the range is [lo, hi). With lo = 0,
//     hi = 1 the result is u_i itself, bitwise equal on every device.
//   - Normal (Box–Muller on pairs): for k = i/2,
//     u1 = ((word_2k >> 8) + 1) · 2⁻²⁴ in (0, 1],
//     u2 = (word_2k+1 >> 8) · 2⁻²⁴, r = sqrt(-2 ln u1),
//     element 2k = mean + std·r·cos(2π u2), element 2k+1 = mean + std·r·sin(2π u2),
//     computed in float64 and rounded to T (the GPU computes in f32 and
//     agrees within float tolerance). An odd n still reads word n, which
//     lies in the last block.

// Philox constants (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11; Random123).
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// Philox4x32 is Philox4x32-10: 10 rounds of
//
//	hi0:lo0 = M0 · ctr[0], hi1:lo1 = M1 · ctr[2] (32×32 → 64-bit products)
//	ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
//
// with the key bumped by {0x9E3779B9, 0xBB67AE85} between rounds. It
// matches Random123's philox4x32_10.
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for r := 0; r < 10; r++ {
		if r > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		hi0, lo0 := bits.Mul32(philoxM0, c0)
		hi1, lo1 := bits.Mul32(philoxM1, c2)
		c0, c1, c2, c3 = hi1^c1^k0, lo1, hi0^c3^k1, lo0
	}
	return [4]uint32{c0, c1, c2, c3}
}

// philoxBlock returns block j of the stream for seed.
func philoxBlock(seed, j uint64) [4]uint32 {
	return Philox4x32([4]uint32{uint32(j), uint32(j >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

// BlocksNeeded returns how many 4-word counter blocks a draw of n
// elements consumes, ceil(n/4), for RandomWords, Uniform and Normal alike
// (Normal's pairs use consecutive words of the same blocks). The caller
// adds it to its offset.
func BlocksNeeded(n int) uint64 { return uint64((n + 3) / 4) }

// fillBlocks calls put(b, words) for the blocks 0..BlocksNeeded(n)-1 of a
// draw of n elements at (seed, offset), in parallel for large n; put
// writes the elements 4b..4b+3 that are below n. Chunks are independent
// because the stream is defined by index.
func fillBlocks(n int, seed, offset uint64, put func(b int, w [4]uint32)) {
	nb := int(BlocksNeeded(n))
	parallelFor(numWorkers(n), nb, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			put(b, philoxBlock(seed, offset+uint64(b)))
		}
	})
}

// RandomWords fills dst (length n) with words 0..n-1 of the draw at
// (seed, offset).
func RandomWords(dst []uint32, seed, offset uint64) {
	n := len(dst)
	fillBlocks(n, seed, offset, func(b int, w [4]uint32) {
		if i := 4 * b; i+4 <= n {
			copy(dst[i:i+4], w[:])
		} else {
			copy(dst[i:], w[:n-i])
		}
	})
}

// uniform01 maps a word to [0, 1) with 24 random bits.
func uniform01(w uint32) float64 { return float64(w>>8) * 0x1p-24 }

// Uniform fills dst (length n) with the uniform draw at (seed, offset) on
// [lo, hi): element i = lo + (hi-lo)·u_i with u_i = (word_i >> 8)·2⁻²⁴;
// see the stream definition above.
func Uniform[T Float](dst []T, seed, offset uint64, lo, hi float64) {
	n := len(dst)
	top := T(hi)
	below := T(math.Nextafter(float64(top), math.Inf(-1)))
	if isF32[T]() {
		below = T(math.Nextafter32(float32(top), float32(math.Inf(-1))))
	}
	span := hi - lo
	fillBlocks(n, seed, offset, func(b int, w [4]uint32) {
		for j := 0; j < 4; j++ {
			i := 4*b + j
			if i >= n {
				return
			}
			dst[i] = uniformValue(w[j], lo, span, top, below)
		}
	})
}

// uniformValue maps a word to lo + span·u in T, kept below top (hi in T)
// by replacing a result that rounds up to top with below.
func uniformValue[T Float](w uint32, lo, span float64, top, below T) T {
	v := T(lo + span*uniform01(w))
	if v >= top && span > 0 {
		v = below
	}
	return v
}

// Normal fills dst (length n) with the normal draw at (seed, offset) with
// the given mean and standard deviation, by Box–Muller on word pairs; see
// the stream definition above.
func Normal[T Float](dst []T, seed, offset uint64, mean, std float64) {
	n := len(dst)
	fillBlocks(n, seed, offset, func(b int, w [4]uint32) {
		for j := 0; j < 4; j += 2 {
			i := 4*b + j
			if i >= n {
				return
			}
			u1 := float64((w[j]>>8)+1) * 0x1p-24
			u2 := uniform01(w[j+1])
			r := math.Sqrt(-2 * math.Log(u1))
			s, c := math.Sincos(2 * math.Pi * u2)
			dst[i] = T(mean + std*r*c)
			if i+1 < n {
				dst[i+1] = T(mean + std*r*s)
			}
		}
	})
}

// isF32 reports whether T is 4 bytes wide (float32 underneath).
func isF32[T Float]() bool { return unsafe.Sizeof(T(0)) == 4 }
