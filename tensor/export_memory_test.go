package tensor

// Hooks for the memory-ownership tests of package tensor_test.

// LiveStorages returns how many storages, on every device, still hold
// memory.
func LiveStorages() int64 { return liveStorages.Load() }

// StorageRefs returns how many references t's storage has.
func StorageRefs(t *Tensor) int64 { return t.ref.s.refs.Load() }

// StorageLive reports whether t's storage still holds memory.
func StorageLive(t *Tensor) bool { return t.ref.s.live() }

// ScopeDepth returns how many Scopes of the default context are open.
func ScopeDepth() int { return defaultContext.ScopeDepth() }

// ScopeDepth returns how many Scopes of c are open.
func (c *Context) ScopeDepth() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

// Tracked returns how many tensors the innermost open Scope of c owns.
func (c *Context) Tracked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.frames) == 0 {
		return 0
	}
	f := c.frames[len(c.frames)-1]
	n := 0
	for _, t := range f.created {
		if t.frame.Load() == f {
			n++
		}
	}
	return n
}
