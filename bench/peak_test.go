package bench

import (
	"strings"
	"testing"
)

// TestPeakShares checks that each CPU GEMM result is noted as its share
// of the FMA peak measured in the same run, and nothing else is.
func TestPeakShares(t *testing.T) {
	res := []*Result{
		{Workload: "fma_peak", Size: "512-bit × 2", Impl: "tessera", Device: "cpu", Unit: "GFLOP/s", Value: &Spread{Median: 400}},
		{Workload: "gemm", Size: "1024", Impl: "tessera", Device: "cpu", Value: &Spread{Median: 380}},
		{Workload: "gemm", Size: "1024", Impl: "torch", Device: "cpu", Value: &Spread{Median: 200}},
		{Workload: "gemm", Size: "1024", Impl: "tessera", Device: "gpu:0", Value: &Spread{Median: 5}},
		{Workload: "sum", Size: "1M", Impl: "tessera", Device: "cpu", Value: &Spread{Median: 20}},
	}
	notes := peakShares(res)
	if len(notes) != 2 || !strings.Contains(notes[0], "1024 tessera: 95.0% of the FMA peak (400 GFLOP/s") ||
		!strings.Contains(notes[1], "1024 torch: 50.0%") {
		t.Fatalf("notes %q", notes)
	}
	if n := peakShares(res[1:]); n != nil {
		t.Fatalf("without a peak: notes %q", n)
	}
}
