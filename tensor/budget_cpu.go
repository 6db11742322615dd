package tensor

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/memlimit"
)

// The CPU budget: the bytes CPU tensors may hold, read from the limits
// the process runs under (package memlimit) so that a request beyond
// them is an *OOMError rather than the Go runtime's fatal "out of
// memory", which nothing can recover from.

// CPUBudgetEnv is the environment variable that caps the bytes CPU
// tensors may hold, parsed as TESSERA_GPU_BUDGET is (device.ParseBytes:
// "12GiB", "8e9"). Unset or 0, the budget is the tightest of the limits
// CPUBudgetInfo describes.
const CPUBudgetEnv = "TESSERA_CPU_BUDGET"

// defaultCPUBudget is the budget where physical memory cannot be read.
const defaultCPUBudget = 8 << 30

// Headroom, left beside the tensors under a hard limit for what else the
// Go runtime maps (goroutine stacks, collector metadata, heap that is
// not tensors, garbage awaiting collection): headroomFloor plus
// 1/headroomShare of what the limit leaves available.
const (
	headroomFloor = 64 << 20
	headroomShare = 8
)

// cpuMem accounts the CPU memory of tensors: reserved counts the bytes
// of every buffer the pool made and still holds or has handed out.
var cpuMem struct {
	reserved atomic.Int64
	budget   atomic.Int64 // set by a test; 0 means the environment's

	mu   sync.Mutex
	info atomic.Pointer[BudgetInfo] // the environment's, once read
	err  error
}

// A BudgetInfo says what the CPU budget is and what set it.
type BudgetInfo struct {
	Bytes  int64  // the budget: bytes CPU tensors may hold
	Source string // what set it: "TESSERA_CPU_BUDGET", "physical memory (MemTotal)", "RLIMIT_AS (ulimit -v)", a cgroup file...
	// Limit and Used are the limit that set the budget and the bytes of
	// it already in use by other than Go's memory when it was read; 0
	// for TESSERA_CPU_BUDGET and GOMEMLIMIT.
	Limit, Used int64
	// Headroom is what a hard limit leaves beside the tensors for the
	// rest of the Go runtime: 64 MiB plus 1/8 of what is available.
	Headroom int64
	// GoMemoryLimit is the soft memory limit given to the Go runtime
	// (debug.SetMemoryLimit) so that its collector works harder before
	// a hard limit is reached; 0 when the runtime's own is kept (none
	// applies, or GOMEMLIMIT was set).
	GoMemoryLimit int64
}

// String says the budget and what set it, in one line.
func (b BudgetInfo) String() string {
	s := fmt.Sprintf("%s, set by %s", device.FormatBytes(b.Bytes), b.Source)
	if b.Limit > 0 && b.Headroom > 0 {
		s += fmt.Sprintf(" (limit %s, %s in use outside Go's heap, %s left for the Go runtime)",
			device.FormatBytes(b.Limit), device.FormatBytes(b.Used), device.FormatBytes(b.Headroom))
	}
	if b.GoMemoryLimit > 0 {
		s += fmt.Sprintf("; Go memory limit set to %s", device.FormatBytes(b.GoMemoryLimit))
	}
	return s
}

// CPUBudget returns the bytes CPU tensors may hold, or the error of a
// malformed TESSERA_CPU_BUDGET. CPUBudgetInfo says how it was chosen.
func CPUBudget() (int64, error) {
	if b := cpuMem.budget.Load(); b > 0 {
		return b, nil
	}
	info, err := CPUBudgetInfo()
	return info.Bytes, err
}

// CPUBudgetInfo returns the CPU budget and what set it: TESSERA_CPU_BUDGET
// when set, else the tightest of the machine's physical memory, a soft
// memory limit of the Go runtime (GOMEMLIMIT), and what the hard limits
// leave (a cgroup's memory.max or memory.limit_in_bytes at any level,
// RLIMIT_AS, RLIMIT_DATA; each less what is in use and less a headroom
// for the Go runtime). It is read on first use and again when a GPU
// opens (a driver maps memory of its own). Under a hard limit, and
// unless GOMEMLIMIT is set, it also sets the Go runtime's soft memory
// limit to half the headroom below the hard one.
func CPUBudgetInfo() (BudgetInfo, error) {
	if p := cpuMem.info.Load(); p != nil {
		return *p, nil
	}
	cpuMem.mu.Lock()
	defer cpuMem.mu.Unlock()
	if p := cpuMem.info.Load(); p != nil || cpuMem.err != nil {
		if p == nil {
			return BudgetInfo{}, cpuMem.err
		}
		return *p, nil
	}
	info, err := readCPUBudget()
	if err != nil {
		cpuMem.err = err
		return BudgetInfo{}, err
	}
	cpuMem.info.Store(&info)
	return info, nil
}

