package cpu

import (
	"math"
	"runtime"
	"testing"
)

// TestPhiloxKnownAnswers checks Random123's published kat_vectors for
// philox4x32_10.
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := Philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("Philox4x32(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// streamWord is word i of the draw at (seed, offset), straight from the
// definition.
func streamWord(seed, offset uint64, i int) uint32 {
	j := offset + uint64(i/4)
	return Philox4x32([4]uint32{uint32(j), uint32(j >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})[i%4]
}

func TestRandomWordsStream(t *testing.T) {
	seed := uint64(0x0123456789abcdef)
	offset := uint64(1<<32 - 3) // the counter crosses into its high word
	for _, n := range []int{0, 1, 3, 4, 5, 7, 33, 65, 1<<16 + 3} {
		w := make([]uint32, n)
		RandomWords(w, seed, offset)
		for i := range w {
			if w[i] != streamWord(seed, offset, i) {
				t.Fatalf("n=%d: word %d = %08x, want %08x", n, i, w[i], streamWord(seed, offset, i))
			}
		}
		// Advancing the offset by BlocksNeeded continues the stream.
		if n >= 8 {
			rest := make([]uint32, n-8)
			RandomWords(rest, seed, offset+BlocksNeeded(8))
			for i := range rest {
				if rest[i] != w[8+i] {
					t.Fatalf("n=%d: offset+2 word %d differs", n, i)
				}
			}
		}
	}
	for n, want := range map[int]uint64{0: 0, 1: 1, 4: 1, 5: 2, 8: 2, 9: 3} {
		if BlocksNeeded(n) != want {
			t.Errorf("BlocksNeeded(%d) = %d, want %d", n, BlocksNeeded(n), want)
		}
	}
	// Different seeds give different streams.
	a, b := make([]uint32, 8), make([]uint32, 8)
	RandomWords(a, 1, 0)
	RandomWords(b, 2, 0)
	if a[0] == b[0] && a[1] == b[1] {
		t.Fatal("seeds 1 and 2 give the same words")
	}
}

// TestRandomParallelEqualsSerial checks that a fill split across
// goroutines is bitwise the serial fill, and that both match the
// per-element definition.
func TestRandomParallelEqualsSerial(t *testing.T) {
	n := 1<<17 + 5
	seed, offset := uint64(42), uint64(7)
	fill := func() ([]uint32, []float32, []float64, []float32, []float64) {
		w, u32, u64 := make([]uint32, n), make([]float32, n), make([]float64, n)
		n32, n64 := make([]float32, n), make([]float64, n)
		RandomWords(w, seed, offset)
		Uniform(u32, seed, offset, 0, 1)
		Uniform(u64, seed, offset, 0, 1)
		Normal(n32, seed, offset, 0, 1)
		Normal(n64, seed, offset, 0, 1)
		return w, u32, u64, n32, n64
	}
	prev := runtime.GOMAXPROCS(1)
	w1, a1, b1, c1, d1 := fill()
	runtime.GOMAXPROCS(max(prev, 2))
	w2, a2, b2, c2, d2 := fill()
	runtime.GOMAXPROCS(prev)
	for i := 0; i < n; i++ {
		if w1[i] != w2[i] || math.Float32bits(a1[i]) != math.Float32bits(a2[i]) || b1[i] != b2[i] ||
			math.Float32bits(c1[i]) != math.Float32bits(c2[i]) || math.Float64bits(d1[i]) != math.Float64bits(d2[i]) {
			t.Fatalf("element %d differs between serial and parallel fills", i)
		}
	}
	for i := 0; i < n; i += 997 {
		w := streamWord(seed, offset, i)
		u := float64(w>>8) / (1 << 24)
		if float64(a1[i]) != u || b1[i] != u {
			t.Fatalf("uniform %d = %v / %v, want %v", i, a1[i], b1[i], u)
		}
		k := i / 2 * 2
		u1 := float64(streamWord(seed, offset, k)>>8+1) / (1 << 24)
		u2 := float64(streamWord(seed, offset, k+1)>>8) / (1 << 24)
		r := math.Sqrt(-2 * math.Log(u1))
		want := r * math.Cos(2*math.Pi*u2)
		if i%2 == 1 {
			want = r * math.Sin(2*math.Pi*u2)
		}
		if math.Abs(d1[i]-want) > 1e-12 || math.Abs(float64(c1[i])-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("normal %d = %v / %v, want %v", i, c1[i], d1[i], want)
		}
	}
}

func moments(x []float64) (mean, variance, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		mean += v
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)), lo, hi
}

