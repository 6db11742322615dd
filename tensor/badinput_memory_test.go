package tensor_test

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/memlimit"
	"github.com/tessera-ml/tessera/tensor"
)

// TestOutOfMemoryIsTyped: a request that cannot be met is the one typed
// out-of-memory error of every device, naming the bytes, before any
// host slice is made for it; never Go's fatal out-of-memory or a
// makeslice panic.
func TestOutOfMemoryIsTyped(t *testing.T) {
	if tensor.ErrOutOfMemory != device.ErrOutOfMemory {
		t.Fatal("tensor.ErrOutOfMemory is not device.ErrOutOfMemory")
	}
	if strings.Contains(device.ErrOutOfMemory.Error(), "GPU") {
		t.Errorf("the shared error names a device: %q", device.ErrOutOfMemory)
	}
	for _, dev := range devtest.Devices(t) {
		on := tensor.On(dev)
		idx := tensor.New([]int32{0, 0}).To(dev)
		expectBad(t, dev.String()+": ", []badCase{
			{"Zeros of 2^40", tensor.ErrOutOfMemory, func() { tensor.Zeros([]int{1 << 40}, on) }, []string{"tensor.Full", "4.00 TiB", "4398046511104 bytes"}},
			{"Rand of 2^40", tensor.ErrOutOfMemory, func() { tensor.Rand([]int{1 << 40}, on) }, []string{"tensor.Rand", "TiB"}},
			{"Zeros of 2^62", tensor.ErrOutOfMemory, func() { tensor.Zeros([]int{1 << 62}, on) }, []string{"tensor.Full"}},
			{"Linspace of 2^39", tensor.ErrOutOfMemory, func() { tensor.Linspace(0, 1, 1<<39, on) }, []string{"tensor.Linspace", "TiB"}},
			{"Eye of 2^20", tensor.ErrOutOfMemory, func() { tensor.Eye(1<<20, on) }, []string{"tensor.Eye", "TiB"}},
			{"Eye of 2^32", tensor.ErrShape, func() { tensor.Eye(1<<32, on) }, []string{"tensor.Eye"}},
			{"OneHot with MaxInt32 classes of 2^20 indices", tensor.ErrOutOfMemory, func() {
				tensor.OneHot(tensor.Zeros([]int{1}, on, tensor.Of(tensor.Int32)).Expand(1<<20), math.MaxInt32)
			}, nil},
			{"reading a 2^40 expanded view", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}, on).Expand(1 << 40).Float32s() }, []string{"tensor.Float32s"}},
			{"copying a 2^40 expanded view", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}, on).Expand(1 << 40).Contiguous() }, []string{"out of memory"}},
			{"IndexSelect to 2^40 rows", tensor.ErrOutOfMemory, func() {
				tensor.Ones([]int{1, 1}, on).Expand(1<<40, 1).IndexSelect(1, idx)
			}, nil},
		})
	}
	// With a small budget (64 MiB above what the pool holds now, so that
	// nothing has to be collected), requests that fit the machine fail
	// the same way and quickly: OneHot(idx, MaxInt32) would need 8 GiB.
	restore := tensor.SetCPUBudget(tensor.CPUReserved() + 64<<20)
	defer restore()
	idx := tensor.New([]int32{1, 2})
	expectBad(t, "small budget: ", []badCase{
		{"OneHot(idx, MaxInt32)", tensor.ErrOutOfMemory, func() { tensor.OneHot(idx, math.MaxInt32) }, []string{"cpu out of memory", "TESSERA_CPU_BUDGET", "budget"}},
		{"Zeros of 128 MiB", tensor.ErrOutOfMemory, func() { tensor.Zeros([]int{32 << 20}) }, []string{"128.00 MiB (134217728 bytes)"}},
		{"Arange of 2^31 values", tensor.ErrOutOfMemory, func() { tensor.Arange(0, 1<<31-1, 1) }, []string{"tensor.Arange"}},
		{"FromInts of 32 Mi values", tensor.ErrOutOfMemory, func() { tensor.FromInts(make([]int, 32<<20)) }, []string{"tensor.FromInts"}},
		{"Float64s of a 16 Mi view", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}).Expand(16 << 20).Float64s() }, []string{"tensor.Float64s"}},
	})
	// What fits still works, and what was refused left nothing reserved.
	before := tensor.CPUReserved()
	x := tensor.Ones([]int{1 << 16})
	if got := x.Sum().Item(); got != 1<<16 {
		t.Errorf("Sum of a 256 KiB tensor within the budget = %g", got)
	}
	x.Release()
	if after := tensor.CPUReserved(); after > before+1<<20 {
		t.Errorf("CPU reserved grew from %d to %d bytes", before, after)
	}
}

