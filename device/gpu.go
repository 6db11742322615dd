//go:build cgo

package device

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/rajveermalviya/go-webgpu/wgpu"

	"github.com/tessera-ml/tessera/internal/gcpace"
)

// GPU is an opened WebGPU device: its stream (stream.go), which batches
// the recorded work into submissions, with the open batch's replay log
// (replay.go); its per-batch params arena (params.go); its pipeline and
// bind-group caches (pipeline.go, bindgroup.go); its readback staging pool
// (readback.go); and its caching allocator (alloc.go, memory.go). It is
// safe for use from multiple goroutines: one mutex, mu, guards all of that
// state (see "Locking" in the package doc).
type GPU struct {
	// Set by Open and never changed: read without the lock.
	info  AdapterInfo
	caps  Caps
	opts  Options
	dev   *wgpu.Device
	queue *wgpu.Queue
	lost  *lostState   // atomics, set from callbacks
	pace  gcpace.Pacer // atomics: collections for buffers dropped without Free

	// mu guards everything below, and the mutable fields of this GPU's
	// Buffers (freed, failed) and blocks (raw, lastUse, state, bgKeys).
	mu      sync.Mutex
	closed  bool
	reclaim func()         // runs before Alloc reports out of memory, without mu
	stream  stream         // encoder, pass, batch ids, submissions, replay log
	params  paramsArena    // the open batch's Params and the params buffers
	pipes   pipelineCache  // pipelines and their layouts
	binds   bindGroupCache // bind groups by layout and ranges
	staging stagingPool    // readback staging buffers
	alloc   *allocator     // the caching allocator, over driverBuffers
}

// lostState records that the device was lost.
type lostState struct {
	lost    atomic.Bool
	closing atomic.Bool
	msg     atomic.Pointer[string]
}

func (l *lostState) set(message string) {
	if l.closing.Load() {
		return
	}
	l.msg.Store(&message)
	l.lost.Store(true)
}

// Open selects an adapter (see Options) and requests a device with the
// adapter's own limits rather than WebGPU's defaults. It returns an error
// wrapping ErrNoAdapter when no adapter qualifies; it does not panic.
func Open(opts Options) (g *GPU, err error) {
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("tessera: opening the GPU failed: %v", r)
		}
	}()
	infos, err := Adapters()
	if err != nil {
		return nil, err
	}
	idx, err := chooseAdapter(infos, opts)
	if err != nil {
		return nil, err
	}
	adapter := adapterList.adapters[idx]
	limits := adapter.GetLimits().Limits
	// No DeviceLostCallback: the binding stores a Go pointer in the C
	// descriptor, which cgo's pointer check rejects at run time. Device loss
	// is detected from map callbacks instead.
	lost := &lostState{}
	dev, err := adapter.RequestDevice(&wgpu.DeviceDescriptor{
		Label:          "tessera",
		RequiredLimits: &wgpu.RequiredLimits{Limits: limits},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: requesting a device from %s: %v", ErrNoAdapter, infos[idx], err)
	}
	opts = opts.resolved()
	caps := capsFrom(dev.GetLimits().Limits)
	g = &GPU{info: infos[idx], caps: caps, opts: opts, dev: dev, queue: dev.GetQueue(), lost: lost}
	g.stream.init(opts.BatchCap)
	g.params, err = newParamsArena(dev, caps)
	if err != nil {
		g.queue.Release()
		dev.Release()
		return nil, err
	}
	g.pipes = newPipelineCache(dev, g.params.layout)
	g.binds = newBindGroupCache(dev)
	g.staging = newStagingPool(dev)
	g.alloc = newAllocator(driverBuffers{dev: dev, binds: &g.binds}, opts.Budget, opts.NoCache)
	g.alloc.maxBlock = caps.MaxBufferSize
	return g, nil
}

func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

func capsFrom(l wgpu.Limits) Caps {
	c := Caps{
		MaxStorageBindingSize:      clampInt64(l.MaxStorageBufferBindingSize),
		MaxBufferSize:              clampInt64(l.MaxBufferSize),
		MaxStorageBuffersPerStage:  int(l.MaxStorageBuffersPerShaderStage),
		MaxWorkgroupStorageSize:    int(l.MaxComputeWorkgroupStorageSize),
		MaxInvocationsPerWorkgroup: int(l.MaxComputeInvocationsPerWorkgroup),
		MaxWorkgroupSizeX:          int(l.MaxComputeWorkgroupSizeX),
		MaxWorkgroupSizeY:          int(l.MaxComputeWorkgroupSizeY),
		MaxWorkgroupSizeZ:          int(l.MaxComputeWorkgroupSizeZ),
		MaxWorkgroupsPerDimension:  int(l.MaxComputeWorkgroupsPerDimension),
		MinStorageOffsetAlignment:  max(int(l.MinStorageBufferOffsetAlignment), BindingQuantum),
		MinUniformOffsetAlignment:  max(int(l.MinUniformBufferOffsetAlignment), 1),
		MaxUniformBindingSize:      clampInt64(l.MaxUniformBufferBindingSize),
	}
	c.MaxParamsSize = int(min(int64(paramsWindow), c.MaxUniformBindingSize))
	return c
}

// Info describes the adapter the device was opened on.
func (g *GPU) Info() AdapterInfo { return g.info }

// Caps returns the device's limits.
func (g *GPU) Caps() Caps { return g.caps }

// usableLocked reports ErrClosed or ErrDeviceLost.
func (g *GPU) usableLocked() error {
	if g.closed {
		return ErrClosed
	}
	if g.lost.lost.Load() {
		msg := ""
		if p := g.lost.msg.Load(); p != nil {
			msg = *p
		}
		return fmt.Errorf("%w: %s", ErrDeviceLost, msg)
	}
	return nil
}

// checkBufLocked validates a caller's buffer.
func (g *GPU) checkBufLocked(b *Buffer, what string) error {
	switch {
	case b == nil:
		return fmt.Errorf("tessera: %s: nil buffer", what)
	case b.gpu != g:
		return fmt.Errorf("tessera: %s: buffer belongs to another GPU", what)
	case b.freed:
		return fmt.Errorf("tessera: %s: use of a freed buffer", what)
	case b.failed != nil:
		return fmt.Errorf("tessera: %s: %w", what, b.failed)
	}
	return nil
}

// checkFailedLocked reports the first of bufs that a failed batch marked
// failed (nil entries are skipped). Callers call it after anything that
// may have submitted the open batch, whose replay marks buffers.
func (g *GPU) checkFailedLocked(what string, bufs ...*Buffer) error {
	for _, b := range bufs {
		if b != nil && b.failed != nil {
			return fmt.Errorf("tessera: %s: %w", what, b.failed)
		}
	}
	return nil
}

// Close waits for submitted work, releases every resource (including
// buffers not freed) and the device. Later calls return ErrClosed; Free
// does nothing. Close is idempotent.
func (g *GPU) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	var err error
	if !g.lost.lost.Load() {
		err = g.syncLocked()
	}
	g.closed = true
	g.lost.closing.Store(true)
	if len(g.stream.inflight) > 0 {
		// Work did not finish (timeout): releasing what it uses could
		// abort the process, so leak the device instead.
		return err
	}
	g.stream.release()
	g.binds.release()
	g.pipes.release()
	g.params.release()
	g.staging.release()
	g.alloc.releaseAll()
	g.queue.Release()
	g.dev.Release()
	return err
}
