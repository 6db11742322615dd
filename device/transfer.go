//go:build cgo

package device

import (
	"fmt"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// checkRange validates [off, off+n) of b for a transfer. Offsets must be
// multiples of 4 bytes; a length that is not may only end the buffer (the
// block's slack absorbs the padding). It returns n rounded up to 4.
func checkRange(b *Buffer, off, n int64, what string) (int64, error) {
	if off < 0 || n < 0 || off+n > b.size {
		return 0, fmt.Errorf("tessera: %s: range [%d, %d) outside a %d-byte buffer", what, off, off+n, b.size)
	}
	if off%4 != 0 {
		return 0, fmt.Errorf("tessera: %s: offset %d is not a multiple of 4 bytes", what, off)
	}
	if n%4 != 0 && off+n != b.size {
		return 0, fmt.Errorf("tessera: %s: %d bytes at offset %d is not a multiple of 4 bytes and does not end the buffer", what, n, off)
	}
	return (n + 3) &^ 3, nil
}

// Write copies data into dst at offset, ordered after all previously
// recorded work and before later work. When no recorded, unsubmitted work
// references dst's block, it uses queue.WriteBuffer (which runs before the
// open batch, unobservably for this block); otherwise it uploads into a
// staging buffer and records a copy in the encoder, so the upload cannot
// jump ahead of work that still reads the old contents. The latter case
// includes a block that was freed and handed out again inside the open
// batch: it keeps the lastUse of the work that read it before. Writing a
// buffer that a failed batch marked failed is an error wrapping its
// *CommandFailedError.
func (g *GPU) Write(dst *Buffer, offset int64, data []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return err
	}
	if err := g.checkBufLocked(dst, "Write"); err != nil {
		return err
	}
	n4, err := checkRange(dst, offset, int64(len(data)), "Write")
	if err != nil || n4 == 0 {
		return err
	}
	if int64(len(data)) != n4 {
		padded := make([]byte, n4)
		copy(padded, data)
		data = padded
	}
	blk := dst.blk
	raw := blk.raw.(*wgpu.Buffer)
	if blk.lastUse < g.stream.batch {
		if err := g.queue.WriteBuffer(raw, uint64(offset), data); err != nil {
			return fmt.Errorf("tessera: Write: %w", err)
		}
		return nil
	}
	staging, err := g.dev.CreateBufferInit(&wgpu.BufferInitDescriptor{Label: "tessera upload", Contents: data, Usage: wgpu.BufferUsage_CopySrc})
	if err != nil {
		return fmt.Errorf("tessera: Write: creating a staging buffer: %w", err)
	}
	enc, err := g.copyEncoderLocked()
	if err == nil {
		err = g.checkFailedLocked("Write", dst)
	}
	if err != nil {
		staging.Release()
		return err
	}
	g.stream.uploads = append(g.stream.uploads, staging)
	g.stream.log.copy("upload", raw, dst, uint64(offset), staging, nil, 0, uint64(n4))
	if err := enc.CopyBufferToBuffer(staging, 0, raw, uint64(offset), uint64(n4)); err != nil {
		return g.encoderFailedLocked("Write", err)
	}
	blk.lastUse = g.stream.batch
	return g.countCmdLocked()
}

// Fill zeroes size bytes of dst from offset (ClearBuffer in the encoder,
// ordered like a kernel).
func (g *GPU) Fill(dst *Buffer, offset, size int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return err
	}
	if err := g.checkBufLocked(dst, "Fill"); err != nil {
		return err
	}
	n4, err := checkRange(dst, offset, size, "Fill")
	if err != nil || n4 == 0 {
		return err
	}
	enc, err := g.copyEncoderLocked()
	if err == nil {
		err = g.checkFailedLocked("Fill", dst)
	}
	if err != nil {
		return err
	}
	g.stream.log.clear(dst, uint64(offset), uint64(n4))
	if err := enc.ClearBuffer(dst.blk.raw.(*wgpu.Buffer), uint64(offset), uint64(n4)); err != nil {
		return g.encoderFailedLocked("Fill", err)
	}
	dst.blk.lastUse = g.stream.batch
	return g.countCmdLocked()
}

// Copy copies size bytes from src at srcOff to dst at dstOff, ordered like a
// kernel. Offsets must be multiples of 4; dst and src may be the same buffer
// (the copy then goes through a temporary block).
func (g *GPU) Copy(dst *Buffer, dstOff int64, src *Buffer, srcOff, size int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return err
	}
	if err := g.checkBufLocked(dst, "Copy"); err != nil {
		return err
	}
	if err := g.checkBufLocked(src, "Copy"); err != nil {
		return err
	}
	n4, err := checkRange(dst, dstOff, size, "Copy (destination)")
	if err != nil || n4 == 0 {
		return err
	}
	if srcOff < 0 || srcOff+size > src.size || srcOff%4 != 0 || srcOff+n4 > src.blk.size {
		return fmt.Errorf("tessera: Copy: source range [%d, %d) invalid for a %d-byte buffer (offsets must be multiples of 4)", srcOff, srcOff+size, src.size)
	}
	if dst.blk == src.blk {
		tmp, err := g.alloc.alloc(n4, g.stream.batch, g.stream.completed)
		if err != nil {
			if err == errOverBudget {
				return g.alloc.oomError(n4, classSize(n4))
			}
			return fmt.Errorf("tessera: Copy: %w", err)
		}
		// A Buffer of its own, so that a failed first copy taints the
		// second in a replay.
		t := &Buffer{gpu: g, blk: tmp, size: n4}
		err = g.copyLocked(t, 0, src, srcOff, n4)
		if err == nil {
			err = g.copyLocked(dst, dstOff, t, 0, n4)
		}
		g.alloc.free(tmp, g.stream.batch, g.stream.completed)
		return err
	}
	return g.copyLocked(dst, dstOff, src, srcOff, n4)
}

// copyLocked records a copy of n bytes (a multiple of 4) between two
// different blocks.
func (g *GPU) copyLocked(dst *Buffer, dstOff int64, src *Buffer, srcOff, n int64) error {
	enc, err := g.copyEncoderLocked()
	if err == nil {
		err = g.checkFailedLocked("Copy", src, dst)
	}
	if err != nil {
		return err
	}
	sraw, draw := src.blk.raw.(*wgpu.Buffer), dst.blk.raw.(*wgpu.Buffer)
	g.stream.log.copy("copy", draw, dst, uint64(dstOff), sraw, src, uint64(srcOff), uint64(n))
	if err := enc.CopyBufferToBuffer(sraw, uint64(srcOff), draw, uint64(dstOff), uint64(n)); err != nil {
		return g.encoderFailedLocked("Copy", err)
	}
	src.blk.lastUse, dst.blk.lastUse = g.stream.batch, g.stream.batch
	return g.countCmdLocked()
}
