//go:build !cgo

package device

// GPU is the WebGPU device. In a build without cgo no GPU can be opened:
// Open and Adapters return ErrNotCompiled, and the methods below exist only
// so that code using the package compiles.
type GPU struct{}

// Adapters returns ErrNotCompiled in a build without cgo.
func Adapters() ([]AdapterInfo, error) { return nil, ErrNotCompiled }

// Open returns ErrNotCompiled in a build without cgo.
func Open(opts Options) (*GPU, error) { return nil, ErrNotCompiled }

// Info returns the zero AdapterInfo.
func (g *GPU) Info() AdapterInfo { return AdapterInfo{} }

// Caps returns the zero Caps.
func (g *GPU) Caps() Caps { return Caps{} }

// Close does nothing.
func (g *GPU) Close() error { return nil }

// SetReclaim does nothing.
func (g *GPU) SetReclaim(f func()) {}

// Alloc returns ErrNotCompiled.
func (g *GPU) Alloc(size int64) (*Buffer, error) { return nil, ErrNotCompiled }

// Free does nothing.
func (g *GPU) Free(b *Buffer) {}

// Write returns ErrNotCompiled.
func (g *GPU) Write(dst *Buffer, offset int64, data []byte) error { return ErrNotCompiled }

// Read returns ErrNotCompiled.
func (g *GPU) Read(src *Buffer, offset, size int64) ([]byte, error) { return nil, ErrNotCompiled }

// Fill returns ErrNotCompiled.
func (g *GPU) Fill(dst *Buffer, offset, size int64) error { return ErrNotCompiled }

// Copy returns ErrNotCompiled.
func (g *GPU) Copy(dst *Buffer, dstOff int64, src *Buffer, srcOff, size int64) error {
	return ErrNotCompiled
}

// Run returns ErrNotCompiled.
func (g *GPU) Run(k Kernel) error { return ErrNotCompiled }

// Flush returns ErrNotCompiled.
func (g *GPU) Flush() error { return ErrNotCompiled }

// Sync returns ErrNotCompiled.
func (g *GPU) Sync() error { return ErrNotCompiled }

// SetBatchCap does nothing.
func (g *GPU) SetBatchCap(n int) {}

// Stats returns zero statistics.
func (g *GPU) Stats() MemStats { return MemStats{} }

// EmptyCache does nothing.
func (g *GPU) EmptyCache() {}

// ResetPeak does nothing.
func (g *GPU) ResetPeak() {}

// SetBudget does nothing.
func (g *GPU) SetBudget(bytes int64) {}

// DispatchCount returns 0.
func (g *GPU) DispatchCount() int64 { return 0 }

// SubmitCount returns 0.
func (g *GPU) SubmitCount() int64 { return 0 }

// ReplayCount returns 0.
func (g *GPU) ReplayCount() int64 { return 0 }

// ObservePipelinesForTesting does nothing.
func (g *GPU) ObservePipelinesForTesting(f func(PipelineUse)) {}

// InjectFaultForTesting does nothing.
func (g *GPU) InjectFaultForTesting(match func(Kernel) bool) {}
