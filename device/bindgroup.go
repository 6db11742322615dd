//go:build cgo

package device

import (
	"encoding/binary"
	"fmt"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// maxBindGroups bounds the bind-group cache; a fuller cache is emptied at
// the next submit.
const maxBindGroups = 4096

// bindGroupCache is the GPU's bind groups, cached by layout and the exact
// ranges they bind, and indexed from each block (block.bgKeys) so that
// releasing a block releases them. Bind groups are released only between
// passes (at a submit, when a block is released after its work finished,
// or at Close), never while a pass that uses them is open. Guarded by
// GPU.mu, like every concern of the GPU: its methods are called with the
// lock held.
type bindGroupCache struct {
	dev      *wgpu.Device
	bgs      map[string]*bgEntry
	keyBuf   []byte            // get's key, kept to avoid an allocation
	resolved []resolvedBinding // Run's validated bindings, kept likewise
}

// newBindGroupCache returns an empty cache of dev's bind groups.
func newBindGroupCache(dev *wgpu.Device) bindGroupCache {
	return bindGroupCache{dev: dev, bgs: map[string]*bgEntry{}}
}

// bgEntry is a cached bind group. It lives until a block it references is
// released to the driver (only after that block's work finished) or the
// cache is trimmed at a flush (after the pass that used it ended).
type bgEntry struct {
	bg     *wgpu.BindGroup
	blocks []*block
	key    string
}

// resolvedBinding is a validated binding: the range of a block it binds,
// its size padded to whole quanta.
type resolvedBinding struct {
	blk       *block
	off, size int64
}

// get returns the cached bind group for the layout and ranges.
func (c *bindGroupCache) get(l *bgLayout, res []resolvedBinding) (*wgpu.BindGroup, error) {
	kb := binary.LittleEndian.AppendUint32(c.keyBuf[:0], l.id)
	for _, r := range res {
		kb = binary.LittleEndian.AppendUint64(kb, r.blk.id)
		kb = binary.LittleEndian.AppendUint64(kb, uint64(r.off))
		kb = binary.LittleEndian.AppendUint64(kb, uint64(r.size))
	}
	c.keyBuf = kb
	if e := c.bgs[string(kb)]; e != nil {
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
	bg, err := c.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Label: "tessera", Layout: l.layout, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("tessera: creating a bind group: %w", err)
	}
	e := &bgEntry{bg: bg, blocks: blocks, key: string(kb)}
	c.bgs[e.key] = e
	for _, b := range blocks {
		b.bgKeys = append(b.bgKeys, e.key)
	}
	return bg, nil
}

// drop releases the cached bind groups that reference b (its block is
// being released to the driver, after its work finished).
func (c *bindGroupCache) drop(b *block) {
	for _, key := range b.bgKeys {
		e := c.bgs[key]
		if e == nil {
			continue
		}
		delete(c.bgs, key)
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

// trim empties the cache when it grew too large. Call only between a
// pass's End and the next pass.
func (c *bindGroupCache) trim() {
	if len(c.bgs) <= maxBindGroups {
		return
	}
	c.release()
}

// release releases every cached bind group.
func (c *bindGroupCache) release() {
	for _, e := range c.bgs {
		e.bg.Release()
		for _, b := range e.blocks {
			b.bgKeys = nil
		}
	}
	clear(c.bgs)
}
