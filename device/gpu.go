//go:build cgo

package device

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rajveermalviya/go-webgpu/wgpu"
)

// GPU is an opened WebGPU device with its stream (one command encoder and
// compute pass that batch the recorded work), its caching allocator and its
// pipeline and bind-group caches. It is safe for use from multiple
// goroutines: one mutex serialises the stream.
type GPU struct {
	mu      sync.Mutex
	info    AdapterInfo
	caps    Caps
	opts    Options
	dev     *wgpu.Device
	queue   *wgpu.Queue
	alloc   *allocator
	reclaim func()
	lost    *lostState
	closed  bool

	// stream (stream.go)
	enc          *wgpu.CommandEncoder
	pass         *wgpu.ComputePassEncoder
	batch        uint64 // id of the open batch; batches are numbered from 1
	nCmds        int    // commands recorded in the open batch
	batchErr     error  // validation error that dooms the open batch
	batchCap     int
	batchRelease []*wgpu.Buffer // upload staging buffers of the open batch
	log          []loggedCmd    // the open batch's commands, for replay (replay.go)
	logBufs      []*Buffer      // the Buffers they read and write
	logXfers     []xferCmd      // their copies and clears
	fault        func(Kernel) bool
	replays      int64
	inflight     []*submission
	completed    uint64 // every batch <= completed has finished
	lastIndex    wgpu.SubmissionIndex
	dispatches   int64
	submits      int64

	// parameters (params.go)
	arena        []byte
	slot         *paramsSlot
	slots        []*paramsSlot
	paramsLayout *wgpu.BindGroupLayout
	dyn          [1]uint32

	// pipelines and bind groups (pipeline.go)
	pipes    map[pipeKey]*pipeline
	fast     map[fastKey]fastEntry
	layouts  map[layoutKey]*bgLayout
	playouts map[sigKey]*wgpu.PipelineLayout
	bgs      map[string]*bgEntry
	keyBuf   []byte
	resolved []resolvedBinding

	// readback (readback.go)
	staging      map[int64][]*wgpu.Buffer
	stagingBytes int64
	zombies      []*wgpu.Buffer
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
	g = &GPU{
		info:     infos[idx],
		caps:     capsFrom(dev.GetLimits().Limits),
		opts:     opts,
		dev:      dev,
		queue:    dev.GetQueue(),
		lost:     lost,
		batch:    1,
		batchCap: opts.BatchCap,
		pipes:    map[pipeKey]*pipeline{},
		fast:     map[fastKey]fastEntry{},
		layouts:  map[layoutKey]*bgLayout{},
		playouts: map[sigKey]*wgpu.PipelineLayout{},
		bgs:      map[string]*bgEntry{},
		staging:  map[int64][]*wgpu.Buffer{},
	}
	g.sizeLog(g.batchCap)
	g.alloc = newAllocator(g, opts.Budget, opts.NoCache)
	g.alloc.maxBlock = g.caps.MaxBufferSize
	g.paramsLayout, err = dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{
		Label: "tessera params",
		Entries: []wgpu.BindGroupLayoutEntry{{
			Binding:    0,
			Visibility: wgpu.ShaderStage_Compute,
			// The declared minimum is the whole window (what every params
			// bind group binds), so wgpu checks each kernel's Params struct
			// against it when the pipeline is created.
			Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingType_Uniform, HasDynamicOffset: true, MinBindingSize: uint64(g.caps.MaxParamsSize)},
		}},
	})
	if err != nil {
		g.queue.Release()
		dev.Release()
		return nil, fmt.Errorf("tessera: creating the params layout: %w", err)
	}
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

