package device

import (
	"fmt"
	"strings"
)

// AdapterInfo describes one adapter of the de-duplicated adapter list.
type AdapterInfo struct {
	Index   int    // position in the de-duplicated list ("gpu:N")
	Name    string // adapter name as the driver reports it
	Driver  string // driver description
	Backend string // "vulkan", "metal", "dx12", "dx11", "gl"
	Type    string // "discrete", "integrated", "cpu", "virtual", "unknown"
	IsCPU   bool   // a software adapter such as lavapipe/llvmpipe
}

// String renders the adapter for logs and `tessera devices`, saying whether
// it is a GPU or a CPU (software) adapter.
func (a AdapterInfo) String() string {
	kind := "GPU"
	if a.IsCPU {
		kind = "CPU adapter (software)"
	}
	s := fmt.Sprintf("gpu:%d %s [%s, %s, %s]", a.Index, a.Name, a.Backend, a.Type, kind)
	if a.Driver != "" {
		s += " driver " + a.Driver
	}
	return s
}

// Caps are the device limits that kernel generators and callers need, read
// from the device after it was requested with the adapter's limits.
type Caps struct {
	MaxStorageBindingSize      int64 // bytes one storage binding may cover
	MaxBufferSize              int64 // bytes of one buffer
	MaxStorageBuffersPerStage  int   // storage bindings per kernel
	MaxWorkgroupStorageSize    int   // bytes of var<workgroup> memory
	MaxInvocationsPerWorkgroup int   // product of the workgroup size
	MaxWorkgroupSizeX          int
	MaxWorkgroupSizeY          int
	MaxWorkgroupSizeZ          int
	MaxWorkgroupsPerDimension  int // bound on each of Kernel.Groups
	MinStorageOffsetAlignment  int // Binding.Offset must be a multiple; at least BindingQuantum
	MinUniformOffsetAlignment  int
	MaxUniformBindingSize      int64
	MaxParamsSize              int // bytes of Kernel.Params (the uniform window)
}

// A PipelineUse is the pipeline of one recorded dispatch, as the pipeline
// cache compiled it: the kernel's Label (the op's name), its WGSL Source
// and Entry point, and its binding signature, which is its pipeline
// layout: Writable[i] tells whether @group(0) @binding(i) has a
// read_write storage entry (else read-only), and Params whether
// @group(1) @binding(0) is the params uniform with a dynamic offset of
// Caps.MaxParamsSize bytes. Every storage entry declares a minimum binding
// size of BindingQuantum bytes. See ObservePipelinesForTesting.
type PipelineUse struct {
	Label, Source, Entry string
	Writable             []bool
	Params               bool
}

// Binding is one storage buffer binding of a kernel, @group(0) @binding(i).
// Run binds Size rounded up to BindingQuantum bytes (at least one
// quantum), which stays inside the buffer's block (see the package doc).
type Binding struct {
	Buf      *Buffer
	Offset   int64 // bytes; a multiple of Caps.MinStorageOffsetAlignment
	Size     int64 // bytes; 0 = the rest of the buffer from Offset
	ReadOnly bool  // var<storage, read> (else var<storage, read_write>)
}

// Kernel is one compute dispatch.
type Kernel struct {
	// Label names the kernel in errors, such as the CommandFailedError of
	// a kernel that failed validation (the tensor layer passes the op's
	// name); "" names it by entry point and binding signature.
	Label string
	// Source is the WGSL text; pipelines are cached by source text and
	// binding signature.
	Source string
	// Entry is the entry point; "" means "main".
	Entry string
	// Bindings are @group(0) @binding(i), in order. A read-only binding is
	// declared var<storage, read> in the shader, any other
	// var<storage, read_write>. When one buffer is bound more than once and
	// one of the bindings writes (an in-place op), all its bindings get
	// read_write layout entries, because wgpu tracks usage per buffer and a
	// read-only plus a read_write use conflict; wgpu 0.17 accepts a
	// var<storage, read> declaration under a read_write entry, so the
	// shader text need not change.
	Bindings []Binding
	// Params, if not empty, is bound as @group(1) @binding(0)
	// var<uniform> params, at a dynamic offset into a per-batch arena that is
	// uploaded once per submission. It is padded to 16 bytes and may be at
	// most Caps.MaxParamsSize bytes.
	Params []byte
	// Groups are the workgroup counts; each must be at most
	// Caps.MaxWorkgroupsPerDimension.
	Groups [3]uint32
}

// MemStats are the caching allocator's statistics. Byte counts are of
// blocks (size classes), as in PyTorch's allocator.
type MemStats struct {
	Allocated     int64 // bytes in blocks handed out and not freed
	Reserved      int64 // bytes in all blocks held from the driver
	PeakAllocated int64
	PeakReserved  int64
	Pending       int64 // bytes of cached blocks still referenced by the open batch (reusable as outputs now; uploads into them are staged; releasable once the batch finished)
	Allocs        int64 // Alloc calls that succeeded
	Frees         int64
	CacheHits     int64 // allocations served from the cache
	CacheMisses   int64 // allocations that created a driver buffer
	Releases      int64 // blocks returned to the driver
	Classes       []ClassStats
	Budget        int64
}

// ClassStats are the statistics of one size class.
type ClassStats struct {
	Size   int64 // block size of the class
	Cached int   // blocks in the free list
	InUse  int   // blocks handed out
	Hits   int64 // requests of this class served from the cache
	Misses int64 // requests of this class that created a block
}

// String renders an abridged summary in the spirit of
// torch.cuda.memory_summary.
func (s MemStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "GPU memory (budget %s)\n", FormatBytes(s.Budget))
	fmt.Fprintf(&b, "  allocated %10s   peak %10s\n", FormatBytes(s.Allocated), FormatBytes(s.PeakAllocated))
	fmt.Fprintf(&b, "  reserved  %10s   peak %10s\n", FormatBytes(s.Reserved), FormatBytes(s.PeakReserved))
	if s.Pending > 0 {
		fmt.Fprintf(&b, "  pending   %10s   (cached, still used by the open batch)\n", FormatBytes(s.Pending))
	}
	rate := 0.0
	if n := s.CacheHits + s.CacheMisses; n > 0 {
		rate = 100 * float64(s.CacheHits) / float64(n)
	}
	fmt.Fprintf(&b, "  allocs %d  frees %d  cache hits %d  misses %d (%.1f%% hit)  released %d\n",
		s.Allocs, s.Frees, s.CacheHits, s.CacheMisses, rate, s.Releases)
	if len(s.Classes) > 0 {
		fmt.Fprintf(&b, "  %12s %7s %7s %9s %9s\n", "size class", "in use", "cached", "hits", "misses")
		for _, c := range s.Classes {
			fmt.Fprintf(&b, "  %12s %7d %7d %9d %9d\n", FormatBytes(c.Size), c.InUse, c.Cached, c.Hits, c.Misses)
		}
	}
	return b.String()
}
