package tensor_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/tensor"
)

// Random ops cannot match PyTorch's numbers, so they are tested
// statistically (moments within 5 standard errors of 1e5 samples,
// ranges, frequencies by chi-square), for reproducibility, and against
// the definition of the Philox stream that the GPU reproduces bitwise.

const nSamples = 100_000

// moments returns the mean, variance, skewness and excess kurtosis of xs.
func moments(xs []float64) (mean, variance, skew, kurt float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var m2, m3, m4 float64
	for _, x := range xs {
		d := x - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	m2, m3, m4 = m2/n, m3/n, m4/n
	return mean, m2, m3 / math.Pow(m2, 1.5), m4/(m2*m2) - 3
}

// within fails t unless |got-want| <= 5 standard errors se.
func within(t *testing.T, what string, got, want, se float64) {
	t.Helper()
	if math.Abs(got-want) > 5*se {
		t.Errorf("%s = %.6g, want %.6g ± %.3g (5 standard errors)", what, got, want, 5*se)
	}
}

// chiSquare returns Σ (observed-expected)²/expected over categories.
func chiSquare(counts []int, probs []float64, n int) float64 {
	var x2 float64
	for i, c := range counts {
		e := probs[i] * float64(n)
		x2 += (float64(c) - e) * (float64(c) - e) / e
	}
	return x2
}

// chiSquareLimit is a generous bound for a chi-square statistic with df
// degrees of freedom: mean df, standard deviation √(2df); df + 8√(2df)
// + 10 is exceeded with probability below 1e-5 for every df here.
func chiSquareLimit(df int) float64 { return float64(df) + 8*math.Sqrt(2*float64(df)) + 10 }

func TestRandUniformMoments(t *testing.T) {
	tensor.ManualSeed(11)
	for _, c := range []struct {
		name   string
		lo, hi float64
		dt     tensor.DType
		draw   func(opts ...tensor.Option) *tensor.Tensor
	}{
		{"Rand/float32", 0, 1, tensor.Float32, func(o ...tensor.Option) *tensor.Tensor { return tensor.Rand([]int{nSamples}, o...) }},
		{"Rand/float64", 0, 1, tensor.Float64, func(o ...tensor.Option) *tensor.Tensor { return tensor.Rand([]int{nSamples}, o...) }},
		{"Uniform/float32", -2, 3, tensor.Float32, func(o ...tensor.Option) *tensor.Tensor {
			return tensor.Uniform([]int{100, 1000}, -2, 3, o...)
		}},
		{"Uniform/float64", 10, 10.5, tensor.Float64, func(o ...tensor.Option) *tensor.Tensor {
			return tensor.Uniform([]int{nSamples}, 10, 10.5, o...)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := c.draw(tensor.Of(c.dt))
			if x.DType() != c.dt {
				t.Fatalf("dtype %v, want %v", x.DType(), c.dt)
			}
			xs := x.Float64s()
			if lo, hi := slices.Min(xs), slices.Max(xs); lo < c.lo || hi >= c.hi {
				t.Errorf("samples span [%g, %g], want inside [%g, %g)", lo, hi, c.lo, c.hi)
			}
			w := c.hi - c.lo
			mean, variance, skew, _ := moments(xs)
			n := float64(len(xs))
			within(t, "mean", mean, (c.lo+c.hi)/2, w/math.Sqrt(12*n))
			// Var of (U-μ)² is w⁴(1/80 - 1/144).
			within(t, "variance", variance, w*w/12, w*w*math.Sqrt((1.0/80-1.0/144)/n))
			within(t, "skewness", skew, 0, math.Sqrt(6/n))
		})
	}
}

func TestRandnNormalMoments(t *testing.T) {
	tensor.ManualSeed(12)
	for _, c := range []struct {
		name      string
		mean, std float64
		n         int
		dt        tensor.DType
	}{
		{"Randn/float32", 0, 1, nSamples, tensor.Float32},
		{"Randn/float64/odd", 0, 1, nSamples + 1, tensor.Float64},
		{"Normal/float32", 3, 2, nSamples, tensor.Float32},
		{"Normal/float64", -1, 0.01, nSamples, tensor.Float64},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x *tensor.Tensor
			if c.mean == 0 && c.std == 1 {
				x = tensor.Randn([]int{c.n}, tensor.Of(c.dt))
			} else {
				x = tensor.Normal([]int{c.n}, c.mean, c.std, tensor.Of(c.dt))
			}
			if x.DType() != c.dt || x.Numel() != c.n {
				t.Fatalf("got %v %v, want %v [%d]", x.DType(), x.Shape(), c.dt, c.n)
			}
			xs := x.Float64s()
			n := float64(len(xs))
			mean, variance, skew, kurt := moments(xs)
			within(t, "mean", mean, c.mean, c.std/math.Sqrt(n))
			within(t, "variance", variance, c.std*c.std, c.std*c.std*math.Sqrt(2/n))
			within(t, "skewness", skew, 0, math.Sqrt(6/n))
			within(t, "excess kurtosis", kurt, 0, math.Sqrt(24/n))
			inside := 0
			for _, v := range xs {
				if math.Abs(v-c.mean) < c.std {
					inside++
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite sample %g", v)
				}
			}
			p := math.Erf(1 / math.Sqrt2) // P(|Z| < 1) ≈ 0.6827
			within(t, "P(|x-mean| < std)", float64(inside)/n, p, math.Sqrt(p*(1-p)/n))
		})
	}
}

