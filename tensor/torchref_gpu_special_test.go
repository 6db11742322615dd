package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestGPUSpecialValues checks PyTorch's NaN and infinity semantics on the
// GPU with rows longer than a workgroup (the reference cases are small,
// so they never reach a reduction's second stage): NaN propagates
// through max, min, amax, sum, cumsum, logsumexp and softmax, and argmax
// and argmin point at the first NaN; a softmax row of -inf is NaN, one
// with +inf NaN where torch gives NaN; sign(NaN) is 0. Every result is
// compared with the CPU's (which follows PyTorch): NaN, ±Inf and integers
// exactly, finite values as TestTorchRefGPU* do for reductions. A few
// of PyTorch's answers are asserted outright as well.
func TestGPUSpecialValues(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	nan, inf := math.NaN(), math.Inf(1)
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{7, 300, 1000, 4099} {
		// Rows: a NaN late, all -inf, one +inf, some -inf, NaN first
		// among +inf, NaN and -inf, plain values.
		const rows = 7
		x := make([]float64, rows*n)
		for i := range x {
			x[i] = r.NormFloat64() * 3
		}
		row := func(i int) []float64 { return x[i*n : (i+1)*n] }
		row(0)[n-2] = nan
		for j := range row(1) {
			row(1)[j] = -inf
		}
		row(2)[n/2] = inf
		for j := 0; j < n; j += 3 {
			row(3)[j] = -inf
		}
		row(4)[0] = nan
		row(4)[n-1] = inf
		row(5)[n/3] = nan
		row(5)[n/3+1] = -inf
		name := fmt.Sprintf("%dx%d", rows, n)
		t.Run(name, func(t *testing.T) {
			cpuX := tensor.New(x, rows, n).Cast(tensor.Float32)
			gpuX := cpuX.To(gpu)
			type result = []*tensor.Tensor
			ops := []struct {
				name string
				f    func(x *tensor.Tensor) result
			}{
				{"Softmax(1)", func(x *tensor.Tensor) result { return result{x.Softmax(1)} }},
				{"LogSoftmax(1)", func(x *tensor.Tensor) result { return result{x.LogSoftmax(1)} }},
				{"Softmax(0) of the transpose", func(x *tensor.Tensor) result { return result{x.T().Softmax(0)} }},
				{"MaxDim(1)", func(x *tensor.Tensor) result { v, i := x.MaxDim(1, false); return result{v, i} }},
				{"MinDim(1)", func(x *tensor.Tensor) result { v, i := x.MinDim(1, false); return result{v, i} }},
				{"ArgMaxDim(1)", func(x *tensor.Tensor) result { return result{x.ArgMaxDim(1, false)} }},
				{"ArgMinDim(1)", func(x *tensor.Tensor) result { return result{x.ArgMinDim(1, false)} }},
				{"Amax(1)", func(x *tensor.Tensor) result { return result{x.Amax([]int{1}, false)} }},
				{"Amin(1)", func(x *tensor.Tensor) result { return result{x.Amin([]int{1}, false)} }},
				{"Sum(1)", func(x *tensor.Tensor) result { return result{x.Sum(1)} }},
				{"CumSum(1)", func(x *tensor.Tensor) result { return result{x.CumSum(1)} }},
				{"LogSumExp(1)", func(x *tensor.Tensor) result { return result{x.LogSumExp([]int{1}, false)} }},
				{"Max, Min, ArgMax, ArgMin of row 0 and rows 2-3", func(x *tensor.Tensor) result {
					a, b := x.Narrow(0, 2, 2), x.Narrow(0, 0, 1)
					return result{b.Max(), b.Min(), b.ArgMax(), b.ArgMin(), a.Max(), a.Min(), a.ArgMax(), a.ArgMin(), x.Sum()}
				}},
				{"Sign, ReLU, Clamp", func(x *tensor.Tensor) result {
					return result{x.Sign(), x.ReLU(), x.Clamp(-1, 1), x.Maximum(x.T().T().Neg())}
				}},
			}
			for _, op := range ops {
				g, c := op.f(gpuX), op.f(cpuX)
				for i := range c {
					what := fmt.Sprintf("%s: result %d", op.name, i)
					if g[i].Device() != gpu {
						t.Errorf("%s is on %v", what, g[i].Device())
					}
					tl := tolerance{rtol: 32 * 0x1p-23, abs: 4 * 0x1p-23 * float64(n)}
					compareGPUCPU(t, what, toHost(g[i]), toHost(c[i]), tl, op.name, &gpuFamilyStats{cpu: map[string]float64{}})
				}
			}
			// PyTorch's answers.
			sm := gpuX.Softmax(1).Float64s()
			am := gpuX.ArgMaxDim(1, false).Int32s()
			mx, _ := gpuX.MaxDim(1, false)
			mxv := mx.Float64s()
			for j := 0; j < n; j++ {
				if !math.IsNaN(sm[j]) || !math.IsNaN(sm[n+j]) || !math.IsNaN(sm[4*n+j]) {
					t.Fatalf("softmax of a row with NaN or of all -inf is not all NaN: %v %v %v", sm[j], sm[n+j], sm[4*n+j])
				}
			}
			if am[0] != int32(n-2) || am[4] != 0 || am[5] != int32(n/3) || am[2] != int32(n/2) {
				t.Errorf("argmax = %v, want the first NaN or the +Inf: %d, 0, %d, %d", am, n-2, n/3, n/2)
			}
			if !math.IsNaN(mxv[0]) || !math.IsNaN(mxv[4]) || !math.IsInf(mxv[2], 1) || !math.IsInf(mxv[1], -1) {
				t.Errorf("max = %v", mxv)
			}
			if s := gpuX.Sign().Float64s(); s[n-2] != 0 {
				t.Errorf("sign(NaN) = %v, want 0", s[n-2])
			}
		})
	}
	// A whole-tensor reduction over several workgroups: the NaN and the
	// +Inf sit where only the second stage sees them together.
	n := 70001
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, at := range []int{5, 40000, n - 1} {
		y := slices.Clone(x)
		y[at] = float32(nan)
		y[at/2] = float32(inf)
		c, g := tensor.New(y), tensor.New(y).To(gpu)
		for _, f := range []func(*tensor.Tensor) *tensor.Tensor{(*tensor.Tensor).Max, (*tensor.Tensor).Min, (*tensor.Tensor).ArgMax, (*tensor.Tensor).ArgMin} {
			if gv, cv := f(g).Item(), f(c).Item(); !(gv == cv || math.IsNaN(gv) && math.IsNaN(cv)) {
				t.Errorf("NaN at %d of %d: GPU %v, CPU %v", at, n, gv, cv)
			}
		}
		if i := g.ArgMax().Item(); i != float64(at) {
			t.Errorf("ArgMax with NaN at %d: %v", at, i)
		}
		if s := g.Sum().Item(); !math.IsNaN(s) {
			t.Errorf("Sum with NaN at %d: %v", at, s)
		}
	}
}

