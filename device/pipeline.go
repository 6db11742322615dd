//go:build cgo

package device

import (
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

// maxFastPipelines bounds the fast index of the pipeline cache.
const maxFastPipelines = 4096

// pipelineCache is the GPU's pipelines, cached by source, entry point and
// binding signature (with a fast index by the source string's address),
// and the bind group and pipeline layouts they use. Guarded by GPU.mu,
// like every concern of the GPU: its methods are called with the lock
// held.
type pipelineCache struct {
	dev          *wgpu.Device
	paramsLayout *wgpu.BindGroupLayout // @group(1) of kernels that take Params
	pipes        map[pipeKey]*pipeline
	fast         map[fastKey]fastEntry
	layouts      map[layoutKey]*bgLayout
	playouts     map[sigKey]*wgpu.PipelineLayout
	observe      func(PipelineUse) // ObservePipelinesForTesting
}

// newPipelineCache returns an empty cache of dev's pipelines.
func newPipelineCache(dev *wgpu.Device, paramsLayout *wgpu.BindGroupLayout) pipelineCache {
	return pipelineCache{
		dev: dev, paramsLayout: paramsLayout,
		pipes:    map[pipeKey]*pipeline{},
		fast:     map[fastKey]fastEntry{},
		layouts:  map[layoutKey]*bgLayout{},
		playouts: map[sigKey]*wgpu.PipelineLayout{},
	}
}

// get returns the cached pipeline for (source, entry, signature),
// compiling it on first use.
func (c *pipelineCache) get(src, entry string, sig sigKey) (*pipeline, error) {
	fk := fastKey{ptr: unsafe.StringData(src), n: len(src), entry: entry, sig: sig}
	if e, ok := c.fast[fk]; ok {
		return e.p, nil
	}
	pk := pipeKey{src: src, entry: entry, sig: sig}
	p := c.pipes[pk]
	if p == nil {
		var err error
		if p, err = c.create(src, entry, sig); err != nil {
			return nil, err
		}
		c.pipes[pk] = p
	}
	if len(c.fast) >= maxFastPipelines {
		clear(c.fast)
	}
	c.fast[fk] = fastEntry{p: p, src: src}
	return p, nil
}

// create compiles a pipeline, creating the layouts it needs.
func (c *pipelineCache) create(src, entry string, sig sigKey) (*pipeline, error) {
	lk := layoutKey{n: sig.n, writable: sig.writable}
	bgl := c.layouts[lk]
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
		l, err := c.dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: "tessera " + sig.String(), Entries: entries})
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a bind group layout (%s): %w", sig, err)
		}
		bgl = &bgLayout{id: uint32(len(c.layouts) + 1), layout: l}
		c.layouts[lk] = bgl
	}
	pl := c.playouts[sig]
	if pl == nil {
		groups := []*wgpu.BindGroupLayout{bgl.layout}
		if sig.params {
			groups = append(groups, c.paramsLayout)
		}
		var err error
		pl, err = c.dev.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{Label: "tessera " + sig.String(), BindGroupLayouts: groups})
		if err != nil {
			return nil, fmt.Errorf("tessera: creating a pipeline layout (%s): %w", sig, err)
		}
		c.playouts[sig] = pl
	}
	mod, err := c.dev.CreateShaderModule(&wgpu.ShaderModuleDescriptor{
		Label:          "tessera kernel",
		WGSLDescriptor: &wgpu.ShaderModuleWGSLDescriptor{Code: src},
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: compiling WGSL kernel: %w", err)
	}
	defer mod.Release()
	cp, err := c.dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{
		Label:   "tessera kernel",
		Layout:  pl,
		Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: entry},
	})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating compute pipeline (entry %q, bindings %s): %w", entry, sig, err)
	}
	return &pipeline{pipe: cp, layout: bgl, entry: entry, sig: sig}, nil
}

// observed reports the pipeline of one dispatch of k to the observer set
// by ObservePipelinesForTesting, if any.
func (c *pipelineCache) observed(k *Kernel, entry string, sig sigKey) {
	if c.observe == nil {
		return
	}
	w := make([]bool, sig.n)
	for i := range w {
		w[i] = sig.writable>>i&1 != 0
	}
	c.observe(PipelineUse{Label: k.Label, Source: k.Source, Entry: entry, Writable: w, Params: sig.params})
}

// ObservePipelinesForTesting is for tests only: from now on Run calls f
// for every dispatch it records, once the dispatch's pipeline compiled,
// with that pipeline's source, entry point and layout, so that a test can
// collect every WGSL source the library compiles (and compile them
// elsewhere, such as in a browser's WebGPU). f runs with the GPU's lock
// held and must not call the GPU. nil stops it.
func (g *GPU) ObservePipelinesForTesting(f func(PipelineUse)) {
	g.mu.Lock()
	g.pipes.observe = f
	g.mu.Unlock()
}

// release releases the pipelines and layouts (Close, after all work
// finished and the bind groups were released).
func (c *pipelineCache) release() {
	for _, p := range c.pipes {
		p.pipe.Release()
	}
	clear(c.pipes)
	clear(c.fast)
	for _, pl := range c.playouts {
		pl.Release()
	}
	clear(c.playouts)
	for _, l := range c.layouts {
		l.layout.Release()
	}
	clear(c.layouts)
}
