package tensor

import (
	"math"
	"sync"

	"github.com/tessera-ml/tessera/cpu"
)

// A Generator is a seeded source of random tensors. It draws from a
// counter-based generator (Philox4x32-10) whose stream is defined by
// element index, so the CPU and the GPU draw the same numbers for the
// same seed and shape. Each draw advances the generator's offset by the
// counter blocks it used, like PyTorch's Philox offset.
type Generator struct {
	mu     sync.Mutex
	seed   uint64
	offset uint64
}

// NewGenerator returns a generator seeded with seed.
func NewGenerator(seed uint64) *Generator { return &Generator{seed: seed} }

// defaultGen is the generator random functions use without WithGenerator.
var defaultGen = NewGenerator(0x5eed)

// ManualSeed reseeds the default generator, as torch.manual_seed.
func ManualSeed(seed uint64) { defaultGen.Seed(seed) }

// check panics with ErrArgument, naming op, for a nil Generator.
func (g *Generator) check(op string) {
	if g == nil {
		fail(op, ErrArgument, "the receiver is a nil *Generator; use NewGenerator or DefaultGenerator")
	}
}

// Seed resets g to seed with offset 0.
func (g *Generator) Seed(seed uint64) {
	g.check("Seed")
	g.mu.Lock()
	g.seed, g.offset = seed, 0
	g.mu.Unlock()
}

// State returns g's seed and the offset of its stream: what a checkpoint
// keeps to continue g's draws (see SetState).
func (g *Generator) State() (seed, offset uint64) {
	g.check("State")
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seed, g.offset
}

// SetState sets g's seed and stream offset, as State returned them: g
// then draws what the generator it was saved from would have drawn next.
func (g *Generator) SetState(seed, offset uint64) {
	g.check("SetState")
	g.mu.Lock()
	g.seed, g.offset = seed, offset
	g.mu.Unlock()
}

// DefaultGenerator returns the generator random functions use without
// WithGenerator (the one ManualSeed reseeds).
func DefaultGenerator() *Generator { return defaultGen }

// next reserves the stream positions for n elements.
func (g *Generator) next(n int) (seed, offset uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	seed, offset = g.seed, g.offset
	g.offset += cpu.BlocksNeeded(n)
	return seed, offset
}

func (o options) generator() *Generator {
	if o.gen != nil {
		return o.gen
	}
	return defaultGen
}

// random draws a float tensor: uniform in [a, b) or normal(a, b).
func random(op string, normal bool, shape []int, a, b float64, opts []Option) *Tensor {
	o := makeOptions(op, opts)
	if !o.dtype.IsFloat() {
		failf(op, ErrDType, nil, "%s draws floats; got dtype %v", op, o.dtype)
	}
	if o.dtype == Float32 && (!fitsFloat32(a) || !fitsFloat32(b) || !normal && !fitsFloat32(b-a)) {
		failf(op, ErrArgument, nil, "%s parameters %g, %g do not fit a Float32 result", op, a, b)
	}
	t := empty(op, shape, o)
	seed, offset := o.generator().next(t.Numel())
	backendOf(t.Device()).random(normal, t, seed, offset, a, b)
	return t
}

// fitsFloat32 reports whether v is NaN or lies within float32's range, so
// that a kernel computing in float32 sees the value the caller gave.
func fitsFloat32(v float64) bool { return !(math.Abs(v) > math.MaxFloat32) }

// Rand returns uniform samples in [0, 1).
func Rand(shape []int, opts ...Option) *Tensor { return random("Rand", false, shape, 0, 1, opts) }

// Uniform returns uniform samples in [lo, hi). It panics with
// ErrArgument unless lo <= hi, both finite, and, for a Float32 result,
// lo, hi and hi-lo within float32's range.
func Uniform(shape []int, lo, hi float64, opts ...Option) *Tensor {
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsInf(hi-lo, 0) {
		failf("Uniform", ErrArgument, nil, "expects a finite range [lo, hi) with lo <= hi, got lo=%g hi=%g", lo, hi)
	}
	return random("Uniform", false, shape, lo, hi, opts)
}

// Randn returns samples of the standard normal distribution.
func Randn(shape []int, opts ...Option) *Tensor { return random("Randn", true, shape, 0, 1, opts) }

// Normal returns samples of the normal distribution N(mean, std²). It
// panics with ErrArgument for a negative or NaN std, and for a Float32
// result when mean or std lies beyond float32's range.
func Normal(shape []int, mean, std float64, opts ...Option) *Tensor {
	if !(std >= 0) {
		failf("Normal", ErrArgument, nil, "expects std >= 0, got %g", std)
	}
	return random("Normal", true, shape, mean, std, opts)
}

// RandLike returns Rand with t's shape, dtype and device.
func RandLike(t *Tensor, opts ...Option) *Tensor {
	argsNonNil("RandLike", 1, t)
	return Rand(t.shape, like(t, opts)...)
}

// RandnLike returns Randn with t's shape, dtype and device.
func RandnLike(t *Tensor, opts ...Option) *Tensor {
	argsNonNil("RandnLike", 1, t)
	return Randn(t.shape, like(t, opts)...)
}