// TestGPUPowOfZero: 0 and -0 to a negative power are +Inf (-Inf for -0
// to a negative odd integer), as in C and PyTorch, on both devices and
// through both PowScalar and Pow. The exponents that are not integers
// take the prelude pow_'s exp2(y·log2|x|) path. PowScalar(-0.5) is
// Rsqrt, as in PyTorch, so (-0)^-0.5 is -Inf there.
func TestGPUPowOfZero(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	negZero := float32(math.Copysign(0, -1))
	x := []float32{0, negZero}
	for _, p := range []float64{-0.25, -0.5, -1, -1.5, -2, -2.5, -3} {
		want := []float64{math.Pow(0, p), math.Pow(math.Copysign(0, -1), p)}
		for _, dev := range []tensor.Device{tensor.CPU, gpu} {
			xs := tensor.New(x).To(dev)
			ys := tensor.Full([]int{2}, p, tensor.On(dev))
			for name, got := range map[string][]float64{
				"PowScalar": xs.PowScalar(p).Float64s(),
				"Pow":       xs.Pow(ys).Float64s(),
			} {
				want := want
				if name == "PowScalar" && p == -0.5 {
					want = []float64{math.Inf(1), math.Inf(-1)}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s([0, -0], %v) on %v = %v, want %v", name, p, dev, got, want)
				}
			}
		}
	}
}
