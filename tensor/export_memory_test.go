package tensor

// Hooks for the memory-ownership tests of package tensor_test.

// LiveStorages returns how many storages, on every device, still hold
// memory.
func LiveStorages() int64 { return liveStorages.Load() }

// StorageRefs returns how many references t's storage has.
func StorageRefs(t *Tensor) int64 { return t.ref.s.refs.Load() }

// StorageLive reports whether t's storage still holds memory.
func StorageLive(t *Tensor) bool { return t.ref.s.buf != nil }

// ScopeDepth returns how many Scopes are active.
func ScopeDepth() int {
	scopes.Lock()
	defer scopes.Unlock()
	return len(scopes.stack)
}
