package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/gcpace"
)

// cpuPool caches released CPU buffers by dtype and power-of-two capacity,
// so a training loop that allocates the same shapes every step reuses
// its memory instead of asking the garbage collector for more. It holds
// at most cpuPoolLimit bytes: a buffer released into a full pool takes
// the place of those of the classes used least recently (a process
// whose shapes change, a benchmark going from one workload to the next,
// keeps the buffers it uses now), or goes to the GC when it cannot.
var cpuPool = &slicePool{}

const cpuPoolLimit = 512 << 20

type poolKey struct {
	dt    DType
	class int // capacity, a power of two
}

type slicePool struct {
	mu     sync.Mutex
	free   [numDTypes][poolClasses][]any  // by dtype and log2 of the class
	used   [numDTypes][poolClasses]uint64 // when each free list was last taken from or given to, by tick
	tick   uint64
	cached int // bytes held in free
	limit  int // most bytes held; 0: cpuPoolLimit (tests set less)
}

// max returns the most bytes p holds.
func (p *slicePool) max() int {
	if p.limit > 0 {
		return p.limit
	}
	return cpuPoolLimit
}

// touch marks k's free list used now.
func (p *slicePool) touch(k poolKey) {
	p.tick++
	p.used[k.dt][bits.Len(uint(k.class))-1] = p.tick
}

// evict drops cached buffers, oldest first from the free lists used
// least recently, other than k's, until need more bytes fit, and
// reports whether they do.
func (p *slicePool) evict(need int, k poolKey) bool {
	keep := &p.free[k.dt][bits.Len(uint(k.class))-1]
	for p.cached+need > p.max() {
		var oldest *[]any
		var when uint64
		for dt := range p.free {
			for c := range p.free[dt] {
				if l := &p.free[dt][c]; len(*l) > 0 && l != keep && (oldest == nil || p.used[dt][c] < when) {
					oldest, when = l, p.used[dt][c]
				}
			}
		}
		if oldest == nil {
			return false
		}
		dt, class := bufInfo((*oldest)[0])
		bytes := class * dt.Size()
		(*oldest)[0] = nil
		*oldest = (*oldest)[1:]
		p.cached -= bytes
		cpuMem.reserved.Add(-int64(bytes))
	}
	return true
}

// poolClasses bounds the log2 of a cached capacity (cpuPoolLimit
// bytes at most).
const poolClasses = 64

// list returns the free list of k.
func (p *slicePool) list(k poolKey) *[]any {
	return &p.free[k.dt][bits.Len(uint(k.class))-1]
}

func sizeClass(n int) int {
	if n <= 16 {
		return 16
	}
	return 1 << bits.Len(uint(n-1))
}

// get returns a slice of n elements of dt; its contents are undefined.
// A new buffer is first reserved against the CPU budget (cpuReserve):
// a request that cannot be met is an out-of-memory error, never Go's
// fatal one. Buffers too large to cache are allocated at their exact
// size.
func (p *slicePool) get(dt DType, n int) (any, error) {
	if n < 0 {
		return nil, fmt.Errorf("tensor: negative element count %d", n)
	}
	if n > p.max()/dt.Size() { // never cached: no rounding up
		return p.fresh(dt, n, n)
	}
	k := poolKey{dt, sizeClass(n)}
	p.mu.Lock()
	fl := p.list(k)
	if l := *fl; len(l) > 0 {
		p.touch(k)
		// Prefer a buffer last handed out at this very length: it goes
		// back as the interface value it is, where reslicing would
		// allocate a new one. A loop's shapes recur every step.
		last := len(l) - 1
		for i := last; i >= max(0, last-poolExactScan); i-- {
			if bufLen(l[i]) == n {
				l[i], l[last] = l[last], l[i]
				break
			}
		}
		buf := l[last]
		l[last] = nil
		*fl = l[:last]
		p.cached -= k.class * dt.Size()
		inUse := p.inUseLocked()
		p.mu.Unlock()
		cpuPaced(inUse)
		if bufLen(buf) == n {
			return buf, nil
		}
		return reslice(buf, n), nil
	}
	p.mu.Unlock()
	return p.fresh(dt, n, k.class)
}

// cpuPace watches the bytes of CPU buffers handed out by the pool, so
// that a loop that drops its tensors without Release or Scope has them
// collected before it holds much more than it uses (package gcpace; the
// package doc has the figures).
var cpuPace gcpace.Pacer

// cpuPaced runs, when cpuPace says so after an allocation left inUse
// bytes handed out, the collector that gives dropped buffers back.
func cpuPaced(inUse int64) {
	if cpuPace.Grown(inUse) {
		cpuPace.Collect(cpuPool.inUse)
	}
}

