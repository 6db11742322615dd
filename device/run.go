//go:build cgo

package device

import "fmt"

// Recording a dispatch: Run validates a Kernel against the device's
// limits, finds its pipeline and bind group in the caches, takes its
// Params from the arena and records it into the stream's open pass.

// Run records one dispatch into the open compute pass. It validates the
// workgroup counts against Caps.MaxWorkgroupsPerDimension and every binding
// (alignment, range, Caps.MaxStorageBindingSize) before touching wgpu, and
// returns WGSL compile and pipeline errors as errors. Each binding covers
// its size rounded up to BindingQuantum (see the package doc). A binding
// of a buffer that a failed batch marked failed is an error wrapping its
// *CommandFailedError. The batch is submitted when it holds BatchCap
// commands.
func (g *GPU) Run(k Kernel) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usableLocked(); err != nil {
		return err
	}
	maxG := uint32(g.caps.MaxWorkgroupsPerDimension)
	for i, n := range k.Groups {
		if n > maxG {
			return fmt.Errorf("tessera: Run: Groups[%d] = %d exceeds the device's maxComputeWorkgroupsPerDimension %d (fold the grid into another dimension)", i, n, maxG)
		}
	}
	nb := len(k.Bindings)
	if nb > g.caps.MaxStorageBuffersPerStage || nb > 64 {
		return fmt.Errorf("tessera: Run: %d storage bindings exceed the device's limit of %d per kernel", nb, min(g.caps.MaxStorageBuffersPerStage, 64))
	}
	if len(k.Params) > g.caps.MaxParamsSize {
		return fmt.Errorf("tessera: Run: %d bytes of Params exceed the %d-byte params window", len(k.Params), g.caps.MaxParamsSize)
	}
	sig := sigKey{n: uint8(nb), params: len(k.Params) > 0}
	res := g.binds.resolved[:0]
	align := int64(g.caps.MinStorageOffsetAlignment)
	for i, bd := range k.Bindings {
		if err := g.checkBufLocked(bd.Buf, "Run"); err != nil {
			return fmt.Errorf("%w (binding %d)", err, i)
		}
		off, size := bd.Offset, bd.Size
		if off < 0 || size < 0 || off > bd.Buf.size {
			return fmt.Errorf("tessera: Run: binding %d: offset %d, size %d outside a %d-byte buffer", i, off, size, bd.Buf.size)
		}
		if off%align != 0 {
			return fmt.Errorf("tessera: Run: binding %d: offset %d is not a multiple of the device's minStorageBufferOffsetAlignment %d", i, off, align)
		}
		if size == 0 {
			size = bd.Buf.size - off
		}
		if off+size > bd.Buf.size {
			return fmt.Errorf("tessera: Run: binding %d: range [%d, %d) outside a %d-byte buffer", i, off, off+size, bd.Buf.size)
		}
		bsize := padQuantum(size) // the one rule: whole quanta, inside the block
		if bsize > g.caps.MaxStorageBindingSize {
			return &BindingTooLargeError{Binding: i, Size: bsize, Limit: g.caps.MaxStorageBindingSize}
		}
		if off+bsize > bd.Buf.blk.size {
			return fmt.Errorf("tessera: Run: binding %d: range [%d, %d) outside the %d-byte block", i, off, off+bsize, bd.Buf.blk.size)
		}
		if !bd.ReadOnly {
			sig.writable |= 1 << i
		}
		res = append(res, resolvedBinding{blk: bd.Buf.blk, off: off, size: bsize})
	}
	// wgpu tracks usage per buffer: a buffer bound read-only and read_write
	// in one dispatch is a usage conflict, so both become read_write.
	for i := range res {
		for j := i + 1; j < len(res); j++ {
			if res[i].blk == res[j].blk && (sig.writable>>i|sig.writable>>j)&1 != 0 {
				sig.writable |= 1<<i | 1<<j
			}
		}
	}
	g.binds.resolved = res
	if k.Groups[0] == 0 || k.Groups[1] == 0 || k.Groups[2] == 0 {
		return nil
	}
	entry := k.Entry
	if entry == "" {
		entry = "main"
	}
	p, err := g.pipes.get(k.Source, entry, sig)
	if err != nil {
		return err
	}
	g.pipes.observed(&k, entry, sig)
	var dyn uint32
	if sig.params {
		batch := g.stream.batch
		if dyn, err = g.reserveParamsLocked(k.Params); err != nil {
			return err
		}
		if g.stream.batch != batch {
			// reserveParams submitted the batch; a replay may have marked
			// an input failed.
			for _, bd := range k.Bindings {
				if err := g.checkFailedLocked("Run", bd.Buf); err != nil {
					return err
				}
			}
		}
	}
	bg, err := g.binds.get(p.layout, res)
	if err != nil {
		return err
	}
	pass, err := g.stream.computePass(g.dev)
	if err != nil {
		return err
	}
	pass.SetPipeline(p.pipe)
	pass.SetBindGroup(0, bg, nil)
	if sig.params {
		g.params.bind(pass, dyn)
	}
	groups := k.Groups
	if g.stream.fault != nil && g.stream.fault(k) {
		groups[0] = maxG + 1 // InjectFaultForTesting: wgpu rejects it at End
	}
	pass.DispatchWorkgroups(groups[0], groups[1], groups[2])
	g.stream.log.dispatch(k.Label, k.Bindings, p, bg, dyn, groups)
	for _, r := range res {
		r.blk.lastUse = g.stream.batch
	}
	g.stream.dispatches++
	return g.countCmdLocked()
}
