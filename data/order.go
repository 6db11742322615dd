package data

import (
	"math/bits"
	"math/rand/v2"
)

// Permutation returns the order in which a shuffling Loader with the
// given seed visits n examples in epoch: a permutation of 0..n-1 that is
// a pure function of (seed, epoch, n), the same on every machine and Go
// release.
//
// The generator is PCG-DXSM with 128 bits of state (math/rand/v2's PCG,
// whose algorithm is fixed) seeded with (seed, epoch). The shuffle is
// Fisher–Yates from the last position down: for i = n-1 … 1, swap i with
// j drawn uniformly from 0..i by Lemire's multiply-and-reject method on
// the generator's 64-bit outputs.
func Permutation(seed uint64, epoch, n int) []int {
	p := identity(n)
	r := rand.NewPCG(seed, uint64(epoch))
	for i := n - 1; i > 0; i-- {
		j := uniform(r, uint64(i)+1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// identity returns 0, 1, …, n-1.
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// uniform returns a number drawn uniformly from 0..n-1 (n > 0) by
// Lemire's method: the high word of a 64×64-bit product, rejecting the
// few low words that would bias it.
func uniform(r *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// unit returns a float64 drawn uniformly from [0, 1): the top 53 bits of
// one 64-bit output, scaled.
func unit(r *rand.PCG) float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Streams of the generators that data sets draw from, so that a dataset
// and a Loader with the same seed draw independent numbers.
const (
	streamRamp        = 1<<63 | 1
	streamDelay       = 1<<63 | 2
	streamRaggedDelay = 1<<63 | 3
)