func TestRandIntFrequencies(t *testing.T) {
	tensor.ManualSeed(13)
	const lo, hi = -3, 7
	x := tensor.RandInt(lo, hi, []int{nSamples})
	if x.DType() != tensor.Int32 {
		t.Fatalf("RandInt dtype %v, want int32 (PyTorch's int64)", x.DType())
	}
	counts := make([]int, hi-lo)
	for _, v := range x.Int32s() {
		if v < lo || v >= hi {
			t.Fatalf("RandInt(%d, %d) drew %d", lo, hi, v)
		}
		counts[v-lo]++
	}
	probs := make([]float64, hi-lo)
	for i := range probs {
		probs[i] = 1.0 / (hi - lo)
	}
	if x2 := chiSquare(counts, probs, nSamples); x2 > chiSquareLimit(hi-lo-1) {
		t.Errorf("RandInt frequencies %v: chi-square %.1f exceeds %.1f", counts, x2, chiSquareLimit(hi-lo-1))
	}

	// Of changes the dtype; a one-integer range always draws it.
	f := tensor.RandInt(5, 6, []int{3, 4}, tensor.Of(tensor.Float64))
	if f.DType() != tensor.Float64 || !slices.Equal(f.Shape(), []int{3, 4}) {
		t.Fatalf("RandInt with Of(Float64): %v %v", f.DType(), f.Shape())
	}
	for _, v := range f.Float64s() {
		if v != 5 {
			t.Fatalf("RandInt(5, 6) drew %g", v)
		}
	}

	// The widest range allowed: 2^24 integers.
	w := tensor.RandInt(0, 1<<24, []int{1000}).Int32s()
	if slices.Min(w) < 0 || slices.Max(w) >= 1<<24 {
		t.Fatalf("RandInt(0, 2^24) drew outside the range: [%d, %d]", slices.Min(w), slices.Max(w))
	}
}

func TestRandomBernoulli(t *testing.T) {
	tensor.ManualSeed(14)
	const p = 0.3
	x := tensor.Bernoulli(tensor.Full([]int{nSamples}, p))
	if x.DType() != tensor.Float32 {
		t.Fatalf("Bernoulli dtype %v, want the probabilities' float32", x.DType())
	}
	ones := 0
	for _, v := range x.Float32s() {
		switch v {
		case 1:
			ones++
		case 0:
		default:
			t.Fatalf("Bernoulli drew %g", v)
		}
	}
	within(t, "frequency of 1", float64(ones)/nSamples, p, math.Sqrt(p*(1-p)/nSamples))

	// Per-element probabilities; 0 and 1 are certain.
	probs := tensor.New([]float64{0, 1, 0.5, 0}, 1, 4).Expand(nSamples/4, 4).Contiguous()
	b := tensor.Bernoulli(probs)
	if b.DType() != tensor.Float64 {
		t.Fatalf("Bernoulli of float64 probabilities gave %v", b.DType())
	}
	cols := b.Sum(0).Float64s()
	if cols[0] != 0 || cols[3] != 0 || cols[1] != nSamples/4 {
		t.Errorf("certain probabilities 0, 1, 0 drew %v ones of %d", cols, nSamples/4)
	}
	within(t, "frequency at p=0.5", cols[2]/(nSamples/4), 0.5, math.Sqrt(0.25/(nSamples/4)))
}

