package bench

import (
	"fmt"
	"runtime"
	"time"

	"github.com/tessera-ml/tessera/cpu"
	"github.com/tessera-ml/tessera/tensor"
)

// fmaPeakIters is the FMA loop's iterations per goroutine in one step of
// fmaPeak: 5–15 ms (24 chains of 512-bit FMAs an iteration, one or two
// of them a cycle), long enough that starting and joining the goroutines,
// tens of µs on a virtual machine, is lost in it.
const fmaPeakIters = 1 << 21

// fmaPeakWarm is how long fmaPeak runs untimed before each measurement,
// so that it is timed at the clock the cores reach under it, not the one
// they idled at in a pause before it.
const fmaPeakWarm = 50 * time.Millisecond

// fmaPeak measures the CPU's float32 FMA limit with the widest FMA it has
// (cpu.FMABits: 512-bit on AVX-512 cores, which on full-width cores such
// as Zen 5 does twice the work of a 256-bit one) on GOMAXPROCS
// goroutines, interleaved with the other workloads so that the GEMM's
// share of it (peakShares) is taken under the same load. Its tests check
// it against a C loop of the same FMAs and against the GEMM
// (peak_ref_test.go).
var fmaPeak = Workload{
	Name: "fma_peak", Family: "FMA peak", Unit: GFLOPs, CPUOnly: true,
	Sizes: []Size{peakSize()},
	Quick: []Size{peakSize()},
	Doc:   "fma_peak: independent float32 FMA chains of the widest kind the CPU has (24 of 512 bits or 15 of 256 an iteration), operands in registers, on each of GOMAXPROCS goroutines, in 5–15 ms steps after 50 ms untimed; a GEMM's share of the peak is of its best round",
	Work: func(s Size) float64 {
		return float64(s.Dims[0]) * fmaPeakIters * cpu.FMAPeak(1, 1) // one iteration's flops
	},
	Setup: func(_ tensor.Device, s Size) Case {
		return Case{Step: func() { cpu.FMAPeak(s.Dims[0], fmaPeakIters) }, Release: func() {}, Warm: fmaPeakWarm}
	},
}

// peakSize labels fmaPeak's one size with the FMA width and thread count.
func peakSize() Size {
	return Size{Label: fmt.Sprintf("%d-bit × %d", cpu.FMABits(), runtime.GOMAXPROCS(0)), X: 1, Dims: []int{runtime.GOMAXPROCS(0)}}
}

// peakShares notes, for every CPU GEMM result, its median rate as a share
// of the FMA peak measured in the same run (fmaShares), and then, for
// every CPU MLP step, its rate in GFLOP/s as a share of the same
// implementation's GEMM 1024 in the same run (mlpShares).
func peakShares(results []*Result) []string {
	return append(fmaShares(results), mlpShares(results)...)
}

// fmaShares notes, for every CPU GEMM result, its median rate as a share
// of the FMA peak's best round in the same run. The peak is a limit, and
// a busy machine only ever slows a round of it down, so its fastest
// round is the closest to the limit; the median of its rounds would
// count the slow ones against the peak and could put a GEMM above 100%.
// A GEMM above 100% of that is noted as such: it means that the FMA loop
// did not reach the units' limit in any round.
func fmaShares(results []*Result) []string {
	var peak *Result
	for _, r := range results {
		if r.Workload == fmaPeak.Name && r.Value != nil {
			peak = r
		}
	}
	if peak == nil || peak.Value.Max <= 0 {
		return nil
	}
	var notes []string
	for _, r := range results {
		if r.Workload == gemm.Name && r.Device == "cpu" && r.Value != nil {
			share := 100 * r.Value.Median / peak.Value.Max
			note := fmt.Sprintf("%s %s %s: %.1f%% of the FMA peak (%s %s, the best of its %d rounds in the same run)",
				r.Workload, r.Size, r.Impl, share, formatNumber(peak.Value.Max), peak.Unit, peak.Value.N)
			if share > 100 {
				note += "; above 100%: fma_peak fell short of the FMA units' limit"
			}
			notes = append(notes, note)
		}
	}
	return notes
}

// mlpFlops returns the flops of the matrix products in one training step
// of an MLP with the given batch and layer widths: the forward products,
// the weight gradients (as many flops) and the input gradients of every
// layer but the first (whose input needs none).
func mlpFlops(batch int, widths []int) float64 {
	var all, inner float64
	for l := 1; l < len(widths); l++ {
		p := float64(widths[l-1]) * float64(widths[l])
		all += p
		if l > 1 {
			inner += p
		}
	}
	return 2 * float64(batch) * (2*all + inner)
}

// mlpShares notes, for every CPU MLP step, its median rate in GFLOP/s
// (the products' flops, mlpFlops, times steps a second) and its share of
// the median rate of GEMM 1024 by the same implementation in the same run.
func mlpShares(results []*Result) []string {
	gemm1024 := map[string]float64{}
	for _, r := range results {
		if r.Workload == gemm.Name && r.Size == "1024" && r.Device == "cpu" && r.Value != nil {
			gemm1024[r.Impl] = r.Value.Median
		}
	}
	var notes []string
	for _, r := range results {
		if r.Workload != mlpStep.Name || r.Device != "cpu" || r.Value == nil || len(r.Dims) < 3 {
			continue
		}
		flops := mlpFlops(r.Dims[0], r.Dims[1:])
		rate := r.Value.Median * flops / 1e9
		note := fmt.Sprintf("%s %s %s: %s GFLOP/s (%.1f MFLOP of products a step)", r.Workload, r.Size, r.Impl, formatNumber(rate), flops/1e6)
		if g := gemm1024[r.Impl]; g > 0 {
			note += fmt.Sprintf(", %.1f%% of its gemm 1024 (%s GFLOP/s, median of the same run)", 100*rate/g, formatNumber(g))
		}
		notes = append(notes, note)
	}
	return notes
}
