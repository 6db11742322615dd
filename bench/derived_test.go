package bench

import (
	"strings"
	"testing"
)

func TestLinearFlops(t *testing.T) {
	// 784-512-512-10 on 256: forward and weight-gradient products of all
	// three layers, input-gradient products of the last two.
	fwd := 2 * 256.0 * (784*512 + 512*512 + 512*10)
	want := 2*fwd + 2*256.0*(512*512+512*10)
	if got := linearFlops(256, []int{784, 512, 512, 10}); got != want {
		t.Fatalf("linearFlops = %g, want %g", got, want)
	}
}

func TestDerivedShares(t *testing.T) {
	spread := func(m float64) *Spread { return &Spread{Median: m, Min: m, Max: m, N: 5} }
	rep := &Report{Results: []*Result{
		{Workload: "fma_peak", Size: "512-bit × 2", Impl: "tessera", Device: "cpu", Value: spread(400)},
		{Workload: "gemm", Size: "1024", Dims: []int{1024, 1024, 1024}, Impl: "tessera", Device: "cpu", Value: spread(300)},
		{Workload: "gemm", Size: "1024", Dims: []int{1024, 1024, 1024}, Impl: "torch", Device: "cpu", Value: spread(320)},
		{Workload: "mlp_step", Size: "b", Impl: "tessera", Device: "cpu", Value: spread(200), Flops: 1e9},
		{Workload: "mlp_step", Size: "b", Impl: "tessera", Device: "gpu:0", Value: spread(10), Flops: 1e9},
		{Workload: "minchar_step", Size: "c", Impl: "tessera", Device: "cpu", Value: spread(500)},
	}}
	got := strings.Join(rep.derived(), "\n")
	for _, want := range []string{
		"gemm 1024 on cpu: 300 GFLOP/s is 75% of the FMA peak (400 GFLOP/s, 512-bit × 2)",
		"mlp_step b on cpu: 200 GFLOP/s in its products (200 steps/s × 1 GFLOP a step), 67% of GEMM 1024's 300 GFLOP/s",
		"mlp_step b on gpu:0: 10.0 GFLOP/s in its products",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("derived lines lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "minchar") || strings.Contains(got, "torch") || strings.Count(got, "\n") != 2 {
		t.Errorf("derived lines should cover only tessera GEMM on the CPU and steps that count flops:\n%s", got)
	}
}
