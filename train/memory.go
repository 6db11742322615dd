package train

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// peakMemory returns the largest of the peak bytes allocated on the GPUs
// of devs since the run began, or, when devs are the CPU, the process's
// peak resident set (VmHWM, Linux), falling back to the memory the Go
// runtime obtained from the system.
func peakMemory(devs []tensor.Device) int64 {
	peak, gpu := int64(0), false
	for _, dev := range devs {
		if dev.Kind == tensor.KindGPU {
			if g, err := tensor.GPUDevice(dev); err == nil {
				peak, gpu = max(peak, g.Stats().PeakAllocated), true
			}
		}
	}
	if gpu {
		return peak
	}
	if n := vmHWM(); n > 0 {
		return n
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}

// vmHWM reads the peak resident set size from /proc/self/status, or 0.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest) // "123456 kB"
			if len(fields) == 2 && fields[1] == "kB" {
				if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return 0
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