// inUseLocked returns the bytes of the buffers handed out: those
// reserved less those cached. Callers hold p.mu.
func (p *slicePool) inUseLocked() int64 { return cpuMem.reserved.Load() - int64(p.cached) }

// inUse is inUseLocked, taking p.mu.
func (p *slicePool) inUse() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUseLocked()
}

// fresh makes a buffer of n elements and capacity c, reserved first
// against the CPU budget.
func (p *slicePool) fresh(dt DType, n, c int) (any, error) {
	if err := cpuReserve(dt, c); err != nil {
		return nil, err
	}
	cpuPaced(p.inUse())
	switch dt {
	case Float32:
		return make([]float32, n, c), nil
	case Float64:
		return make([]float64, n, c), nil
	case Int32:
		return make([]int32, n, c), nil
	}
	return make([]bool, n, c), nil
}

// put caches buf for reuse, or lets the garbage collector have it (and
// returns its bytes to the CPU budget).
func (p *slicePool) put(buf any) {
	dt, c := bufInfo(buf)
	bytes := c * dt.Size()
	k := poolKey{dt, c}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() { cpuPace.Shrunk(p.inUseLocked()) }() // before the unlock
	if c != sizeClass(c) || bytes > p.max() || !p.evict(bytes, k) {
		cpuMem.reserved.Add(-int64(bytes))
		return
	}
	p.touch(k)
	fl := p.list(k)
	*fl = append(*fl, buf)
	p.cached += bytes
}

// emptyCache drops every cached buffer.
func (p *slicePool) emptyCache() {
	p.mu.Lock()
	p.free = [numDTypes][poolClasses][]any{}
	p.used = [numDTypes][poolClasses]uint64{}
	cpuMem.reserved.Add(-int64(p.cached))
	p.cached = 0
	p.mu.Unlock()
}

func bufInfo(buf any) (DType, int) {
	switch b := buf.(type) {
	case []float32:
		return Float32, cap(b)
	case []float64:
		return Float64, cap(b)
	case []int32:
		return Int32, cap(b)
	case []bool:
		return Bool, cap(b)
	}
	panic("tensor: unknown CPU buffer")
}

// poolExactScan is how many buffers below the top of a free list get
// looks at for one of the exact length asked for.
const poolExactScan = 8

// bufLen returns the length of a CPU buffer.
func bufLen(buf any) int {
	switch b := buf.(type) {
	case []float32:
		return len(b)
	case []float64:
		return len(b)
	case []int32:
		return len(b)
	case []bool:
		return len(b)
	}
	panic("tensor: unknown CPU buffer")
}

func reslice(buf any, n int) any {
	switch b := buf.(type) {
	case []float32:
		return b[:n]
	case []float64:
		return b[:n]
	case []int32:
		return b[:n]
	case []bool:
		return b[:n]
	}
	panic("tensor: unknown CPU buffer")
}

// EmptyCache returns cached, unused memory of every device to its
// allocator (the Go heap on the CPU, the driver on the GPU).
func EmptyCache() { cpuPool.emptyCache(); gpuEmptyCache() }

// cpuReserve accounts a new buffer of n elements of dt against the CPU
// budget. When it does not fit, it collects dropped tensors (their
// runtime cleanups return buffers) and empties the pool's cache once
// before giving up with an *OOMError.
func cpuReserve(dt DType, n int) error {
	budget, err := CPUBudget()
	if err != nil {
		return err
	}
	if int64(n) > budget/int64(dt.Size()) { // can never fit: no need to collect
		return cpuOOM(n, dt.Size(), budget)
	}
	bytes := int64(n * dt.Size())
	for retry := false; ; retry = true {
		if cpuMem.reserved.Add(bytes) <= budget {
			return nil
		}
		cpuMem.reserved.Add(-bytes)
		if retry {
			return cpuOOM(n, dt.Size(), budget)
		}
		cpuCollect()
	}
}

// cpuCollect returns to the budget what dropped tensors hold: it runs
// the collector so their runtime cleanups return their buffers, and
// empties the pool's cache. Budget checks call it once before refusing.
func cpuCollect() {
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // let cleanup goroutines run
	runtime.GC()
	cpuPool.emptyCache()
}

