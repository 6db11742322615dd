package tensor

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/device"
)

// The GPU side of the dispatch table: opening adapters lazily (never in
// init), once per device, and choosing the default device. The table
// (dispatch.go) installs a GPU's backend when it opens.

// gpuBackendFor returns the backend of GPU dev, opening it on first use,
// or the error that opening it gave.
func gpuBackendFor(dev Device) (*gpuBackend, error) {
	if err := checkDevice(dev); err != nil { // GPU(-1) would open "any adapter"
		return nil, err
	}
	if dev.Kind != KindGPU {
		return nil, fmt.Errorf("tensor: %v is not a GPU", dev)
	}
	b, err := backends.get(dev)
	if err != nil {
		return nil, err
	}
	return b.(*gpuBackend), nil
}

// openGPU opens GPU dev, a device of adapter dev.Index (or, with
// TESSERA_LOGICAL_GPUS, of the adapter it is a logical GPU of), with the
// allocator settings of the environment (TESSERA_GPU_BUDGET,
// TESSERA_GPU_ALLOC).
func openGPU(dev Device) (*gpuBackend, error) {
	opts, err := device.OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	adapter, err := adapterOf(dev)
	if err != nil {
		return nil, err
	}
	opts.Index, opts.Adapter, opts.AllowCPU = adapter, "", true
	g, err := device.Open(opts)
	refreshCPUBudget() // the driver mapped memory of its own
	if err != nil {
		return nil, err
	}
	capHostAdapterBudget(g, opts.Budget)
	// Before reporting out-of-memory, the allocator asks us to collect
	// dropped tensors: their runtime cleanups release GPU blocks.
	g.SetReclaim(func() {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // let cleanup goroutines run
		runtime.GC()
	})
	return newGPUBackend(dev, g), nil
}

// capHostAdapterBudget lowers the allocator budget of a CPU adapter
// (lavapipe, SwiftShader), whose buffers are host memory, to the CPU
// budget when a hard limit (a cgroup, ulimit -v) set that and
// TESSERA_GPU_BUDGET (asked, when nonzero) did not say otherwise: a
// request beyond the limit is then an *OOMError of the allocator rather
// than a failure inside the driver.
func capHostAdapterBudget(g *device.GPU, asked int64) {
	info, err := CPUBudgetInfo()
	if asked != 0 || !g.Info().IsCPU || err != nil || info.Headroom == 0 {
		return
	}
	if info.Bytes < g.Stats().Budget {
		g.SetBudget(max(info.Bytes, 1))
	}
}

// autoGPU reports the first real GPU (not a CPU adapter such as
// lavapipe), or the adapter TESSERA_ADAPTER names, if the GPU backend
// has every op it needs.
func autoGPU() (Device, string, bool) {
	adapters, err := device.Adapters()
	if err != nil {
		return Device{}, "", false
	}
	want := strings.ToLower(strings.TrimSpace(envAdapter()))
	for _, a := range adapters {
		named := want != "" && strings.Contains(strings.ToLower(a.Name), want)
		if (want == "" && !a.IsCPU) || named {
			d := firstGPUOf(a.Index)
			if _, err := gpuBackendFor(d); err != nil {
				return Device{}, "", false
			}
			return d, a.String(), true
		}
	}
	return Device{}, "", false
}

// gpuUnavailableReason says why DefaultDevice chose the CPU.
func gpuUnavailableReason() string {
	adapters, err := device.Adapters()
	switch {
	case errors.Is(err, device.ErrNotCompiled):
		return "GPU support was not compiled in (CGO_ENABLED=0)"
	case err != nil:
		return "no WebGPU adapter (" + err.Error() + ")"
	case len(adapters) == 0:
		return "no WebGPU adapter found"
	}
	var names []string
	for _, a := range adapters {
		names = append(names, a.Name)
	}
	return "no real GPU; only CPU adapters (" + strings.Join(names, ", ") +
		"), which are slower than the CPU backend: set TESSERA_DEVICE=gpu to use one anyway"
}

// deviceDescription describes a GPU device (adapter name and type).
func deviceDescription(d Device) string {
	if b, err := gpuBackendFor(d); err == nil {
		return b.g.Info().String()
	}
	return d.String()
}

// gpuEmptyCache empties the caches of the open GPUs.
func gpuEmptyCache() {
	backends.each(KindGPU, func(b backend) { b.(*gpuBackend).g.EmptyCache() })
}

// TestGPU returns a GPU device of any adapter type (a CPU adapter such as
// lavapipe included) for tests, or why none opens.
func TestGPU() (Device, error) {
	adapters, err := device.Adapters()
	if err != nil {
		return Device{}, err
	}
	if len(adapters) == 0 {
		return Device{}, device.ErrNoAdapter
	}
	d := firstGPUOf(adapters[0].Index)
	for _, a := range adapters {
		if !a.IsCPU {
			d = firstGPUOf(a.Index)
			break
		}
	}
	if _, err := gpuBackendFor(d); err != nil {
		return Device{}, err
	}
	return d, nil
}

// GPUDevice returns the runtime of GPU dev, for tools and tests that need
// its statistics or settings (batch cap, budget).
func GPUDevice(dev Device) (*device.GPU, error) {
	b, err := gpuBackendFor(dev)
	if err != nil {
		return nil, err
	}
	return b.g, nil
}

func envAdapter() string { return os.Getenv(device.AdapterEnv) }