// TestGPUOutOfMemoryIsTyped: on a GPU, a request above the budget is
// the device allocator's *device.OOMError, and one above the largest
// buffer is tensor's *OOMError; both are ErrOutOfMemory.
func TestGPUOutOfMemoryIsTyped(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		return
	}
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	old := g.Stats().Budget
	g.SetBudget(32 << 20)
	defer g.SetBudget(old)
	err = tensor.Catch(func() { tensor.Zeros([]int{16 << 20}, tensor.On(dev)) }) // 64 MiB
	var oom *device.OOMError
	if !errors.Is(err, tensor.ErrOutOfMemory) || !errors.As(err, &oom) {
		t.Errorf("64 MiB on a 32 MiB GPU budget: %v, want a *device.OOMError", err)
	}
	err = tensor.Catch(func() { tensor.Zeros([]int{1 << 40}, tensor.On(dev)) })
	var toom *tensor.OOMError
	if !errors.As(err, &toom) || toom.Device != dev || !strings.Contains(err.Error(), "largest buffer") {
		t.Errorf("4 TiB on the GPU: %v, want a *tensor.OOMError naming the largest buffer", err)
	}
}

// TestCPUBudgetFromEnvironment: TESSERA_CPU_BUDGET parses as
// TESSERA_GPU_BUDGET; unset or 0 it is physical memory, capped by Go's
// memory limit and by what each hard limit (a cgroup, RLIMIT_AS,
// RLIMIT_DATA) leaves less the headroom, or 8 GiB where none can be read.
func TestCPUBudgetFromEnvironment(t *testing.T) {
	phys := memlimit.Limit{Name: "physical memory (MemTotal)", Bytes: 24 << 30}
	as := memlimit.Limit{Name: "RLIMIT_AS (ulimit -v)", Bytes: 2 << 30, Used: 1 << 30, Hard: true}
	cg := memlimit.Limit{Name: "cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max)", Bytes: 4 << 30, Hard: true}
	full := memlimit.Limit{Name: "RLIMIT_DATA (ulimit -d)", Bytes: 1 << 30, Used: 2 << 30, Hard: true}
	headroom := func(avail int64) int64 { return avail - (64<<20 + avail/8) }
	for _, c := range []struct {
		env     string
		limits  []memlimit.Limit
		goLimit int64
		want    int64
		source  string
		bad     bool
	}{
		{"", []memlimit.Limit{phys}, math.MaxInt64, 24 << 30, phys.Name, false},
		{"0", []memlimit.Limit{phys}, 0, 24 << 30, phys.Name, false},
		{"6GiB", []memlimit.Limit{phys, as}, 0, 6 << 30, tensor.CPUBudgetEnv, false},
		{" 1.5GiB ", nil, 0, 3 << 29, tensor.CPUBudgetEnv, false},
		{"", []memlimit.Limit{phys, cg}, math.MaxInt64, headroom(4 << 30), cg.Name, false},
		{"", []memlimit.Limit{phys, cg, as}, math.MaxInt64, headroom(1 << 30), as.Name, false},
		{"", []memlimit.Limit{phys, full}, math.MaxInt64, 0, full.Name, false},
		{"", []memlimit.Limit{phys}, 2 << 30, 2 << 30, "GOMEMLIMIT", false},
		{"", nil, 0, 8 << 30, "default", false},
		{"lots", []memlimit.Limit{phys}, 0, 0, "", true},
		{"-1GiB", []memlimit.Limit{phys}, 0, 0, "", true},
		{"12 parsecs", []memlimit.Limit{phys}, 0, 0, "", true},
	} {
		got, err := tensor.CPUBudgetFrom(c.env, c.limits, c.goLimit)
		switch {
		case c.bad && (err == nil || !strings.Contains(err.Error(), tensor.CPUBudgetEnv)):
			t.Errorf("%q: %v, %v; want an error naming %s", c.env, got, err, tensor.CPUBudgetEnv)
		case !c.bad && (err != nil || got.Bytes != c.want || !strings.Contains(got.Source, c.source)):
			t.Errorf("%q, limits %v, Go limit %d: %v, %v; want %d set by %q", c.env, c.limits, c.goLimit, got, err, c.want, c.source)
		}
	}
}

// TestViewOfKeptOutlivesIt checks that a view of a kept tensor (which
// borrows its memory) keeps that tensor from the garbage collector: a
// detached parameter used after the last reference to the parameter.
func TestViewOfKeptOutlivesIt(t *testing.T) {
	view := func() *tensor.Tensor {
		p := tensor.Arange(0, 12, 1).Reshape(3, 4).Keep()
		return p.Detach().T()
	}()
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !tensor.StorageLive(view) {
		t.Fatal("the kept tensor's memory was freed while a view of it was in use")
	}
	if got := view.Sum().Item(); got != 66 {
		t.Fatalf("sum of the view = %v, want 66", got)
	}
}

// TestCheckHostMemory: bad counts are ErrArgument, a request beyond the
// budget is ErrOutOfMemory naming the op, and one that fits is nil.
func TestCheckHostMemory(t *testing.T) {
	for _, c := range []struct {
		n, size int
		want    error
	}{
		{-1, 4, tensor.ErrArgument},
		{1, 0, tensor.ErrArgument},
		{1, -8, tensor.ErrArgument},
		{1 << 62, 4, tensor.ErrOutOfMemory},
		{math.MaxInt, math.MaxInt, tensor.ErrOutOfMemory},
		{16, 4, nil},
		{0, 1, nil},
	} {
		err := tensor.CheckHostMemory("loader", c.n, c.size)
		if !errors.Is(err, c.want) || (err != nil && !strings.Contains(err.Error(), "loader")) {
			t.Errorf("CheckHostMemory(%d, %d) = %v, want %v naming the op", c.n, c.size, err, c.want)
		}
	}
}