func TestRandomMultinomialWithReplacement(t *testing.T) {
	tensor.ManualSeed(15)
	weights := []float32{1, 2, 0, 3, 4} // unnormalised, with a zero
	x := tensor.Multinomial(tensor.New(weights), nSamples, true)
	if x.DType() != tensor.Int32 || !slices.Equal(x.Shape(), []int{nSamples}) {
		t.Fatalf("Multinomial of 1-D weights: %v %v, want int32 [%d]", x.DType(), x.Shape(), nSamples)
	}
	counts := make([]int, len(weights))
	for _, v := range x.Int32s() {
		counts[v]++
	}
	if counts[2] != 0 {
		t.Fatalf("a category of weight 0 was drawn %d times", counts[2])
	}
	nz := []int{counts[0], counts[1], counts[3], counts[4]}
	if x2 := chiSquare(nz, []float64{0.1, 0.2, 0.3, 0.4}, nSamples); x2 > chiSquareLimit(3) {
		t.Errorf("frequencies %v for weights %v: chi-square %.1f exceeds %.1f", counts, weights, x2, chiSquareLimit(3))
	}

	// 2-D: each row draws from its own distribution.
	rows := tensor.New([]float64{0, 0, 1, 1, 1, 0, 1, 0, 0}, 3, 3)
	y := tensor.Multinomial(rows, 1000, true)
	if !slices.Equal(y.Shape(), []int{3, 1000}) {
		t.Fatalf("Multinomial of 3 rows, 1000 samples: shape %v", y.Shape())
	}
	r := y.Int32s()
	for j := range 1000 {
		if r[j] != 2 || (r[1000+j] != 0 && r[1000+j] != 1) {
			t.Fatalf("row draws (%d, %d) outside their support", r[j], r[1000+j])
		}
		if r[2000+j] != 0 {
			t.Fatalf("a one-hot row at 0 drew %d", r[2000+j])
		}
	}
}

func TestRandomMultinomialWithoutReplacement(t *testing.T) {
	tensor.ManualSeed(16)
	p := []float64{0.1, 0.2, 0.3, 0.4}
	const rows = 40_000
	probs := tensor.New([]float32{1, 2, 3, 4}, 1, 4).Expand(rows, 4).Contiguous()
	x := tensor.Multinomial(probs, 4, false)
	if !slices.Equal(x.Shape(), []int{rows, 4}) {
		t.Fatalf("shape %v, want [%d 4]", x.Shape(), rows)
	}
	draws := x.Int32s()
	first, second := make([]int, 4), make([]int, 4)
	for r := range rows {
		row := draws[4*r : 4*r+4]
		seen := [4]bool{}
		for _, v := range row {
			if seen[v] {
				t.Fatalf("row %d repeats a category: %v", r, row)
			}
			seen[v] = true
		}
		first[row[0]]++
		second[row[1]]++
	}
	// The first draw follows p; the second P(j) = Σ_{i≠j} p_i p_j/(1-p_i).
	want2 := make([]float64, 4)
	for j := range p {
		for i := range p {
			if i != j {
				want2[j] += p[i] * p[j] / (1 - p[i])
			}
		}
	}
	if x2 := chiSquare(first, p, rows); x2 > chiSquareLimit(3) {
		t.Errorf("first draws %v: chi-square %.1f exceeds %.1f", first, x2, chiSquareLimit(3))
	}
	if x2 := chiSquare(second, want2, rows); x2 > chiSquareLimit(3) {
		t.Errorf("second draws %v, want proportions %.4f: chi-square %.1f exceeds %.1f", second, want2, x2, chiSquareLimit(3))
	}

	// As in PyTorch, zero weights come after the positive ones, in index
	// order, never repeated: torch.multinomial(tensor([1., 0, 0]), 3) is
	// [0, 1, 2].
	if got := tensor.Multinomial(tensor.New([]float32{1, 0, 0}), 3, false).Int32s(); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Errorf("Multinomial([1 0 0], 3) = %v, want [0 1 2]", got)
	}
	got := tensor.Multinomial(tensor.New([]float32{0, 5, 0, 1}), 4, false).Int32s()
	if pos := []int32{got[0], got[1]}; !slices.Contains(pos, 1) || !slices.Contains(pos, 3) || got[2] != 0 || got[3] != 2 {
		t.Errorf("Multinomial([0 5 0 1], 4) = %v, want {1, 3} then 0, 2", got)
	}
}

