package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// TestPeakShares checks that each CPU GEMM result is noted as its median's
// share of the FMA peak's best round in the same run, and nothing else is.
func TestPeakShares(t *testing.T) {
	res := []*Result{
		{Workload: "fma_peak", Size: "512-bit × 2", Impl: "tessera", Device: "cpu", Unit: "GFLOP/s", Value: &Spread{Median: 360, Max: 400, N: 5}},
		{Workload: "gemm", Size: "1024", Impl: "tessera", Device: "cpu", Value: &Spread{Median: 380, Max: 395}},
		{Workload: "gemm", Size: "1024", Impl: "torch", Device: "cpu", Value: &Spread{Median: 200}},
		{Workload: "gemm", Size: "1024", Impl: "tessera", Device: "gpu:0", Value: &Spread{Median: 5}},
		{Workload: "sum", Size: "1M", Impl: "tessera", Device: "cpu", Value: &Spread{Median: 20}},
	}
	notes := peakShares(res)
	if len(notes) != 2 || !strings.Contains(notes[0], "1024 tessera: 95.0% of the FMA peak (400 GFLOP/s, the best of its 5 rounds") ||
		!strings.Contains(notes[1], "1024 torch: 50.0%") || strings.Contains(notes[0]+notes[1], "above 100%") {
		t.Fatalf("notes %q", notes)
	}
	if n := peakShares(res[1:]); n != nil {
		t.Fatalf("without a peak: notes %q", n)
	}
	res[1].Value.Median = 404
	if n := fmaShares(res[:2]); len(n) != 1 || !strings.Contains(n[0], "101.0% of the FMA peak") ||
		!strings.Contains(n[0], "above 100%: fma_peak fell short") {
		t.Fatalf("a GEMM above the peak: notes %q", n)
	}
}

// TestMLPShares checks the MLP step's rate in GFLOP/s and its share of
// the same implementation's GEMM 1024.
func TestMLPShares(t *testing.T) {
	if f := mlpFlops(256, []int{784, 512, 512, 10}); f != 2*256*(2*(784*512+512*512+512*10)+512*512+512*10) {
		t.Fatalf("mlpFlops = %v", f)
	}
	dims := []int{2, 3, 4}
	flops := mlpFlops(2, []int{3, 4}) // one layer: forward and weight gradient, 2·2·12 each
	res := []*Result{
		{Workload: "gemm", Size: "1024", Impl: "tessera", Device: "cpu", Value: &Spread{Median: 2 * flops / 1e9}},
		{Workload: "mlp_step", Size: "3-4, batch 2", Dims: dims, Impl: "tessera", Device: "cpu", Value: &Spread{Median: 1}},
		{Workload: "mlp_step", Size: "3-4, batch 2", Dims: dims, Impl: "torch", Device: "cpu", Value: &Spread{Median: 1}},
	}
	if flops != 96 {
		t.Fatalf("mlpFlops(2, [3 4]) = %v, want 96", flops)
	}
	notes := mlpShares(res)
	if len(notes) != 2 || !strings.Contains(notes[0], "tessera: ") || !strings.Contains(notes[0], "50.0% of its gemm 1024") ||
		strings.Contains(notes[1], "of its gemm") {
		t.Fatalf("notes %q", notes)
	}
}

// TestTimeWarms checks that a measurement runs its case's Warm steps
// first and leaves them out of the steps and seconds it returns.
func TestTimeWarms(t *testing.T) {
	const warm = 30 * time.Millisecond
	steps := 0
	tc := &tesseraCase{dev: tensor.CPU, c: Case{Step: func() { steps++; time.Sleep(time.Millisecond) }, Warm: warm}}
	start := time.Now()
	sec, iters, err := tc.time(5*time.Millisecond, 1)
	untimed := time.Since(start).Seconds() - sec
	if err != nil || steps <= iters || untimed < warm.Seconds() {
		t.Fatalf("time = %v s, %d steps, %v, after %d untimed steps in %v s; want %v of them", sec, iters, err, steps-iters, untimed, warm)
	}
}
