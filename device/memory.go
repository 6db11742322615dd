//go:build cgo

package device

import (
	"fmt"
	"runtime"
	"time"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// The GPU's memory: the caching allocator (alloc.go) over the driver's
// buffers, its budget and statistics.

// driverBuffers is the allocator's rawDevice: it creates driver buffers
// and releases them, with the cached bind groups that reference them. The
// allocator calls it with GPU.mu held, and releases only blocks whose work
// has finished.
type driverBuffers struct {
	dev   *wgpu.Device
	binds *bindGroupCache
}

// createBuffer implements rawDevice.
func (d driverBuffers) createBuffer(size int64) (any, error) {
	return d.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera",
		Usage: wgpu.BufferUsage_Storage | wgpu.BufferUsage_CopySrc | wgpu.BufferUsage_CopyDst,
		Size:  uint64(size),
	})
}

// releaseBuffer implements rawDevice.
func (d driverBuffers) releaseBuffer(b *block) {
	d.binds.drop(b)
	if buf, ok := b.raw.(*wgpu.Buffer); ok && buf != nil {
		buf.Release()
	}
	b.raw = nil
}

// SetReclaim sets the hook that Alloc calls before reporting out of memory,
// after runtime.GC: the tensor layer uses it to wait for the cleanups that
// free GPU buffers of unreachable tensors. The hook runs without the GPU's
// lock held and may call Free.
func (g *GPU) SetReclaim(f func()) {
	g.mu.Lock()
	g.reclaim = f
	g.mu.Unlock()
}

// Alloc returns a buffer of size bytes from the caching allocator. Its
// contents are undefined (a reused block holds stale data). Its block holds
// at least size rounded up to BindingQuantum bytes, so the buffer can be
// bound whole (see the package doc). The block may be
// one freed inside the open batch that recorded work still reads; every way
// of writing it is ordered after that work (kernels, copies and clears in
// the encoder, Write through a staging copy), so callers need not care.
// When the block does not fit the budget, Alloc runs the garbage collector
// and the reclaim hook, waits for submitted work, empties the cache and
// retries once; then it returns an *OOMError (errors.Is(err,
// ErrOutOfMemory)). Alloc also paces collections for buffers that the
// program drops without freeing (package gcpace): when the bytes handed
// out grow by half since the last collection, it runs one, so that
// runtime cleanups free what is unreachable.
func (g *GPU) Alloc(size int64) (*Buffer, error) {
	collect := false
	defer func() { // after the deferred unlock below
		if collect {
			g.pace.Collect(func() int64 { return g.Stats().Allocated })
		}
	}()
	if size < 0 {
		return nil, fmt.Errorf("tessera: Alloc: negative size %d", size)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return nil, err
	}
	padded := padQuantum(size)
	if g.alloc.blockSize(padded) > g.caps.MaxBufferSize {
		return nil, fmt.Errorf("tessera: Alloc: %s exceeds the device's maximum buffer size %s", FormatBytes(size), FormatBytes(g.caps.MaxBufferSize))
	}
	blk, err := g.alloc.alloc(padded, g.stream.batch, g.stream.completed)
	if err == errOverBudget {
		hook := g.reclaim
		g.mu.Unlock()
		runtime.GC()
		if hook != nil {
			hook()
		} else {
			time.Sleep(time.Millisecond) // let runtime cleanups run
		}
		g.mu.Lock()
		if err := g.usableLocked(); err != nil {
			return nil, err
		}
		if err := g.syncLocked(); err != nil {
			return nil, err
		}
		g.alloc.emptyCache(g.stream.completed)
		blk, err = g.alloc.alloc(padded, g.stream.batch, g.stream.completed)
		if err == errOverBudget {
			return nil, g.alloc.oomError(size, g.alloc.blockSize(padded))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tessera: Alloc(%d): %w", size, err)
	}
	collect = g.pace.Grown(g.alloc.allocated)
	return &Buffer{gpu: g, blk: blk, size: size}, nil
}

// Free returns a buffer to the allocator. It is safe at any time, even while
// recorded but unsubmitted work reads the buffer: the block may be handed
// out again at once, within the same batch, because whatever writes it next
// is ordered after that work (see Alloc), and it is released to the driver
// only after that work finished. Free of a nil or already freed buffer, or
// after Close, does nothing.
func (g *GPU) Free(b *Buffer) {
	if b == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || b.freed || b.gpu != g {
		return
	}
	b.freed = true
	g.alloc.free(b.blk, g.stream.batch, g.stream.completed)
	g.pace.Shrunk(g.alloc.allocated)
}

// Stats returns the allocator's statistics.
func (g *GPU) Stats() MemStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.alloc.stats()
}

// EmptyCache returns cached blocks to the driver, except those that
// in-flight work still references.
func (g *GPU) EmptyCache() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.pollLocked()
	g.alloc.emptyCache(g.stream.completed)
}

// ResetPeak sets the peak statistics to the current values.
func (g *GPU) ResetPeak() {
	g.mu.Lock()
	g.alloc.resetPeak()
	g.mu.Unlock()
}

// SetBudget sets the allocator's budget in bytes; 0 or less restores
// DefaultBudget. Blocks already reserved are kept.
func (g *GPU) SetBudget(bytes int64) {
	if bytes <= 0 {
		bytes = DefaultBudget
	}
	g.mu.Lock()
	g.alloc.budget = bytes
	g.mu.Unlock()
}
