package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tessera-ml/tessera/device"
)

// memoryKinds explains each Memory.Kind in the table's legend.
var memoryKinds = map[string]string{
	"gpu-peak":        "gpu: Tessera's GPU allocator, peak allocated bytes",
	"go-heap-peak":    "heap: Go heap objects, Tessera's pooled CPU buffers included, sampled every ms",
	"rss-peak-growth": "rss: the peer process's resident-set high-water mark above its size before setup",
	"cuda-peak":       "cuda: PyTorch's CUDA allocator, peak allocated bytes",
}

// memoryTag is the short name of a Memory.Kind in the table.
func memoryTag(kind string) string { k, _, _ := strings.Cut(memoryKinds[kind], ":"); return k }

// WriteMarkdown prints the machine, the settings, a table with one row
// per result and a legend.
func (rep *Report) WriteMarkdown(w io.Writer) {
	m := rep.Machine
	fmt.Fprintf(w, "Machine: %s, %d cores (GOMAXPROCS %d), %s/%s, %s, %s UTC, load average %s\n\n",
		m.CPUModel, m.Cores, m.GOMAXPROCS, m.OS, m.Arch, m.GoVersion, m.Time, m.LoadAverage)
	fmt.Fprintf(w, "CPU features: %s\n\n", strings.Join(m.CPUFeatures, " "))
	for _, a := range m.Adapters {
		fmt.Fprintf(w, "Adapter: %v\n\n", a)
	}
	if m.AdapterError != "" {
		fmt.Fprintf(w, "Adapters: none (%s)\n\n", m.AdapterError)
	}
	if p := m.Peer; p != nil {
		fmt.Fprintf(w, "Peers: %s (Python %s), torch %s (BLAS %s, BLAS_INFO=%s), NumPy %s (BLAS %s), %d threads; libraries: %s; %s\n\n",
			p.Python, p.PythonVersion, p.Torch, p.TorchBLAS, p.TorchBLASInfo, p.NumPy, p.NumPyBLAS, p.Threads,
			strings.Join(p.BLASLibraries, ", "), envString(p.Env, "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
		if c := p.CUDA; c != nil {
			fmt.Fprintf(w, "CUDA: %s (compute %s, %s), CUDA %s, driver %s\n\n", c.Device, c.Capability, device.FormatBytes(c.MemoryBytes), c.CUDA, c.Driver)
		}
	}
	mode := "full"
	if rep.Quick {
		mode = "quick"
	}
	fusion := map[bool]string{false: "off", true: "on"}[rep.Fusion]
	settle := ""
	if rep.Settle > 0 {
		settle = fmt.Sprintf(", a %.3g s pause before each (the peers' BLAS threads spin before they sleep)", rep.Settle)
	}
	fmt.Fprintf(w, "Mode: %s, %d rounds, each measurement ≥ %.3g s and ≥ %d steps%s, waiting for the device after every step; elementwise fusion %s\n\n", mode, rep.Rounds, rep.MinTime, rep.MinIters, settle, fusion)
	fmt.Fprintln(w, "| workload | size | impl | device | median | min–max | peak memory | allocated/step | dispatches/step | Tessera/peer (median, min–max) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	kinds := map[string]bool{}
	for _, r := range rep.Results {
		dev := r.Device
		if r.DeviceName != "" {
			dev += " " + r.DeviceName
		}
		cells := []string{r.Workload, r.Size, r.Impl, dev, "", "", "", "", "", ""}
		switch {
		case r.Error != "":
			cells[4] = "failed: " + strings.ReplaceAll(r.Error, "|", "/")
		case r.Value != nil:
			cells[4] = formatValue(r.Value.Median, r.Unit)
			cells[5] = fmt.Sprintf("%s–%s", formatNumber(r.Value.Min), formatNumber(r.Value.Max))
		}
		if r.Memory != nil {
			cells[6] = fmt.Sprintf("%s (%s)", device.FormatBytes(r.Memory.Bytes), memoryTag(r.Memory.Kind))
			kinds[r.Memory.Kind] = true
		}
		if r.AllocBytes != nil {
			cells[7] = device.FormatBytes(int64(*r.AllocBytes))
		}
		if r.Dispatches != nil {
			cells[8] = fmt.Sprintf("%.0f", *r.Dispatches)
		}
		if r.Ratio != nil {
			cells[9] = fmt.Sprintf("%.2f× (%.2f–%.2f) vs %s", r.Ratio.Median, r.Ratio.Min, r.Ratio.Max, r.Against)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Tessera/peer is Tessera's speed over the peer's in the same round (above 1: Tessera is faster); for µs/op the inverse ratio of times.")
	for _, k := range []string{"gpu-peak", "go-heap-peak", "rss-peak-growth", "cuda-peak"} {
		if kinds[k] {
			fmt.Fprintf(w, "Peak memory (%s), over setup and two warm-up steps.\n", memoryKinds[k])
		}
	}
	fmt.Fprintln(w)
	for _, d := range rep.Docs {
		fmt.Fprintf(w, "- %s\n", d)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
}

// envString renders the named variables as k=v, or k unset.
func envString(env map[string]string, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := env[k]; ok {
			parts = append(parts, k+"="+v)
		} else {
			parts = append(parts, k+" unset")
		}
	}
	return strings.Join(parts, ", ")
}

// formatNumber prints v with about three significant digits.
func formatNumber(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// formatValue prints v and its unit.
func formatValue(v float64, unit string) string { return formatNumber(v) + " " + unit }

// WriteFiles writes bench.json and the charts into dir, creating it, and
// returns the paths written.
func (rep *Report) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	charts, err := rep.writeCharts(dir)
	return append([]string{path}, charts...), err
}