func TestRandomManualSeedReproducible(t *testing.T) {
	tensor.ManualSeed(42)
	a := tensor.Rand([]int{100}).Float32s()
	b := tensor.Rand([]int{100}).Float32s()
	n1 := tensor.Randn([]int{7}).Float32s()
	tensor.ManualSeed(42)
	a2 := tensor.Rand([]int{100}).Float32s()
	b2 := tensor.Rand([]int{100}).Float32s()
	n2 := tensor.Randn([]int{7}).Float32s()
	if !slices.Equal(a, a2) || !slices.Equal(b, b2) || !slices.Equal(n1, n2) {
		t.Fatal("the same seed drew different numbers")
	}
	if slices.Equal(a, b) {
		t.Fatal("two draws after one seed are equal: the offset did not advance")
	}
	tensor.ManualSeed(43)
	if slices.Equal(tensor.Rand([]int{100}).Float32s(), a) {
		t.Fatal("seeds 42 and 43 drew the same numbers")
	}
}

func TestRandomWithGeneratorIsIndependent(t *testing.T) {
	tensor.ManualSeed(7)
	want := tensor.Rand([]int{16}).Float32s()
	tensor.ManualSeed(7)
	g := tensor.NewGenerator(7)
	fromG := tensor.Rand([]int{16}, tensor.WithGenerator(g)).Float32s()
	tensor.Randn([]int{9}, tensor.WithGenerator(g))
	tensor.RandInt(0, 3, []int{5}, tensor.WithGenerator(g))
	tensor.Multinomial(tensor.Ones([]int{4}), 2, false, tensor.WithGenerator(g))
	tensor.Bernoulli(tensor.Full([]int{3}, 0.5), tensor.WithGenerator(g))
	if got := tensor.Rand([]int{16}).Float32s(); !slices.Equal(got, want) {
		t.Fatal("draws from another generator moved the default generator")
	}
	if !slices.Equal(fromG, want) {
		t.Fatal("a generator and the default one with the same seed drew differently")
	}
	// Seed restarts a generator.
	g.Seed(7)
	if got := tensor.Rand([]int{16}, tensor.WithGenerator(g)).Float32s(); !slices.Equal(got, want) {
		t.Fatal("Seed did not restart the generator's stream")
	}
}

