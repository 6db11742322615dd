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

// paramsSlot is one params buffer and the bind group of its window.
type paramsSlot struct {
	buf *wgpu.Buffer
	bg  *wgpu.BindGroup
}

// paramsArena is the GPU's params state: the open batch's arena and slot,
// the pool of slots whose batch retired, and the params bind group layout.
// Guarded by GPU.mu, like every concern of the GPU: its methods are called
// with the lock held.
type paramsArena struct {
	dev    *wgpu.Device
	window int                   // Caps.MaxParamsSize
	align  int                   // dynamic offset alignment, at least 16
	layout *wgpu.BindGroupLayout // @group(1) of every kernel that takes Params
	arena  []byte                // the open batch's Params, uploaded at its submit
	slot   *paramsSlot           // the open batch's params buffer; nil until one is needed
	pool   []*paramsSlot         // slots whose batch retired
	dyn    [1]uint32             // SetBindGroup's dynamic offset, kept to avoid an allocation
}

// newParamsArena creates the params bind group layout of dev.
func newParamsArena(dev *wgpu.Device, caps Caps) (paramsArena, error) {
	layout, err := dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{
		Label: "tessera params",
		Entries: []wgpu.BindGroupLayoutEntry{{
			Binding:    0,
			Visibility: wgpu.ShaderStage_Compute,
			// The declared minimum is the whole window (what every params
			// bind group binds), so wgpu checks each kernel's Params struct
			// against it when the pipeline is created.
			Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingType_Uniform, HasDynamicOffset: true, MinBindingSize: uint64(caps.MaxParamsSize)},
		}},
	})
	if err != nil {
		return paramsArena{}, fmt.Errorf("tessera: creating the params layout: %w", err)
	}
	return paramsArena{dev: dev, window: caps.MaxParamsSize, align: max(caps.MinUniformOffsetAlignment, 16), layout: layout}, nil
}

// next returns the offset at which the arena takes the next Params, and
// whether that is past its capacity, so that the batch must be submitted
// first.
func (a *paramsArena) next() (off int, full bool) {
	off = roundUp(len(a.arena), a.align)
	return off, a.slot != nil && off > paramsCapacity
}

// put copies p into the arena at off (from next, or 0 after a submit) and
// returns off as the dynamic offset, taking a params buffer for the open
// batch when it has none.
func (a *paramsArena) put(off int, p []byte) (uint32, error) {
	if a.slot == nil {
		s, err := a.take()
		if err != nil {
			return 0, err
		}
		a.slot = s
	}
	end := off + roundUp(len(p), 16)
	for len(a.arena) < end {
		a.arena = append(a.arena, 0)
	}
	copy(a.arena[off:], p)
	return uint32(off), nil
}

// bind sets the open batch's params bind group at dynamic offset off as
// @group(1) of pass.
func (a *paramsArena) bind(pass *wgpu.ComputePassEncoder, off uint32) {
	a.dyn[0] = off
	pass.SetBindGroup(1, a.slot.bg, a.dyn[:])
}

// upload writes the arena into the open batch's params buffer with
// queue.WriteBuffer, which lands before the batch's commands when the
// batch is submitted next.
func (a *paramsArena) upload(q *wgpu.Queue) error {
	if a.slot == nil || len(a.arena) == 0 {
		return nil
	}
	return q.WriteBuffer(a.slot.buf, 0, a.arena)
}

// detach hands the open batch's params buffer to its submission (it is
// reused after that retired) and empties the arena for the next batch.
func (a *paramsArena) detach() *paramsSlot {
	s := a.slot
	a.slot = nil
	a.arena = a.arena[:0]
	return s
}

// recycle pools the params buffer of a retired submission.
func (a *paramsArena) recycle(s *paramsSlot) {
	if s != nil {
		a.pool = append(a.pool, s)
	}
}

// take takes a pooled params buffer or creates one.
func (a *paramsArena) take() (*paramsSlot, error) {
	if n := len(a.pool); n > 0 {
		s := a.pool[n-1]
		a.pool = a.pool[:n-1]
		return s, nil
	}
	window := uint64(a.window)
	buf, err := a.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera params",
		Usage: wgpu.BufferUsage_Uniform | wgpu.BufferUsage_CopyDst,
		Size:  uint64(paramsCapacity) + window,
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating a params buffer: %w", err)
	}
	bg, err := a.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{
		Label:   "tessera params",
		Layout:  a.layout,
		Entries: []wgpu.BindGroupEntry{{Binding: 0, Buffer: buf, Offset: 0, Size: window}},
	})
	if err != nil {
		buf.Release()
		return nil, fmt.Errorf("tessera: creating the params bind group: %w", err)
	}
	return &paramsSlot{buf: buf, bg: bg}, nil
}

// release releases every params buffer and the layout (Close, after all
// work finished).
func (a *paramsArena) release() {
	a.recycle(a.detach())
	for _, s := range a.pool {
		s.bg.Release()
		s.buf.Release()
	}
	a.pool = nil
	if a.layout != nil {
		a.layout.Release()
		a.layout = nil
	}
}

// reserveParamsLocked copies p into the open batch's arena and returns its
// dynamic offset, submitting the batch first when the arena is full.
func (g *GPU) reserveParamsLocked(p []byte) (uint32, error) {
	off, full := g.params.next()
	if full {
		if err := g.flushLocked(); err != nil {
			return 0, err
		}
		off = 0
	}
	return g.params.put(off, p)
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
