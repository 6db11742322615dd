// Package wgsl generates Tessera's WGSL compute kernels: one template per
// kernel shape (elementwise, reduce, argreduce, softmax, cumsum, tiled
// and naive matmul, gather (and SliceScatter), scatter (add or max),
// Philox, im2col and col2im, segmented attention with its backward passes), never one file per op.
// An op is data filled into a template: a WGSL expression from the op
// table in package tensor, an element type, a reduction name. Text goes
// in, a Kernel comes out; the package imports only the standard library
// and knows nothing of tensors or devices. Variants of a shape are data
// too (the tiled matmul's tile configurations, mmTiles), and code that
// kernels share is one sub-template ({{define}}, used by {{template}}):
// the row prologues and the workgroup tree reduction of rows.wgsl, the
// operand tile load of the tiled matmul. A fused elementwise expression
// (Fused: several ops' expressions over up to MaxFusedInputs inputs, one
// function per op, their scalars in the params) renders through the
// elementwise template too; the same functions are a matmul's epilogue
// (MatMulFused: applied to each product as it is stored) and a
// reduction's prologue (ReduceFused: computing each element it reads).
//
// A generator takes the operands' layouts (and the device Limits) and
// returns a Kernel: the WGSL source, the storage bindings it expects, its
// uniform parameters as bytes and the workgroup grid. The caller attaches
// a buffer to each binding by name and runs it (device.Run). Generators
// whose work may need several kernels (reductions, softmax, CumSum,
// scatters, matmul) return a Plan: kernels run in order, sharing an
// optional scratch buffer.
//
// # Conventions
//
// Element types are f32, i32 and bool, stored as f32, i32 and u32 (0 or
// 1). Expressions see a bool operand as a WGSL bool and may produce a
// bool, stored as 0 or 1. Kernels that only move elements (copy, gather,
// index_select) move u32 bits, so one pipeline serves every 4-byte type.
//
// Buffers are bound whole (or as ranges) as runtime-sized arrays; a view
// of one is a Layout: shape, strides and offset in elements relative to
// the start of the binding (a caller that binds a range at byte offset B
// subtracts B/4 from the offset). Strides are non-negative (0
// broadcasts). Generators drop extent-1 dimensions and merge dimensions
// that are contiguous in every operand, as the CPU kernels do; what is
// left may have at most MaxRank (8) dimensions, and a kernel is generated
// per coalesced rank, never per shape. Element offsets must stay below
// 2^32 and element counts below 2^31.
//
// Bindings are @group(0) @binding(i), i being the position in
// Kernel.Bindings: outputs first (read_write), then inputs, declared
// var<storage, read> exactly when Binding.ReadOnly. Each generator's doc
// lists its binding names. A kernel never binds one buffer twice with one
// binding writing (wgpu then needs both read_write): in-place elementwise
// ops read the aliased input through the output binding
// (ElementwiseArgs.Alias, LineArgs.InPlace). Reductions needing a
// temporary return a Plan whose Scratch bytes the caller allocates and
// binds as "scratch".
//
// Parameters are one uniform struct per kernel, var<uniform> params:
// Params at @group(1) @binding(0) (the device binds it with a dynamic
// offset). Its members are 4-byte scalars (u32, i32, f32) followed by
// arrays of vec4<u32> (shapes, strides, offsets: element i of an array is
// params.a[i/4][i%4], padded with 1 for shapes and 0 for strides), which
// obeys WGSL's uniform layout rules without explicit padding. The WGSL
// declaration and the little-endian bytes both come from one field list
// (Params), so they cannot disagree; every struct is a multiple of 16
// bytes and far below the device's 1 KiB window. Elementwise scalars p0
// and p1 are f32, or i32 (saturated) when the kernel's values are i32.
//
// Grids: 1-D kernels use workgroups of 256 invocations (fewer when
// Limits say so); more than MaxWorkgroupsPerDimension workgroups fold
// into (x, y) (Grid), and the shader recovers its linear index once as
// (workgroup_id.x + workgroup_id.y·num_workgroups.x)·256 +
// local_invocation_index, guarding the surplus. Kernels with one
// workgroup per row fold the same way; matmul puts batches in z and loops
// over batches beyond the limit.
//
// Sources are cached by template and data: each template's data is a
// plain comparable value holding only what its source depends on (types,
// mode, ranks, workgroup size; never extents, strides or scalars, which
// go to the params), and that value itself is the cache key, so no
// hand-built key can leave something out. Text derived from the data
// (the params struct, walks, prelude) comes from methods of the data and
// is computed only when the cache misses. Equal requests return the
// identical string, so the device's pipeline cache (keyed by source) hits
// without hashing.
//
// # Numerics
//
// Everything computes in f32: sums, softmax and matmul accumulate in f32
// where the CPU uses float64 for sums, so results agree within float
// tolerance. NaN tests are bit tests (the prelude's isnan_): lavapipe
// folds x != x to false, so expressions must not rely on it. lavapipe
// flushes subnormals to zero. Max/min reductions and softmax propagate
// NaN like torch. The prelude (Helpers) supplies erf_ (max error 2e-7),
// pow_ (C's special cases, exact small integral powers), log1p, and log_
// and tanh_, which fix lavapipe's poor relative accuracy of log near 1
// and tanh near 0. Philox words and [0, 1) uniforms are bitwise equal to
// the CPU's; normals agree within float tolerance.
//
// # Costs
//
// IndexAdd, IndexAmax and ScatterAdd avoid float atomics (WGSL has none)
// and stay deterministic: one invocation per destination element scans
// the index along dim, len(index) (or src's extent along dim) reads per
// element, and combines in the CPU's order, so results are bitwise equal. CumSum runs
// one invocation per line, serially along it; few long lines, and lines
// too long for one invocation's loops, run a chunked scan.
//
// # Loop trips
//
// lavapipe stops an invocation's loops after 65535 iterations in all
// (loops.go has the cost model), so no kernel lets one invocation's loops
// cost more than Limits.MaxLoopTrips, whatever the shape: each loop in
// the templates states its bound, and the planners split longer work into
// segments, chunks or more dispatches, combining partial results in a
// fixed order, so results stay deterministic.
package wgsl