// The stream definition the GPU reproduces bitwise (cpu/philox.go): Rand
// element i of a draw at (seed, offset) is (word_i >> 8)·2⁻²⁴, with the
// words of cpu.RandomWords, and each draw advances the offset by
// cpu.BlocksNeeded(n) blocks of four words.
func TestRandMatchesPhiloxStream(t *testing.T) {
	const seed = 0xDEADBEEFCAFE
	g := tensor.NewGenerator(seed)
	offset := uint64(0)
	for _, n := range []int{1, 5, 1001, 4, 0, 37} {
		got := tensor.Rand([]int{n}, tensor.WithGenerator(g)).Float32s()
		words := make([]uint32, n)
		cpu.RandomWords(words, seed, offset)
		for i, w := range words {
			if want := float32(w>>8) * 0x1p-24; math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("draw of %d at offset %d: element %d = %v, want (word>>8)·2⁻²⁴ = %v", n, offset, i, got[i], want)
			}
		}
		offset += cpu.BlocksNeeded(n)
	}

	// Float64 Rand draws the same 24-bit values, exactly.
	g.Seed(seed)
	words := make([]uint32, 12) // three blocks: an odd Randn reads one word past n
	cpu.RandomWords(words, seed, 0)
	for i, v := range tensor.Rand([]int{3, 3}, tensor.Of(tensor.Float64), tensor.WithGenerator(g)).Float64s() {
		if want := float64(words[i]>>8) * 0x1p-24; v != want {
			t.Fatalf("float64 Rand element %d = %v, want %v", i, v, want)
		}
	}

	// Uniform(lo, hi) is lo + (hi-lo)·u in float64, rounded to float32.
	g.Seed(seed)
	for i, v := range tensor.Uniform([]int{9}, -2, 5, tensor.WithGenerator(g)).Float32s() {
		if want := float32(-2 + 7*float64(words[i]>>8)*0x1p-24); v != want {
			t.Fatalf("Uniform element %d = %v, want %v", i, v, want)
		}
	}

	// Randn: Box–Muller on word pairs, computed in float64.
	g.Seed(seed)
	for i, v := range tensor.Randn([]int{9}, tensor.Of(tensor.Float64), tensor.WithGenerator(g)).Float64s() {
		k := i &^ 1
		u1 := float64((words[k]>>8)+1) * 0x1p-24
		u2 := float64(words[k+1]>>8) * 0x1p-24
		r := math.Sqrt(-2 * math.Log(u1))
		want := r * math.Cos(2*math.Pi*u2)
		if i&1 == 1 {
			want = r * math.Sin(2*math.Pi*u2)
		}
		if math.Abs(v-want) > 1e-12 {
			t.Fatalf("Randn element %d = %v, want %v", i, v, want)
		}
	}
}

func TestRandomMisuse(t *testing.T) {
	cases := []struct {
		name string
		kind error
		f    func()
	}{
		{"Rand of int32", tensor.ErrDType, func() { tensor.Rand([]int{2}, tensor.Of(tensor.Int32)) }},
		{"Randn of bool", tensor.ErrDType, func() { tensor.Randn([]int{2}, tensor.Of(tensor.Bool)) }},
		{"Rand of a negative shape", tensor.ErrShape, func() { tensor.Rand([]int{2, -1}) }},
		{"Uniform with lo > hi", tensor.ErrArgument, func() { tensor.Uniform([]int{2}, 1, 0) }},
		{"Uniform with NaN", tensor.ErrArgument, func() { tensor.Uniform([]int{2}, math.NaN(), 1) }},
		{"Normal with std < 0", tensor.ErrArgument, func() { tensor.Normal([]int{2}, 0, -1) }},
		{"RandInt of an empty range", tensor.ErrArgument, func() { tensor.RandInt(5, 5, []int{2}) }},
		{"RandInt of a range over 2^24", tensor.ErrArgument, func() { tensor.RandInt(0, 1<<24+1, []int{2}) }},
		{"RandInt beyond int32", tensor.ErrArgument, func() { tensor.RandInt(1<<31, 1<<31+2, []int{2}) }},
		{"Bernoulli with p > 1", tensor.ErrArgument, func() { tensor.Bernoulli(tensor.New([]float32{0.5, 1.5})) }},
		{"Bernoulli with p < 0", tensor.ErrArgument, func() { tensor.Bernoulli(tensor.New([]float32{-0.1})) }},
		{"Multinomial with a negative weight", tensor.ErrArgument, func() { tensor.Multinomial(tensor.New([]float32{1, -1}), 1, true) }},
		{"Multinomial with a zero row", tensor.ErrArgument, func() { tensor.Multinomial(tensor.Zeros([]int{2, 3}), 1, true) }},
		{"Multinomial of 0 samples", tensor.ErrArgument, func() { tensor.Multinomial(tensor.Ones([]int{3}), 0, true) }},
		{"Multinomial of more than k without replacement", tensor.ErrArgument, func() { tensor.Multinomial(tensor.Ones([]int{3}), 4, false) }},
		{"Multinomial of 3-D weights", tensor.ErrShape, func() { tensor.Multinomial(tensor.Ones([]int{2, 2, 2}), 1, true) }},
	}
	for _, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want an *Error wrapping %v", c.name, err, c.kind)
		}
	}
}
