//go:build cgo

package device

import (
	"fmt"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// Kernel parameters. wgpu-native 0.17 has no compute push constants and no
// override constants, so each dispatch's Params go into a host-side arena;
// the batch's arena is uploaded with one queue.WriteBuffer just before the
// batch is submitted (the write lands before the batch's commands), into a
// uniform buffer bound as @group(1) @binding(0) with a dynamic offset. One
// bind group per params buffer serves every dispatch; buffers and their
// bind groups are pooled and reused once their batch retired.
const (
	paramsWindow   = 1024     // bytes visible to one dispatch (Caps.MaxParamsSize)
	paramsCapacity = 64 << 10 // arena bytes per batch; a fuller batch is submitted early
)

type paramsSlot struct {
	buf *wgpu.Buffer
	bg  *wgpu.BindGroup
}

// reserveParams copies p into the open batch's arena and returns its
// dynamic offset, submitting the batch first when the arena is full.
func (g *GPU) reserveParams(p []byte) (uint32, error) {
	align := max(g.caps.MinUniformOffsetAlignment, 16)
	off := roundUp(len(g.arena), align)
	if g.slot != nil && off > paramsCapacity {
		if err := g.flushLocked(); err != nil {
			return 0, err
		}
		off = 0
	}
	if g.slot == nil {
		s, err := g.paramsSlot()
		if err != nil {
			return 0, err
		}
		g.slot = s
	}
	end := off + roundUp(len(p), 16)
	for len(g.arena) < end {
		g.arena = append(g.arena, 0)
	}
	copy(g.arena[off:], p)
	return uint32(off), nil
}

// paramsSlot takes a pooled params buffer or creates one.
func (g *GPU) paramsSlot() (*paramsSlot, error) {
	if n := len(g.slots); n > 0 {
		s := g.slots[n-1]
		g.slots = g.slots[:n-1]
		return s, nil
	}
	window := uint64(g.caps.MaxParamsSize)
	buf, err := g.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera params",
		Usage: wgpu.BufferUsage_Uniform | wgpu.BufferUsage_CopyDst,
		Size:  uint64(paramsCapacity) + window,
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating a params buffer: %w", err)
	}
	bg, err := g.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{
		Label:   "tessera params",
		Layout:  g.paramsLayout,
		Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: buf, Offset: 0, Size: window}},
	})
	if err != nil {
		buf.Release()
		return nil, fmt.Errorf("tessera: creating the params bind group: %w", err)
	}
	return &paramsSlot{buf: buf, bg: bg}, nil
}

// releaseParams releases every pooled params buffer (Close).
func (g *GPU) releaseParams() {
	if g.slot != nil {
		g.slots = append(g.slots, g.slot)
		g.slot = nil
	}
	for _, s := range g.slots {
		s.bg.Release()
		s.buf.Release()
	}
	g.slots = nil
	if g.paramsLayout != nil {
		g.paramsLayout.Release()
		g.paramsLayout = nil
	}
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
