// Package device is Tessera's WebGPU runtime: adapters, the caching
// allocator, the stream that batches recorded work into submissions, and
// the pipeline and bind-group caches. It knows nothing of tensors; it runs
// WGSL kernels over buffers. DESIGN.md ("GPU runtime") lists the hazards of
// wgpu-native 0.17 that shape it.
//
// # One rule for every buffer and binding
//
// Every size the device hands to wgpu is a multiple of BindingQuantum (16
// bytes) and at least one quantum: Alloc's block holds the requested size
// rounded up to it, Run binds each binding's size rounded up to it (inside
// the buffer's block: binding offsets are multiples of
// Caps.MinStorageOffsetAlignment, which is at least the quantum), and every
// storage entry of a bind group layout declares a minimum binding size of
// one quantum. So no storage binding is "late-sized": wgpu checks each
// shader's minimum once, when the pipeline is created, and a kernel whose
// element type needs more than 16 bytes fails there with a clear error,
// never in the middle of a batch. (Without declared minimums wgpu derives
// them from the shader and, inside one compute pass, refreshes them only
// when the pipeline layout changes, so a vec4 kernel followed by a scalar
// kernel of the same binding signature made a valid 12-byte binding fail
// the whole batch.) Callers never pad: a buffer of n bytes may be bound
// whole, and kernels see at least its n bytes (arrayLength may count the
// padding).
//
// # A failed batch never loses work silently
//
// wgpu-native validates a compute pass when it ends, and an invalid pass
// invalidates the whole command encoder, so one rejected command used to
// discard every command recorded in its batch, from every goroutine. The
// stream keeps a host-side log of the open batch's commands (dispatches,
// copies, clears, staged uploads, with the buffers each reads and writes);
// when the batch fails validation it uploads the batch's parameters and
// replays the log in order, each command in its own encoder, and submits
// every command that validates. A command that fails marks each buffer it
// writes failed with a *CommandFailedError wrapping wgpu's error; a command
// that reads a failed buffer is skipped and its outputs are marked failed
// too. Every other command runs, in order, whichever goroutine recorded it.
// Flush and Sync then succeed; the failure is reported where it matters:
// Run, Read, Write, Fill and Copy on a failed buffer return an error
// wrapping the CommandFailedError. Free of a failed buffer works, and its
// block is reused clean. InjectFaultForTesting makes a chosen dispatch fail
// this way in tests.
package device

// BindingQuantum is the unit of every buffer and binding size: 16 bytes,
// one vec4<f32>, the largest element of Tessera's kernels.
const BindingQuantum = 16

// padQuantum rounds n bytes up to a multiple of BindingQuantum, at least
// one quantum.
func padQuantum(n int64) int64 {
	return (max(n, 1) + BindingQuantum - 1) &^ (BindingQuantum - 1)
}
