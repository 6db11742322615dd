package tensor

import "errors"

// errNoGPUBackend says why GPU devices cannot be used yet.
var errNoGPUBackend = errors.New("tensor: the GPU backend is not wired into the dispatch table in this version; use the CPU")

// gpuBackendFor returns the backend for GPU dev.
func gpuBackendFor(dev Device) (backend, error) { return nil, errNoGPUBackend }

// autoGPU reports a real GPU to train on, if the GPU backend finds one.
func autoGPU() (Device, string, bool) { return Device{}, "", false }

// gpuUnavailableReason says why DefaultDevice chose the CPU.
func gpuUnavailableReason() string { return "no GPU backend in this version" }

// deviceDescription describes a GPU device (adapter name and type).
func deviceDescription(d Device) string { return d.String() }

// gpuEmptyCache empties the GPU allocator's cache when a GPU is open.
func gpuEmptyCache() {}

// TestGPU returns a GPU device of any adapter type (a CPU adapter such as
// lavapipe included) for tests, or why none opens.
func TestGPU() (Device, error) { return Device{}, errNoGPUBackend }
