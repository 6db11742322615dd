//go:build cgo

package device

import (
	"fmt"
	"sync/atomic"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// Staging pool limits: read staging buffers (MapRead|CopyDst) of a size
// class are reused after Unmap; classes above maxPooledStaging, and any
// buffer that would take the pool above maxStagingPool, are released after
// use instead.
const (
	maxPooledStaging = 64 << 20
	maxStagingPool   = 256 << 20
)

// Read returns size bytes of src from offset. It records a copy into a
// pooled staging buffer after all recorded work, submits, maps the staging
// buffer and waits for the map callback (looping on the poll, up to
// Options.Timeout), so the result reflects every operation recorded before
// the call. A lost device gives ErrDeviceLost, a timeout ErrTimeout; a
// buffer that a failed batch marked failed (even by the batch this Read
// submits) gives an error wrapping its *CommandFailedError.
func (g *GPU) Read(src *Buffer, offset, size int64) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return nil, err
	}
	if err := g.checkBufLocked(src, "Read"); err != nil {
		return nil, err
	}
	if offset < 0 || size < 0 || offset+size > src.size {
		return nil, fmt.Errorf("tessera: Read: range [%d, %d) outside a %d-byte buffer", offset, offset+size, src.size)
	}
	if size == 0 {
		return []byte{}, nil
	}
	start := offset &^ 3
	n := (offset+size+3)&^3 - start
	st, class, err := g.staging.get(n)
	if err != nil {
		return nil, err
	}
	enc, err := g.copyEncoderLocked()
	if err == nil {
		err = g.checkFailedLocked("Read", src)
	}
	if err != nil {
		g.staging.put(st, class)
		return nil, err
	}
	// rb stands for the staging buffer in the log, so that a replay that
	// skips or rejects this copy says so.
	rb := &Buffer{gpu: g, size: n}
	g.stream.log.copy("readback", st, rb, 0, src.blk.raw.(*wgpu.Buffer), src, uint64(start), uint64(n))
	if err := enc.CopyBufferToBuffer(src.blk.raw.(*wgpu.Buffer), uint64(start), st, 0, uint64(n)); err != nil {
		g.stream.uploads = append(g.stream.uploads, st)
		return nil, g.encoderFailedLocked("Read", err)
	}
	src.blk.lastUse = g.stream.batch
	g.stream.nCmds++
	batch := g.stream.batch
	err = g.flushLocked()
	if err == nil {
		err = g.checkFailedLocked("Read", src, rb)
	}
	if err != nil {
		if g.stream.completed >= batch || rb.failed != nil {
			// Nothing submitted copies into st: the batch was dropped
			// before the queue, or its replay did not run this copy.
			g.staging.put(st, class)
		} else {
			g.staging.abandon(st)
		}
		return nil, err
	}
	// The callback fires inside our Poll, but after a timeout it may fire
	// in a later Poll: atomics keep that harmless.
	var status atomic.Uint32
	var fired atomic.Bool
	mapAsync(st, wgpu.MapMode_Read, 0, uint64(n), func(s wgpu.BufferMapAsyncStatus) {
		status.Store(uint32(s))
		fired.Store(true)
	})
	if err := g.pollUntilLocked(fired.Load); err != nil {
		g.staging.abandon(st)
		return nil, fmt.Errorf("tessera: Read of %d bytes: %w", size, err)
	}
	g.retireLocked()
	if ms := wgpu.BufferMapAsyncStatus(status.Load()); ms != wgpu.BufferMapAsyncStatus_Success {
		g.staging.abandon(st)
		if ms == wgpu.BufferMapAsyncStatus_DeviceLost {
			g.lost.set("a readback map reported the device lost")
			return nil, fmt.Errorf("%w: mapping a readback buffer", ErrDeviceLost)
		}
		return nil, fmt.Errorf("tessera: Read: mapping the staging buffer failed: %s", ms)
	}
	out := make([]byte, size)
	copy(out, st.GetMappedRange(0, uint(n))[offset-start:])
	if err := st.Unmap(); err != nil {
		g.staging.abandon(st)
		return out, nil
	}
	g.staging.put(st, class)
	return out, nil
}

// stagingPool is the GPU's readback staging buffers (MapRead|CopyDst):
// free buffers by size class, their total size, and the abandoned buffers
// that a timed-out or failed map may still reference, released only at
// Close. Guarded by GPU.mu, like every concern of the GPU: its methods are
// called with the lock held.
type stagingPool struct {
	dev     *wgpu.Device
	free    map[int64][]*wgpu.Buffer
	bytes   int64 // total size of the free buffers
	zombies []*wgpu.Buffer
}

// newStagingPool returns an empty pool of dev's staging buffers.
func newStagingPool(dev *wgpu.Device) stagingPool {
	return stagingPool{dev: dev, free: map[int64][]*wgpu.Buffer{}}
}

// get takes a pooled read staging buffer of at least n bytes.
func (p *stagingPool) get(n int64) (*wgpu.Buffer, int64, error) {
	class := classSize(n)
	if l := p.free[class]; len(l) > 0 {
		st := l[len(l)-1]
		p.free[class] = l[:len(l)-1]
		p.bytes -= class
		return st, class, nil
	}
	st, err := p.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera readback",
		Usage: wgpu.BufferUsage_MapRead | wgpu.BufferUsage_CopyDst,
		Size:  uint64(class),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("tessera: Read: creating a staging buffer: %w", err)
	}
	return st, class, nil
}

// put returns an unmapped staging buffer whose work finished.
func (p *stagingPool) put(st *wgpu.Buffer, class int64) {
	if class > maxPooledStaging || p.bytes+class > maxStagingPool {
		st.Release()
		return
	}
	p.free[class] = append(p.free[class], st)
	p.bytes += class
}

// abandon keeps a staging buffer that submitted work or a pending map may
// still use until Close: releasing it earlier could abort the process.
func (p *stagingPool) abandon(st *wgpu.Buffer) { p.zombies = append(p.zombies, st) }

// release releases the pool and the abandoned staging buffers (Close,
// after all work finished).
func (p *stagingPool) release() {
	for _, l := range p.free {
		for _, st := range l {
			st.Release()
		}
	}
	clear(p.free)
	p.bytes = 0
	for _, st := range p.zombies {
		st.Release()
	}
	p.zombies = nil
}
