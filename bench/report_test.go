package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportFixture is a report of GEMM at two sizes on the CPU and a GPU
// with a torch peer, and one failed case.
func reportFixture() *Report {
	dispatches, alloc := 1.0, float64(3<<20)
	rep := &Report{Rounds: 5, MinTime: 0.25, MinIters: 1, Docs: []string{gemm.Doc}, Notes: []string{"gpu:3 not measured: no such adapter"}}
	rep.Machine = Machine{CPUModel: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26", CPUFeatures: []string{"avx2", "fma"}}
	rep.Machine.Adapters = append(rep.Machine.Adapters, adapterFixture(0, false))
	rep.Machine.Peer = &PeerInfo{Python: "/usr/bin/python3", Torch: "1.13", NumPy: "1.24", Threads: 2, TorchBLAS: "openblas", NumPyBLAS: "openblas",
		Env: map[string]string{"OPENBLAS_NUM_THREADS": "2"}, CUDA: &CUDAInfo{Device: "NVIDIA H200", Capability: "9.0", CUDA: "12.4", Driver: "550"}}
	for _, n := range []int{256, 512} {
		s := square(n)
		base := float64(n) / 4
		add := func(r *Result) {
			r.Workload, r.Family, r.Size, r.X, r.Dims, r.Unit = "gemm", gemm.Family, s.Label, s.X, s.Dims, "GFLOP/s"
			rep.Results = append(rep.Results, r)
		}
		add(&Result{Impl: "tessera", Device: "cpu", Value: &Spread{Median: base, Min: base - 1, Max: base + 1, N: 5}, Memory: &Memory{Bytes: 3 << 20, Kind: "go-heap-peak"}})
		add(&Result{Impl: "tessera", Device: "gpu:0", DeviceName: "gpu fixture", Value: &Spread{Median: 10 * base, Min: 9 * base, Max: 11 * base, N: 5},
			Memory: &Memory{Bytes: 1 << 20, Kind: "gpu-peak"}, Dispatches: &dispatches, AllocBytes: &alloc})
		add(&Result{Impl: "torch", Device: "cuda", DeviceName: "NVIDIA H200", Against: "gpu:0", Value: &Spread{Median: 5 * base, Min: 4 * base, Max: 6 * base, N: 5},
			Memory: &Memory{Bytes: 2 << 20, Kind: "cuda-peak"}, Ratio: &Spread{Median: 2, Min: 1.5, Max: 2.5, N: 5}})
	}
	rep.Results = append(rep.Results, &Result{Workload: "mlp_step", Size: "784-512-512-10, batch 256", Impl: "tessera", Device: "gpu:0", Unit: "steps/s", Error: "out of memory | budget"})
	return rep
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	reportFixture().WriteMarkdown(&b)
	out := b.String()
	for _, want := range []string{
		"Machine: Test CPU, 2 cores (GOMAXPROCS 2), linux/amd64, go1.26",
		"CPU features: avx2 fma",
		"Adapter: gpu:0 gpu fixture [vulkan, discrete, GPU]",
		"torch 1.13 (BLAS openblas", "OPENBLAS_NUM_THREADS=2", "OPENBLAS_CORETYPE unset",
		"CUDA: NVIDIA H200 (compute 9.0",
		"Mode: full, 5 rounds",
		"| gemm | 256 | tessera | cpu | 64.0 GFLOP/s | 63.0–65.0 | 3.00 MiB (heap) |  |  |",
		"| gemm | 256 | tessera | gpu:0 gpu fixture | 640 GFLOP/s | 576–704 | 1.00 MiB (gpu) | 3.00 MiB | 1 |  |",
		"| gemm | 512 | torch | cuda NVIDIA H200 | 640 GFLOP/s | 512–768 | 2.00 MiB (cuda) |  |  | 2.00× (1.50–2.50) vs gpu:0 |",
		"elementwise fusion off",
		"| mlp_step | 784-512-512-10, batch 256 | tessera | gpu:0 | failed: out of memory / budget |",
		"Peak memory (cuda: PyTorch's CUDA allocator",
		"- gemm: n×n float32 product",
		"- note: gpu:3 not measured",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rss:") {
		t.Error("legend explains a memory kind no row uses")
	}
	if rows := strings.Count(out, "\n| "); rows != 1+7 {
		t.Errorf("%d table lines, want the header and 7 rows", rows)
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rep := reportFixture()
	paths, err := rep.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "bench.json"), filepath.Join(dir, "gemm.png")}; strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %q, want %q (no chart for a workload at one size)", paths, want)
	}
	var back Report
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(rep.Results) || back.Machine.Peer.CUDA.Device != "NVIDIA H200" || back.Results[2].Ratio.Median != 2 || *back.Results[1].Dispatches != 1 {
		t.Errorf("bench.json round trip lost data: %+v", back)
	}
	png, err := os.ReadFile(paths[1])
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 5000 {
		t.Errorf("gemm.png: %d bytes, %v", len(png), err)
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{1234.5: "1234", 153.2: "153", 15.32: "15.3", 1.532: "1.53", 0.01532: "0.0153"} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
