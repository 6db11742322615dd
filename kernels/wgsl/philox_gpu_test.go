package wgsl_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// The counter offsets exercise the carry into the high word.
var philoxDraws = []struct {
	n            int
	seed, offset uint64
}{
	{1, 0, 0}, {7, 42, 3}, {65, 0xdeadbeefcafe, 0xfffffffe}, {1027, 1 << 40, 1<<32 - 100},
}

func TestPhiloxWordsGPU(t *testing.T) {
	g := openGPU(t)
	for _, d := range philoxDraws {
		out := wgsl.Layout{Shape: []int{d.n}, Strides: []int{1}, Offset: 1}
		k, err := wgsl.Philox("words", out, d.seed, d.offset, 0, 0, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": upload(t, g, make([]byte, 4*(d.n+2)))}
		run(t, g, k, b)
		got := bytesU32(read(t, g, b["out"]))
		want := make([]uint32, d.n)
		cpu.RandomWords(want, d.seed, d.offset)
		if got[0] != 0 || got[d.n+1] != 0 {
			t.Fatalf("n=%d: wrote outside the view", d.n)
		}
		for i := range want {
			if got[i+1] != want[i] {
				t.Fatalf("n=%d seed=%#x offset=%#x: word %d = %#x, want %#x", d.n, d.seed, d.offset, i, got[i+1], want[i])
			}
		}
	}
}

func TestPhiloxUniformGPU(t *testing.T) {
	g := openGPU(t)
	for _, rg := range []struct{ lo, hi float64 }{{0, 1}, {0, 3}, {-2, 3}, {-0.1, 0.7}} {
		for _, d := range philoxDraws {
			out := wgsl.Contiguous(d.n)
			k, err := wgsl.Philox("uniform", out, d.seed, d.offset, rg.lo, rg.hi, limits(g))
			if err != nil {
				t.Fatal(err)
			}
			b := bufs{"out": alloc(t, g, 4*d.n)}
			run(t, g, k, b)
			got := readF32(t, g, b["out"])
			want := make([]float32, d.n)
			cpu.Uniform(want, d.seed, d.offset, rg.lo, rg.hi)
			for i := range want {
				if got[i] < float32(rg.lo) || got[i] >= float32(rg.hi) {
					t.Fatalf("[%v, %v): [%d] = %v outside the range", rg.lo, rg.hi, i, got[i])
				}
				exact := rg.lo == 0
				if exact && got[i] != want[i] || math.Abs(float64(got[i]-want[i])) > 2.4e-7*math.Max(1, math.Abs(float64(want[i]))) {
					t.Fatalf("[%v, %v) n=%d: [%d] = %v, want %v", rg.lo, rg.hi, d.n, i, got[i], want[i])
				}
			}
		}
	}
}

func TestPhiloxNormalGPU(t *testing.T) {
	g := openGPU(t)
	maxErr := 0.0
	for _, d := range philoxDraws {
		out := wgsl.Contiguous(d.n)
		k, err := wgsl.Philox("normal", out, d.seed, d.offset, 0.5, 2, limits(g))
		if err != nil {
			t.Fatal(err)
		}
		b := bufs{"out": alloc(t, g, 4*d.n)}
		run(t, g, k, b)
		got := readF32(t, g, b["out"])
		want := make([]float32, d.n)
		cpu.Normal(want, d.seed, d.offset, 0.5, 2)
		for i := range want {
			e := math.Abs(float64(got[i] - want[i]))
			maxErr = math.Max(maxErr, e)
			if e > 2e-5 {
				t.Fatalf("n=%d: [%d] = %v, want %v", d.n, i, got[i], want[i])
			}
		}
	}
	t.Logf("normal: max |GPU - CPU| = %.3g (std 2)", maxErr)
}
