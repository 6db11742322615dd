// Package device is Tessera's WebGPU runtime: adapters, the caching
// allocator, the stream that batches recorded work into submissions, and
// the pipeline and bind-group caches. It knows nothing of tensors; it runs
// WGSL kernels over buffers. It is the only package that imports the
// WebGPU binding (wgpu-native 0.17 through go-webgpu 0.17.1), and the
// hazards of that version, measured on lavapipe and listed in DESIGN.md
// ("GPU runtime"), are its design: each is stated below with the code that
// enforces it. Without cgo the package builds (nocgo.go) and Open returns
// ErrNotCompiled.
//
// # Adapters and limits
//
// Adapters are enumerated once per process, one backend at a time in order
// of preference (Vulkan, Metal, DX12), dropping an adapter that a less
// preferred backend lists again; the GL backend is never used, because its
// instance creation can abort the process (adapter.go, select.go). "gpu:N"
// indexes that list. Open requests the device with the adapter's own
// limits, not WebGPU's defaults (128 MiB bindings, 8 storage buffers, 16
// KiB workgroup memory), and Caps reports them (gpu.go).
//
// # Batching and the submit points
//
// One submit costs ~70 µs on lavapipe against ~2 µs per recorded
// dispatch, so the GPU's stream (stream.go) records every dispatch into one
// open command encoder and compute pass, and copies and clears into the
// same encoder between passes (copyEncoderLocked), all in the order the
// calls were made. The open batch is submitted (flushLocked) only:
//
//   - when it holds BatchCap commands (countCmdLocked; Options.BatchCap,
//     SetBatchCap);
//   - when the params arena is full (reserveParamsLocked, params.go);
//   - on readback: Read records its copy, then submits and waits;
//   - on Flush and Sync, before Alloc reports out of memory, and at Close;
//   - at once when wgpu rejected a command, to replay the batch (see
//     below).
//
// After each submit at most Options.MaxInFlight submissions stay in
// flight: flushLocked waits on the oldest. Each submission keeps what its
// commands use outside the allocator (upload staging buffers, its params
// buffer) until its work-done callback fired (retireLocked).
//
// # WriteBuffer runs before unsubmitted work
//
// queue.WriteBuffer lands before every command not yet submitted. Write
// (transfer.go) uses it only when the open batch does not reference the
// destination's block (block.lastUse < the open batch); otherwise, which
// includes a block freed and handed out again inside the open batch, it
// uploads into a fresh staging buffer and records a copy in the encoder,
// ordered after the work that still reads the old contents. The params
// arena (params.go) is written with queue.WriteBuffer just before its
// batch is submitted, into a params buffer that only that batch uses (a
// buffer is pooled again only after its submission retired), so the write
// cannot overtake or clobber other work.
//
// # Never release what unsubmitted work references
//
// wgpu-native aborts the process when a buffer that unsubmitted work
// references is destroyed, or a bind group is released before its pass
// ended. Nothing here calls Destroy. Freed blocks go back to the
// allocator's free lists at once and may be reused within the batch, since
// whatever writes them next is ordered after the work that reads them
// (see allocator); a block is released to the driver only when its last
// batch completed (alloc.go: emptyCache, trim, no-cache mode). Cached bind
// groups are released only with such a block, or when the cache is
// trimmed right after a submit ended the pass (bindgroup.go). Upload
// staging buffers and params buffers are released or pooled when their
// submission retired (retireLocked); a readback staging buffer whose map
// timed out or failed is abandoned until Close (readback.go); and Close
// leaks the device rather than release anything while work is still in
// flight.
//
// # The budget: a typed out-of-memory error before the driver aborts
//
// This binding does not report out-of-memory as an error: the driver
// aborts. So the allocator enforces its own budget on the bytes it
// reserves (Options.Budget, TESSERA_GPU_BUDGET, DefaultBudget), and Alloc
// (memory.go) checks each block against Caps.MaxBufferSize. When a block
// does not fit, Alloc runs the garbage collector and the reclaim hook
// without the lock, waits for submitted work, empties the cache and
// retries once; then it returns an *OOMError that names the budget and
// TESSERA_GPU_BUDGET. A Copy within one buffer, whose temporary block
// does not fit, returns the same typed error at once.
//
// # Waits never block in wgpu, and never hang
//
// In wgpu-core 0.17 a blocking poll waits on the fence for at most 5 s and
// then takes the submission it waited for as finished even when it is
// still running (Device::maintain; gfx-rs/wgpu#4589): its work-done and
// map callbacks fire, its resources are freed, and a long dispatch (one
// 3072×3072 MatMul on lavapipe) read back zeros and then crashed the
// process. Every wait (Read's map callback, waitLocked's work-done
// callback) therefore goes through pollUntilLocked (stream.go), which
// polls without blocking — a non-blocking poll reads the fence's real
// value — sleeping between polls (at most maxPollSleep), up to
// Options.Timeout, then returns ErrTimeout and keeps the resources the
// work may still use. A lost device gives ErrDeviceLost.
//
// # Callback userdata
//
// The binding hands wgpu-native the address of a Go local as a callback's
// userdata, which the garbage collector may free before the callback
// fires. callbacks.go passes the cgo.Handle's integer value instead, for
// the work-done and map callbacks, so C keeps no Go pointer. The device
// has no DeviceLostCallback (cgo's pointer check rejects the binding's
// descriptor); device loss is detected from map callbacks (lostState).
//
// # Limits the caller must respect
//
// Run (run.go) checks every Kernel before touching wgpu and returns an
// error instead of letting wgpu reject it: each of Groups at most
// Caps.MaxWorkgroupsPerDimension (65535 on most devices: a kernel
// generator folds a larger grid into a second dimension; this package
// does not fold), at most Caps.MaxStorageBuffersPerStage (and 64) storage
// bindings, Params at most Caps.MaxParamsSize bytes, binding offsets
// multiples of Caps.MinStorageOffsetAlignment, and each binding at most
// Caps.MaxStorageBindingSize bytes (a *BindingTooLargeError: bind ranges
// of the buffer instead). There are no push constants, override
// constants, subgroups or f16 in this version: kernels are specialised by
// their WGSL text, pipelines are cached by source, entry point and binding
// signature (pipeline.go), and per-dispatch shapes and scalars go into the
// params arena, bound at a dynamic offset.
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
//
// # Locking
//
// One mutex, GPU.mu, guards all of a GPU's mutable state, split by concern
// into small types, each in its own file with its methods:
//
//   - stream (stream.go): the open batch's encoder and pass, its id,
//     command count, cap and validation error, its upload staging
//     buffers, its replay log (cmdLog, replay.go), the submissions in
//     flight, the last completed batch and the counters;
//   - paramsArena (params.go): the open batch's Params arena and params
//     buffer, the pool of params buffers, the params layout;
//   - pipelineCache (pipeline.go): pipelines and their bind group and
//     pipeline layouts;
//   - bindGroupCache (bindgroup.go): bind groups by layout and ranges;
//   - stagingPool (readback.go): readback staging buffers;
//   - allocator (alloc.go), over driverBuffers (memory.go): blocks, free
//     lists, budget and statistics;
//
// and GPU.closed, GPU.reclaim, and the mutable fields of the GPU's Buffers
// (freed, failed) and blocks (lastUse, state, bgKeys, raw). One lock is
// right because every operation goes through the stream, which orders
// them: a dispatch touches the pipeline and bind-group caches, the params
// arena, the allocator's blocks and the log together, and a submit touches
// every concern. Finer locks would be taken together on every call.
// Fields set by Open and never changed (info, caps, opts, the device and
// queue handles) are read without the lock; lostState and
// submission.done are atomics, set from callbacks.
//
// The discipline is checkable by name, and TestLockDiscipline checks it
// on the source: exported methods of GPU take g.mu (Info and Caps need
// not); every unexported GPU method is named …Locked and is called with
// g.mu held; the methods of the concern types are called only from those;
// a plain function that needs the lock says "Callers hold GPU.mu". Nothing
// called with the lock held takes it again. The lock is dropped only in
// Alloc, around the garbage collector and the reclaim hook, which may call
// Free. wgpu calls back only from inside Poll and Submit, made with the
// lock held, and the callbacks only set atomics.
package device

// BindingQuantum is the unit of every buffer and binding size: 16 bytes,
// one vec4<f32>, the largest element of Tessera's kernels.
const BindingQuantum = 16

// padQuantum rounds n bytes up to a multiple of BindingQuantum, at least
// one quantum.
func padQuantum(n int64) int64 {
	return (max(n, 1) + BindingQuantum - 1) &^ (BindingQuantum - 1)
}
