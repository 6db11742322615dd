package bench

import (
	"fmt"
	"math"
)

// Derived figures, printed under the table: rates that only mean
// something next to another result of the same run. A CPU GEMM's GFLOP/s
// is given as a share of the FMA peak measured in the run (fma_peak), and
// a training step that counts the flops of its products (Workload.Flops)
// is given in GFLOP/s and as a share of GEMM 1024's on the same device.
// Each share is a ratio of medians over the rounds.

// gemmReference is the GEMM size that training steps are compared with.
const gemmReference = 1024

// derived returns the report's derived lines, in table order.
func (rep *Report) derived() []string {
	find := func(workload, dev string, match func(*Result) bool) *Result {
		for _, r := range rep.Results {
			if r.Workload == workload && r.Impl == "tessera" && r.Device == dev && r.Value != nil && (match == nil || match(r)) {
				return r
			}
		}
		return nil
	}
	peak := find(fmaPeak.Name, "cpu", nil)
	var lines []string
	for _, r := range rep.Results {
		if r.Impl != "tessera" || r.Value == nil {
			continue
		}
		switch {
		case r.Workload == gemm.Name && r.Device == "cpu" && peak != nil:
			lines = append(lines, fmt.Sprintf("gemm %s on cpu: %s GFLOP/s is %s of the FMA peak (%s GFLOP/s, %s)",
				r.Size, formatNumber(r.Value.Median), percent(r.Value.Median, peak.Value.Median), formatNumber(peak.Value.Median), peak.Size))
		case r.Flops > 0:
			rate := r.Value.Median * r.Flops / 1e9
			line := fmt.Sprintf("%s %s on %s: %s GFLOP/s in its products (%s steps/s × %.4g GFLOP a step)",
				r.Workload, r.Size, r.Device, formatNumber(rate), formatNumber(r.Value.Median), r.Flops/1e9)
			if g := find(gemm.Name, r.Device, func(g *Result) bool { return len(g.Dims) > 0 && g.Dims[0] == gemmReference }); g != nil {
				line += fmt.Sprintf(", %s of GEMM %d's %s GFLOP/s", percent(rate, g.Value.Median), gemmReference, formatNumber(g.Value.Median))
			}
			lines = append(lines, line)
		}
	}
	return lines
}

// percent formats part/whole as a whole percentage.
func percent(part, whole float64) string {
	if whole <= 0 || math.IsNaN(part/whole) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*part/whole)
}

// linearFlops is the flops of one training step of an MLP with these
// layer widths on a batch whose input needs no gradient: per layer, the
// forward product and the weight-gradient product (2·batch·in·out each),
// and the input-gradient product for every layer but the first.
func linearFlops(batch int, widths []int) float64 {
	var f float64
	for i := 1; i < len(widths); i++ {
		p := 2 * float64(batch) * float64(widths[i-1]) * float64(widths[i])
		f += 2 * p
		if i > 1 {
			f += p
		}
	}
	return f
}