// usable reports ErrClosed or ErrDeviceLost; callers hold g.mu.
func (g *GPU) usable() error {
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

// checkBuf validates a caller's buffer; callers hold g.mu.
func (g *GPU) checkBuf(b *Buffer, what string) error {
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

// checkFailed reports the first of bufs that a failed batch marked failed
// (nil entries are skipped). Callers hold g.mu and call it after anything
// that may have submitted the open batch, whose replay marks buffers.
func (g *GPU) checkFailed(what string, bufs ...*Buffer) error {
	for _, b := range bufs {
		if b != nil && b.failed != nil {
			return fmt.Errorf("tessera: %s: %w", what, b.failed)
		}
	}
	return nil
}

// SetReclaim sets the hook that Alloc calls before reporting out of memory,
// after runtime.GC: the tensor layer uses it to wait for the cleanups that
// free GPU buffers of unreachable tensors. The hook runs without the GPU's
// lock held and may call Free.
func (g *GPU) SetReclaim(f func()) {
	g.mu.Lock()
	g.reclaim = f
	g.mu.Unlock()
}

// Alloc returns a buffer of size bytes from the caching allocator. Its
// contents are undefined (a reused block holds stale data). Its block holds
// at least size rounded up to BindingQuantum bytes, so the buffer can be
// bound whole (see the package doc). The block may be
// one freed inside the open batch that recorded work still reads; every way
// of writing it is ordered after that work (kernels, copies and clears in
// the encoder, Write through a staging copy), so callers need not care.
// When the block does not fit the budget, Alloc runs the garbage collector
// and the reclaim hook, waits for submitted work, empties the cache and
// retries once; then it returns an *OOMError (errors.Is(err,
// ErrOutOfMemory)).
func (g *GPU) Alloc(size int64) (*Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("tessera: Alloc: negative size %d", size)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.usable(); err != nil {
		return nil, err
	}
	padded := padQuantum(size)
	if g.alloc.blockSize(padded) > g.caps.MaxBufferSize {
		return nil, fmt.Errorf("tessera: Alloc: %s exceeds the device's maximum buffer size %s", FormatBytes(size), FormatBytes(g.caps.MaxBufferSize))
	}
	blk, err := g.alloc.alloc(padded, g.batch, g.completed)
	if err == errOverBudget {
		hook := g.reclaim
		g.mu.Unlock()
		runtime.GC()
		if hook != nil {
			hook()
		} else {
			time.Sleep(time.Millisecond) // let runtime cleanups run
		}
		g.mu.Lock()
		if err := g.usable(); err != nil {
			return nil, err
		}
		if err := g.syncLocked(); err != nil {
			return nil, err
		}
		g.alloc.emptyCache(g.completed)
		blk, err = g.alloc.alloc(padded, g.batch, g.completed)
		if err == errOverBudget {
			a := g.alloc
			return nil, &OOMError{Requested: size, Block: a.blockSize(padded), Allocated: a.allocated, Reserved: a.reserved, Budget: a.budget}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tessera: Alloc(%d): %w", size, err)
	}
	return &Buffer{gpu: g, blk: blk, size: size}, nil
}

// Free returns a buffer to the allocator. It is safe at any time, even while
// recorded but unsubmitted work reads the buffer: the block may be handed
// out again at once, within the same batch, because whatever writes it next
// is ordered after that work (see Alloc), and it is released to the driver
// only after that work finished. Free of a nil or already freed buffer, or
// after Close, does nothing.
func (g *GPU) Free(b *Buffer) {
	if b == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || b.freed || b.gpu != g {
		return
	}
	b.freed = true
	g.alloc.free(b.blk, g.batch, g.completed)
}

// createBuffer implements rawDevice.
func (g *GPU) createBuffer(size int64) (any, error) {
	return g.dev.CreateBuffer(&wgpu.BufferDescriptor{
		Label: "tessera",
		Usage: wgpu.BufferUsage_Storage | wgpu.BufferUsage_CopySrc | wgpu.BufferUsage_CopyDst,
		Size:  uint64(size),
	})
}

// releaseBuffer implements rawDevice; the allocator calls it only for blocks
// whose work has finished.
func (g *GPU) releaseBuffer(b *block) {
	g.dropBindGroups(b)
	if buf, ok := b.raw.(*wgpu.Buffer); ok && buf != nil {
		buf.Release()
	}
	b.raw = nil
}

// Stats returns the allocator's statistics.
func (g *GPU) Stats() MemStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.alloc.stats()
}

// EmptyCache returns cached blocks to the driver, except those that
// in-flight work still references.
func (g *GPU) EmptyCache() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.pollLocked()
	g.alloc.emptyCache(g.completed)
}

// ResetPeak sets the peak statistics to the current values.
func (g *GPU) ResetPeak() {
	g.mu.Lock()
	g.alloc.resetPeak()
	g.mu.Unlock()
}

// SetBudget sets the allocator's budget in bytes; 0 or less restores
// DefaultBudget. Blocks already reserved are kept.
func (g *GPU) SetBudget(bytes int64) {
	if bytes <= 0 {
		bytes = DefaultBudget
	}
	g.mu.Lock()
	g.alloc.budget = bytes
	g.mu.Unlock()
}

// DispatchCount returns the number of dispatches recorded so far.
func (g *GPU) DispatchCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dispatches
}

// ReplayCount returns the number of batches that failed validation and
// were replayed command by command (see the package doc). Valid work never
// needs a replay, so tests of valid work expect it unchanged.
func (g *GPU) ReplayCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.replays
}

// InjectFaultForTesting is for tests only: from now on, every dispatch
// for which match returns true is recorded with a workgroup count above
// the device's limit, bypassing Run's own check, so that wgpu rejects the
// batch when the compute pass ends, exactly as it rejects a real invalid
// dispatch. nil stops it. Tests use it to exercise the replay of a failed
// batch.
func (g *GPU) InjectFaultForTesting(match func(Kernel) bool) {
	g.mu.Lock()
	g.fault = match
	g.mu.Unlock()
}

// SubmitCount returns the number of submissions so far.
func (g *GPU) SubmitCount() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.submits
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
	if len(g.inflight) > 0 {
		// Work did not finish (timeout): releasing what it uses could
		// abort the process, so leak the device instead.
		return err
	}
	if g.pass != nil {
		g.pass.Release()
		g.pass = nil
	}
	if g.enc != nil {
		g.enc.Release()
		g.enc = nil
	}
	for _, b := range g.batchRelease {
		b.Release()
	}
	g.batchRelease = nil
	g.releasePipelines()
	g.releaseParams()
	g.releaseStaging()
	g.alloc.releaseAll()
	g.queue.Release()
	g.dev.Release()
	return err
}