// RandInt returns integers drawn uniformly from [low, high), Int32 by
// default (PyTorch: int64), as torch.randint. Each integer is
// floor(u·(high-low)) + low for a uniform u with 24 random bits, so the
// range may hold at most 2²⁴ integers, and low and high must fit in
// Int32; otherwise RandInt panics with ErrArgument.
func RandInt(low, high int, shape []int, opts ...Option) *Tensor {
	switch {
	case high <= low:
		failf("RandInt", ErrArgument, nil, "empty range [%d, %d)", low, high)
	case low < math.MinInt32 || high-1 > math.MaxInt32:
		failf("RandInt", ErrArgument, nil, "range [%d, %d) does not fit in int32, Tessera's integer type", low, high)
	case high-low > 1<<24:
		failf("RandInt", ErrArgument, nil, "range [%d, %d) holds more than 2^24 integers (a uniform draw has 24 random bits)", low, high)
	}
	o := makeOptions("RandInt", append([]Option{Of(Int32)}, opts...))
	u := random("RandInt", false, shape, 0, 1, []Option{Of(Float32), On(o.device), In(o.ctx), WithGenerator(o.generator())})
	// floor(u·n) in float32 can round up to n for n near 2^24; clamp.
	n := float64(high - low)
	r := u.MulScalar(n).Cast(Int32).Clamp(0, n-1).AddScalar(float64(low))
	r.ref.s.setIndexRange(int64(low), int64(high-1), false) // the clamp's bounds: index ops need no device check
	return r.Cast(o.dtype)
}

// Bernoulli returns 1 with probability p and 0 otherwise, elementwise
// for a tensor of probabilities p, in p's dtype. It panics with
// ErrArgument when a probability lies outside [0, 1] or is NaN.
func Bernoulli(p *Tensor, opts ...Option) *Tensor {
	argsNonNil("Bernoulli", 1, p)
	p.storage("Bernoulli")
	if countTrue(p.GeScalar(0).LogicalAnd(p.LeScalar(1)).LogicalNot()) > 0 {
		fail("Bernoulli", ErrArgument, "probabilities must lie in [0, 1] (NaN does not)", p)
	}
	o := makeOptions("Bernoulli", like(p, opts))
	u := Rand(p.shape, Of(floatType(p.dtype)), On(p.Device()), In(o.ctx), WithGenerator(o.generator()))
	return u.Lt(p).Cast(p.dtype)
}

// countTrue returns the number of true elements of the Bool tensor b,
// reading one number back.
func countTrue(b *Tensor) int {
	if b.Numel() == 0 {
		return 0
	}
	return int(b.Sum().Item())
}

// Multinomial draws n category indices (Int32) per row of probs (1-D or
// 2-D non-negative weights, not necessarily normalised), as
// torch.multinomial. Without replacement, n may not exceed the number of
// categories; as in PyTorch, categories of zero weight are drawn, in
// index order, only after every category of positive weight. It panics
// with ErrArgument for a weight that is negative, NaN or infinite, and
// for a row whose weights are all zero.
func Multinomial(probs *Tensor, n int, replacement bool, opts ...Option) *Tensor {
	argsNonNil("Multinomial", 1, probs)
	probs.storage("Multinomial")
	if probs.Dim() < 1 || probs.Dim() > 2 {
		fail("Multinomial", ErrShape, "probabilities must be 1-D or 2-D", probs)
	}
	if n <= 0 {
		failf("Multinomial", ErrArgument, []*Tensor{probs}, "number of samples must be positive, got %d", n)
	}
	o := makeOptions("Multinomial", like(probs, opts))
	p := probs.Cast(floatType(probs.dtype)).Detach()
	squeeze := p.Dim() == 1
	if squeeze {
		p = p.Unsqueeze(0)
	}
	rows, k := p.shape[0], p.shape[1]
	if k == 0 {
		fail("Multinomial", ErrArgument, "cannot draw from zero categories", probs)
	}
	if countTrue(p.GeScalar(0).LogicalAnd(p.LtScalar(math.Inf(1))).LogicalNot()) > 0 {
		fail("Multinomial", ErrArgument, "probability tensor contains either inf, nan or element < 0", probs)
	}
	if countTrue(p.Sum(1).LeScalar(0)) > 0 {
		fail("Multinomial", ErrArgument, "invalid multinomial distribution (sum of probabilities <= 0)", probs)
	}
	if !replacement && n > k {
		failf("Multinomial", ErrArgument, []*Tensor{probs}, "cannot draw %d samples without replacement from %d categories", n, k)
	}
	var out *Tensor
	if replacement {
		// Inverse CDF: sample j of row r is the number of categories whose
		// cumulative weight is at most u·total.
		cdf := p.CumSum(1)             // (rows, k)
		total := cdf.Narrow(1, k-1, 1) // (rows, 1)
		u := Rand([]int{rows, n}, Of(p.dtype), On(p.Device()), In(o.ctx), WithGenerator(o.generator())).Mul(total)
		below := cdf.Unsqueeze(1).Le(u.Unsqueeze(2)) // (rows, n, k)
		out = below.Sum(2).Clamp(0, float64(k-1))    // Int32
	} else {
		// Gumbel-top-n: the n largest log p - log(-log U) are a sample
		// without replacement in draw order.
		u := Uniform([]int{rows, k}, math.SmallestNonzeroFloat32, 1, Of(p.dtype), On(p.Device()), In(o.ctx), WithGenerator(o.generator()))
		// Zero weights get a finite key far below every positive weight's
		// (log p >= -104 in float32), so they come last, without repeats;
		// drawn categories get -Inf.
		keys := p.Log().ClampMin(-1e30).Sub(u.Log().Neg().Log())
		cols := make([]*Tensor, n)
		for j := range cols {
			idx := keys.ArgMaxDim(1, true) // (rows, 1)
			cols[j] = idx
			keys = keys.ScatterAdd(1, idx, Full([]int{rows, 1}, math.Inf(-1), Like(keys)))
		}
		out = Cat(cols, 1)
	}
	if squeeze {
		out = out.Squeeze(0)
	}
	return out
}
