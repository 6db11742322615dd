//go:build cgo

package device

import (
	"fmt"
	"sync/atomic"
	"time"

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
	if err := g.usable(); err != nil {
		return nil, err
	}
	if err := g.checkBuf(src, "Read"); err != nil {
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
	st, class, err := g.stagingGet(n)
	if err != nil {
		return nil, err
	}
	enc, err := g.copyEncoder()
	if err == nil {
		err = g.checkFailed("Read", src)
	}
	if err != nil {
		g.stagingPut(st, class)
		return nil, err
	}
	// rb stands for the staging buffer in the log, so that a replay that
	// skips or rejects this copy says so.
	rb := &Buffer{gpu: g, size: n}
	g.logCopy("readback", st, rb, 0, src.blk.raw.(*wgpu.Buffer), src, uint64(start), uint64(n))
	if err := enc.CopyBufferToBuffer(src.blk.raw.(*wgpu.Buffer), uint64(start), st, 0, uint64(n)); err != nil {
		g.batchRelease = append(g.batchRelease, st)
		return nil, g.encoderFailed("Read", err)
	}
	src.blk.lastUse = g.batch
	g.nCmds++
	batch := g.batch
	err = g.flushLocked()
	if err == nil {
		err = g.checkFailed("Read", src, rb)
	}
	if err != nil {
		if g.completed >= batch || rb.failed != nil {
			// Nothing submitted copies into st: the batch was dropped
			// before the queue, or its replay did not run this copy.
			g.stagingPut(st, class)
		} else {
			g.zombies = append(g.zombies, st)
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
	deadline := time.Now().Add(g.opts.Timeout)
	for !fired.Load() {
		if err := g.usable(); err != nil {
			g.zombies = append(g.zombies, st)
			return nil, err
		}
		// A blocking poll may return after ~5 s with the work still
		// running (gfx-rs/wgpu#4589): loop until the callback fires.
		g.dev.Poll(true, &wgpu.WrappedSubmissionIndex{Queue: g.queue, SubmissionIndex: g.lastIndex})
		if !fired.Load() && time.Now().After(deadline) {
			g.zombies = append(g.zombies, st)
			return nil, fmt.Errorf("%w: Read of %d bytes did not complete within %v", ErrTimeout, size, g.opts.Timeout)
		}
	}
	g.retireDone()
	if ms := wgpu.BufferMapAsyncStatus(status.Load()); ms != wgpu.BufferMapAsyncStatus_Success {
		g.zombies = append(g.zombies, st)
		if ms == wgpu.BufferMapAsyncStatus_DeviceLost {
			g.lost.set("a readback map reported the device lost")
			return nil, fmt.Errorf("%w: mapping a readback buffer", ErrDeviceLost)
		}
		return nil, fmt.Errorf("tessera: Read: mapping the staging buffer failed: %s", ms)
	}
	out := make([]byte, size)
	copy(out, st.GetMappedRange(0, uint(n))[offset-start:])
	if err := st.Unmap(); err != nil {
		g.zombies = append(g.zombies, st)
		return out, nil
	}
	g.stagingPut(st, class)
	return out, nil
}

// stagingGet takes a pooled read staging buffer of at least n bytes.
func (g *GPU) stagingGet(n int64) (*wgpu.Buffer, int64, error) {
	class := classSize(n)
	if l := g.staging[class]; len(l) > 0 {
		st := l[len(l)-1]
		g.staging[class] = l[:len(l)-1]
		g.stagingBytes -= class
		return st, class, nil
	}
	st, err := g.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera readback",
		Usage: wgpu.BufferUsage_MapRead | wgpu.BufferUsage_CopyDst,
		Size:  uint64(class),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("tessera: Read: creating a staging buffer: %w", err)
	}
	return st, class, nil
}

// stagingPut returns an unmapped staging buffer whose work finished.
func (g *GPU) stagingPut(st *wgpu.Buffer, class int64) {
	if class > maxPooledStaging || g.stagingBytes+class > maxStagingPool {
		st.Release()
		return
	}
	g.staging[class] = append(g.staging[class], st)
	g.stagingBytes += class
}

// releaseStaging releases the staging pool and abandoned staging buffers
// (Close, after all work finished).
func (g *GPU) releaseStaging() {
	for _, l := range g.staging {
		for _, st := range l {
			st.Release()
		}
	}
	clear(g.staging)
	g.stagingBytes = 0
	for _, st := range g.zombies {
		st.Release()
	}
	g.zombies = nil
}