func TestUniformStatistics(t *testing.T) {
	n := 1 << 20
	for _, c := range []struct{ lo, hi float64 }{{0, 1}, {-3, 5}, {1, 2}} {
		x32, x64 := make([]float32, n), make([]float64, n)
		Uniform(x32, 123, 0, c.lo, c.hi)
		Uniform(x64, 123, 0, c.lo, c.hi)
		f := make([]float64, n)
		for i, v := range x32 {
			f[i] = float64(v)
		}
		for _, x := range [][]float64{f, x64} {
			mean, variance, lo, hi := moments(x)
			w := c.hi - c.lo
			// Standard errors: mean w/sqrt(12n), variance about w²/(sqrt(180 n)).
			if math.Abs(mean-(c.lo+c.hi)/2) > 5*w/math.Sqrt(12*float64(n)) {
				t.Errorf("[%v,%v): mean %v", c.lo, c.hi, mean)
			}
			if math.Abs(variance-w*w/12) > 5*w*w/math.Sqrt(180*float64(n)) {
				t.Errorf("[%v,%v): variance %v, want %v", c.lo, c.hi, variance, w*w/12)
			}
			if lo < c.lo || hi >= c.hi || lo > c.lo+w*1e-4 || hi < c.hi-w*1e-4 {
				t.Errorf("[%v,%v): range [%v, %v]", c.lo, c.hi, lo, hi)
			}
		}
		// 16 equal bins each get n/16 ± 5σ.
		var bins [16]int
		for _, v := range x64 {
			bins[int((v-c.lo)/(c.hi-c.lo)*16)]++
		}
		for b, k := range bins {
			e := float64(n) / 16
			if math.Abs(float64(k)-e) > 5*math.Sqrt(e) {
				t.Errorf("[%v,%v): bin %d has %d, want about %v", c.lo, c.hi, b, k, e)
			}
		}
	}
	// The largest word maps below hi even where lo + (hi-lo)·u rounds up.
	if v := uniformValue[float32](0xffffffff, 1, 1, 2, math.Nextafter32(2, 0)); v >= 2 {
		t.Fatalf("uniform of the top word on [1, 2) = %v", v)
	}
}

func TestNormalStatistics(t *testing.T) {
	n := 1 << 20
	for _, c := range []struct{ mean, std float64 }{{0, 1}, {3, 0.5}} {
		x32, x64 := make([]float32, n+1), make([]float64, n+1) // odd length
		Normal(x32, 99, 5, c.mean, c.std)
		Normal(x64, 99, 5, c.mean, c.std)
		f := make([]float64, n+1)
		for i, v := range x32 {
			f[i] = float64(v)
		}
		for _, x := range [][]float64{f, x64} {
			mean, variance, lo, hi := moments(x)
			if math.Abs(mean-c.mean) > 5*c.std/math.Sqrt(float64(n)) {
				t.Errorf("N(%v,%v): mean %v", c.mean, c.std, mean)
			}
			if math.Abs(variance-c.std*c.std) > 5*c.std*c.std*math.Sqrt(2/float64(n)) {
				t.Errorf("N(%v,%v): variance %v", c.mean, c.std, variance)
			}
			// u1 ≥ 2^-24 bounds |z| by sqrt(-2 ln 2^-24) ≈ 5.77.
			if lo < c.mean-5.8*c.std || hi > c.mean+5.8*c.std || math.IsNaN(mean) {
				t.Errorf("N(%v,%v): range [%v, %v]", c.mean, c.std, lo, hi)
			}
			within := 0
			for _, v := range x {
				if math.Abs(v-c.mean) <= c.std {
					within++
				}
			}
			if p := float64(within) / float64(len(x)); math.Abs(p-0.682689) > 0.003 {
				t.Errorf("N(%v,%v): %v within one sigma", c.mean, c.std, p)
			}
		}
	}
}