// refreshCPUBudget reads the CPU budget again (a GPU driver just mapped
// memory of its own).
func refreshCPUBudget() {
	cpuMem.mu.Lock()
	defer cpuMem.mu.Unlock()
	if info, err := readCPUBudget(); err == nil {
		cpuMem.info.Store(&info)
	}
}

// goMemoryLimitSet is the Go memory limit this package set, so that a
// second reading can tell its own from the user's.
var goMemoryLimitSet atomic.Int64

// readCPUBudget reads the environment's budget and, under a hard limit,
// sets the Go runtime's soft memory limit. Called with cpuMem.mu held.
func readCPUBudget() (BudgetInfo, error) {
	goLimit := debug.SetMemoryLimit(-1)
	if goLimit == goMemoryLimitSet.Load() {
		goLimit = math.MaxInt64 // ours, not the user's
	}
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(sample)
	goMapped := int64(sample[0].Value.Uint64())
	info, err := cpuBudgetFrom(os.Getenv(CPUBudgetEnv), memlimit.Read(memlimit.OS(goMapped)), goLimit)
	if err != nil {
		return info, err
	}
	if info.Headroom > 0 && goLimit == math.MaxInt64 {
		info.GoMemoryLimit = goMapped + info.Limit - info.Used - info.Headroom/2
		goMemoryLimitSet.Store(info.GoMemoryLimit)
		debug.SetMemoryLimit(info.GoMemoryLimit)
	}
	return info, nil
}

// cpuBudgetFrom computes the budget from TESSERA_CPU_BUDGET's value env,
// the limits memlimit.Read found and Go's soft memory limit goLimit
// (math.MaxInt64 when there is none).
func cpuBudgetFrom(env string, limits []memlimit.Limit, goLimit int64) (BudgetInfo, error) {
	if env = strings.TrimSpace(env); env != "" {
		n, err := device.ParseBytes(env)
		if err != nil {
			return BudgetInfo{}, fmt.Errorf("tessera: %s=%q: %w", CPUBudgetEnv, env, err)
		}
		if n > 0 {
			return BudgetInfo{Bytes: n, Source: CPUBudgetEnv + "=" + env}, nil
		}
	}
	b := BudgetInfo{Bytes: defaultCPUBudget, Source: "the default (physical memory could not be read)"}
	for _, l := range limits {
		if !l.Hard { // physical memory, which replaces the default
			b = BudgetInfo{Bytes: l.Bytes, Source: l.Name}
		}
	}
	if goLimit > 0 && goLimit < b.Bytes {
		b = BudgetInfo{Bytes: goLimit, Source: "Go's memory limit (GOMEMLIMIT)"}
	}
	// What a hard limit leaves grows with what it has available, so the
	// tightest one leaves the least.
	if l, ok := memlimit.Tightest(limits); ok {
		avail := l.Available()
		headroom := int64(headroomFloor) + avail/headroomShare
		if n := max(0, avail-headroom); n < b.Bytes {
			b = BudgetInfo{Bytes: n, Source: l.Name, Limit: l.Bytes, Used: l.Used, Headroom: headroom}
		}
	}
	return b, nil
}

// CPUMemStats reports the CPU memory of tensors.
type CPUMemStats struct {
	Reserved    int64 // bytes of the pool's buffers not yet given back to Go's collector: in use or cached
	InUse       int64 // bytes of those handed out to tensors (dropped ones count until collected): Reserved less Cached
	Cached      int64 // bytes of those free in the pool
	Collections int64 // collections run for tensors dropped without Release or Scope
}

// CPUMemory returns the CPU memory statistics of tensors now.
func CPUMemory() CPUMemStats {
	cpuPool.mu.Lock()
	defer cpuPool.mu.Unlock()
	return CPUMemStats{Reserved: cpuMem.reserved.Load(), InUse: cpuPool.inUseLocked(), Cached: int64(cpuPool.cached), Collections: cpuPace.Collections()}
}

// CheckHostMemory returns an out-of-memory *Error for op when n host
// elements of elemSize bytes each would not fit beside the CPU tensors
// within the CPU budget (after collecting dropped tensors once), and
// nil when they would. Code that builds a large host slice for tensors
// (a file loader, a data loader) calls it first, so that a request
// beyond the process's memory limit is an error, not the Go runtime's
// fatal out-of-memory.
func CheckHostMemory(op string, n, elemSize int) error {
	if n < 0 || elemSize < 1 {
		return &Error{Op: op, Err: ErrArgument, Detail: fmt.Sprintf("%d elements of %d bytes", n, elemSize)}
	}
	return Catch(func() { checkHostAlloc(op, n, elemSize) })
}
