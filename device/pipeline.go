//go:build cgo

package device

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// sigKey is a kernel's binding signature: the number of storage bindings,
// which of them are read_write, and whether it takes Params.
type sigKey struct {
	n        uint8
	writable uint64
	params   bool
}

func (s sigKey) String() string {
	var b strings.Builder
	for i := 0; i < int(s.n); i++ {
		if s.writable>>i&1 != 0 {
			b.WriteByte('w')
		} else {
			b.WriteByte('r')
		}
	}
	if s.params {
		b.WriteString("+params")
	}
	return b.String()
}

type layoutKey struct {
	n        uint8
	writable uint64
}

// bgLayout is an explicit bind group layout for group 0 (never
// GetBindGroupLayout, which allocates per call and derives access from the
// shader's use instead of its declaration).
type bgLayout struct {
	id     uint32
	layout *wgpu.BindGroupLayout
}

type pipeKey struct {
	src, entry string
	sig        sigKey
}

// fastKey identifies a source string by its address and length, which is
// cheaper than hashing the text; the entry keeps that string alive so the
// address cannot be reused for other text.
type fastKey struct {
	ptr   *byte
	n     int
	entry string
	sig   sigKey
}

type fastEntry struct {
	p   *pipeline
	src string
}

type pipeline struct {
	pipe   *wgpu.ComputePipeline
	layout *bgLayout
	entry  string // for errors
	sig    sigKey
}

// bgEntry is a cached bind group. It lives until a block it references is
// released to the driver (only after that block's work finished) or the
// cache is trimmed at a flush (after the pass that used it ended).
type bgEntry struct {
	bg     *wgpu.BindGroup
	blocks []*block
	key    string
}

type resolvedBinding struct {
	blk       *block
	off, size int64
}

const (
	maxFastPipelines = 4096
	maxBindGroups    = 4096
)

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
	if err := g.usable(); err != nil {
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
	res := g.resolved[:0]
	align := int64(g.caps.MinStorageOffsetAlignment)
	for i, bd := range k.Bindings {
		if err := g.checkBuf(bd.Buf, "Run"); err != nil {
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
	g.resolved = res
	if k.Groups[0] == 0 || k.Groups[1] == 0 || k.Groups[2] == 0 {
		return nil
	}
	entry := k.Entry
	if entry == "" {
		entry = "main"
	}
	p, err := g.pipelineFor(k.Source, entry, sig)
	if err != nil {
		return err
	}
	var dyn uint32
	if sig.params {
		batch := g.batch
		if dyn, err = g.reserveParams(k.Params); err != nil {
			return err
		}
		if g.batch != batch {
			// reserveParams submitted the batch; a replay may have marked
			// an input failed.
			for _, bd := range k.Bindings {
				if err := g.checkFailed("Run", bd.Buf); err != nil {
					return err
				}
			}
		}
	}
	bg, err := g.bindGroupFor(p.layout, res)
	if err != nil {
		return err
	}
	pass, err := g.computePass()
	if err != nil {
		return err
	}
	pass.SetPipeline(p.pipe)
	pass.SetBindGroup(0, bg, nil)
	if sig.params {
		g.dyn[0] = dyn
		pass.SetBindGroup(1, g.slot.bg, g.dyn[:])
	}
	groups := k.Groups
	if g.fault != nil && g.fault(k) {
		groups[0] = maxG + 1 // InjectFaultForTesting: wgpu rejects it at End
	}
	pass.DispatchWorkgroups(groups[0], groups[1], groups[2])
	g.logDispatch(k.Label, k.Bindings, p, bg, dyn, groups)
	for _, r := range res {
		r.blk.lastUse = g.batch
	}
	g.dispatches++
	return g.countCmd()
}

// pipelineFor returns the cached pipeline for (source, entry, signature),
// compiling it on first use.
func (g *GPU) pipelineFor(src, entry string, sig sigKey) (*pipeline, error) {
	fk := fastKey{ptr: unsafe.StringData(src), n: len(src), entry: entry, sig: sig}
	if e, ok := g.fast[fk]; ok {
		return e.p, nil
	}
	pk := pipeKey{src: src, entry: entry, sig: sig}
	p := g.pipes[pk]
	if p == nil {
		var err error
		if p, err = g.createPipeline(src, entry, sig); err != nil {
			return nil, err
		}
		g.pipes[pk] = p
	}
	if len(g.fast) >= maxFastPipelines {
		clear(g.fast)
	}
	g.fast[fk] = fastEntry{p: p, src: src}
	return p, nil
}

func (g *GPU) createPipeline(src, entry string, sig sigKey) (*pipeline, error) {
	lk := layoutKey{n: sig.n, writable: sig.writable}
	bgl := g.layouts[lk]
	if bgl == nil {
		entries := make([]wgpu.BindGroupLayoutEntry, sig.n)
		for i := range entries {
			t := wgpu.BufferBindingType_ReadOnlyStorage
			if sig.writable>>i&1 != 0 {
				t = wgpu.BufferBindingType_Storage
			}
			// A declared minimum, so no binding is late-sized (see
			// the package doc).
			entries[i] = wgpu.BindGroupLayoutEntry{
				Binding: uint32(i), Visibility: wgpu.ShaderStage_Compute,
				Buffer: wgpu.BufferBindingLayout{Type: t, MinBindingSize: BindingQuantum},
			}
		}
		l, err := g.dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: "tessera " + sig.String(), Entries: entries})
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a bind group layout (%s): %w", sig, err)
		}
		bgl = &bgLayout{id: uint32(len(g.layouts) + 1), layout: l}
		g.layouts[lk] = bgl
	}
	pl := g.playouts[sig]
	if pl == nil {
		groups := []*wgpu.BindGroupLayout{bgl.layout}
		if sig.params {
			groups = append(groups, g.paramsLayout)
		}
		var err error
		pl, err = g.dev.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{Label: "tessera " + sig.String(), BindGroupLayouts: groups})
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a pipeline layout (%s): %w", sig, err)
		}
		g.playouts[sig] = pl
	}
	mod, err := g.dev.CreateShaderModule(&wgpu.ShaderModuleDescriptor{
		Label:          "tessera kernel",
		WGSLDescriptor: &wgpu.ShaderModuleWGSLDescriptor{Code: src},
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: compiling WGSL kernel: %w", err)
	}
	defer mod.Release()
	cp, err := g.dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Label:   "tessera kernel",
		Layout:  pl,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: entry},
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating compute pipeline (entry %q, bindings %s): %w", entry, sig, err)
	}
	return &pipeline{pipe: cp, layout: bgl, entry: entry, sig: sig}, nil
}