// alloc allocates a buffer of n elements of dt on dev through the
// dispatch table (storage.init calls it). A GPU request larger than the
// device's largest buffer (or than 2^63 bytes) is an *OOMError here; the
// GPU allocator reports its own budget with a *device.OOMError, and the
// CPU pool the CPU budget, both wrapping ErrOutOfMemory.
func alloc(dt DType, n int, dev Device) (any, error) {
	b := backendOf(dev)
	if g, ok := b.(*gpuBackend); ok {
		if maxBuf := g.g.Caps().MaxBufferSize; n > math.MaxInt64/16 || (maxBuf > 0 && int64(n) > maxBuf/4) {
			return nil, &OOMError{Device: dev, Requested: requestText(n, 4), Limit: maxBuf,
				Reason: fmt.Sprintf("the device's largest buffer holds %s", device.FormatBytes(maxBuf))}
		}
	}
	return b.alloc(dt, n)
}

// checkHostAlloc panics with an out-of-memory *Error for op when n host
// elements of elemSize bytes each would not fit beside the CPU tensors
// within the budget. Ops call it before making a host slice (creation
// from generated values, reading a tensor out). Like cpuReserve, it
// collects dropped tensors once before refusing.
func checkHostAlloc(op string, n, elemSize int, ts ...*Tensor) {
	budget, err := CPUBudget()
	fits := func() bool { return int64(n) <= (budget-cpuMem.reserved.Load())/int64(elemSize) }
	if err == nil && fits() {
		return
	}
	if err == nil && int64(n) <= budget/int64(elemSize) { // may fit once dropped tensors are collected
		if cpuCollect(); fits() {
			return
		}
	}
	if err == nil {
		err = cpuOOM(n, elemSize, budget)
	}
	fail(op, err, "", ts...)
}

// checkFits panics with an out-of-memory *Error for op when a tensor of
// n elements of dt cannot be allocated on dev now. Ops that do much work
// before allocating their result (OneHot builds its classes first) call
// it on entry.
func checkFits(op string, dt DType, n int, dev Device, ts ...*Tensor) {
	if dev.Kind == KindCPU {
		checkHostAlloc(op, n, dt.Size(), ts...)
		return
	}
	g, err := GPUDevice(dev)
	if err != nil {
		return // the allocation will say why
	}
	st, maxBuf := g.Stats(), g.Caps().MaxBufferSize
	limit := st.Budget - st.Allocated
	if maxBuf > 0 {
		limit = min(limit, maxBuf)
	}
	if int64(n) > limit/4 {
		fail(op, &OOMError{Device: dev, Requested: requestText(n, 4), Limit: limit, Reason: fmt.Sprintf(
			"%s of the device's %s budget are in use and its largest buffer holds %s; free tensors sooner, or raise the budget with %s",
			device.FormatBytes(st.Allocated), device.FormatBytes(st.Budget), device.FormatBytes(maxBuf), device.BudgetEnv)}, "", ts...)
	}
}

// An OOMError reports a request for memory that cannot be met: beyond
// the CPU budget (CPUBudgetInfo says what set it), or beyond the
// largest buffer a GPU can make. It wraps ErrOutOfMemory, as the GPU
// allocator's *device.OOMError does.
type OOMError struct {
	Device    Device
	Requested string // the bytes asked for: "4.00 TiB (4398046511104 bytes)"
	Limit     int64  // the bytes the request exceeds
	Reason    string // what the limit is, and how to raise it
}

func cpuOOM(n, elemSize int, budget int64) *OOMError {
	source := "a test's SetCPUBudget"
	if cpuMem.budget.Load() <= 0 {
		if info, err := CPUBudgetInfo(); err == nil {
			source = info.Source
		}
	}
	return &OOMError{Device: CPU, Requested: requestText(n, elemSize), Limit: budget, Reason: fmt.Sprintf(
		"%s are held by CPU tensors of a %s budget set by %s; free tensors sooner, or raise the budget with %s (e.g. %s=32GiB) if the process may use more memory",
		device.FormatBytes(cpuMem.reserved.Load()), device.FormatBytes(budget), source, CPUBudgetEnv, CPUBudgetEnv)}
}

// requestText renders n elements of elemSize bytes for a message.
func requestText(n, elemSize int) string {
	if int64(n) > math.MaxInt64/int64(elemSize) {
		return fmt.Sprintf("%d elements of %d bytes", n, elemSize)
	}
	b := int64(n) * int64(elemSize)
	return fmt.Sprintf("%s (%d bytes)", device.FormatBytes(b), b)
}

// Error names the device, the request and the limit.
func (e *OOMError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("tessera: %v out of memory: tried to allocate %s; %s", e.Device, e.Requested, e.Reason)
}

// Unwrap returns ErrOutOfMemory.
func (e *OOMError) Unwrap() error { return ErrOutOfMemory }