// bindGroupFor returns the cached bind group for the layout and ranges.
func (g *GPU) bindGroupFor(l *bgLayout, res []resolvedBinding) (*wgpu.BindGroup, error) {
	kb := binary.LittleEndian.AppendUint32(g.keyBuf[:0], l.id)
	for _, r := range res {
		kb = binary.LittleEndian.AppendUint64(kb, r.blk.id)
		kb = binary.LittleEndian.AppendUint64(kb, uint64(r.off))
		kb = binary.LittleEndian.AppendUint64(kb, uint64(r.size))
	}
	g.keyBuf = kb
	if e := g.bgs[string(kb)]; e != nil {
		return e.bg, nil
	}
	entries := make([]wgpu.BindGroupEntry, len(res))
	blocks := make([]*block, 0, len(res))
	for i, r := range res {
		entries[i] = wgpu.BindGroupEntry{Binding: uint32(i), Buffer: r.blk.raw.(*wgpu.Buffer), Offset: uint64(r.off), Size: uint64(r.size)}
		dup := false
		for _, b := range blocks {
			dup = dup || b == r.blk
		}
		if !dup {
			blocks = append(blocks, r.blk)
		}
	}
	bg, err := g.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Label: "tessera", Layout: l.layout, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating a bind group: %w", err)
	}
	e := &bgEntry{bg: bg, blocks: blocks, key: string(kb)}
	g.bgs[e.key] = e
	for _, b := range blocks {
		b.bgKeys = append(b.bgKeys, e.key)
	}
	return bg, nil
}

// dropBindGroups releases the cached bind groups that reference b.
func (g *GPU) dropBindGroups(b *block) {
	for _, key := range b.bgKeys {
		e := g.bgs[key]
		if e == nil {
			continue
		}
		delete(g.bgs, key)
		e.bg.Release()
		for _, o := range e.blocks {
			if o == b {
				continue
			}
			for i, k := range o.bgKeys {
				if k == key {
					o.bgKeys = append(o.bgKeys[:i], o.bgKeys[i+1:]...)
					break
				}
			}
		}
	}
	b.bgKeys = nil
}

// trimBindGroups empties the bind-group cache when it grew too large. Call
// only between a pass's End and the next pass.
func (g *GPU) trimBindGroups() {
	if len(g.bgs) <= maxBindGroups {
		return
	}
	g.releaseBindGroups()
}

func (g *GPU) releaseBindGroups() {
	for _, e := range g.bgs {
		e.bg.Release()
		for _, b := range e.blocks {
			b.bgKeys = nil
		}
	}
	clear(g.bgs)
}

// releasePipelines releases the bind-group, pipeline and layout caches.
func (g *GPU) releasePipelines() {
	g.releaseBindGroups()
	for _, p := range g.pipes {
		p.pipe.Release()
	}
	clear(g.pipes)
	clear(g.fast)
	for _, pl := range g.playouts {
		pl.Release()
	}
	clear(g.playouts)
	for _, l := range g.layouts {
		l.layout.Release()
	}
	clear(g.layouts)
}
