package tensor_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// These tests run this test binary again as a child process under a hard
// memory limit (ulimit -v, and a cgroup's memory limit where the machine
// lets a test make one), where the CPU budget must come from that limit:
// with physical memory as the budget, a request of a few GiB passed it
// and ended in the Go runtime's fatal "out of memory".

// memlimitChildEnv selects the child's role in a re-executed binary.
const memlimitChildEnv = "TESSERA_MEMLIMIT_CHILD"

// addressSpaceLimitKiB is the ulimit -v of the child: 2 GiB, of which
// the Go runtime's reservations and the Vulkan driver take most.
const addressSpaceLimitKiB = 2 << 20

// runLimitedChild runs TestHardMemoryLimitChild in a child process
// through sh with prelude (which sets the limit) and checks that it
// passed and that no fatal error reached its output.
func runLimitedChild(t *testing.T, prelude string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", prelude+` && exec "$0" "$@"`, os.Args[0], "-test.run=^TestHardMemoryLimitChild$", "-test.v", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, tensor.CPUBudgetEnv+"=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, memlimitChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "fatal error") || strings.Contains(text, "runtime: out of memory") {
		t.Errorf("the child hit a fatal error:\n%s", text)
	}
	if err != nil || !strings.Contains(text, "--- PASS: TestHardMemoryLimitChild") {
		t.Fatalf("child under %q: %v\n%s", prelude, err, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "budget") || strings.Contains(line, "trained") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// TestHardMemoryLimitUlimit runs the child under ulimit -v of 2 GiB.
func TestHardMemoryLimitUlimit(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	runLimitedChild(t, fmt.Sprintf("ulimit -v %d", addressSpaceLimitKiB))
}

// TestHardMemoryLimitCgroup runs the child in a new memory cgroup limited
// to 768 MiB, made under this process's own (cgroup v1) or, on cgroup
// v2, under a cgroup whose memory controller is delegated to it. It
// skips, saying why, where the machine does not let it make one.
func TestHardMemoryLimitCgroup(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir, err := makeMemoryCgroup(768 << 20)
	if err != nil {
		t.Skipf("cannot make a memory cgroup here: %v", err)
	}
	defer os.Remove(dir)
	runLimitedChild(t, fmt.Sprintf("echo $$ > %s", filepath.Join(dir, "cgroup.procs")))
}

// makeMemoryCgroup makes a cgroup below this process's with a memory
// limit of bytes and returns its directory.
func makeMemoryCgroup(bytes int64) (string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("tessera-test-%d", os.Getpid())
	for line := range strings.SplitSeq(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, limitFile string
		switch {
		case f[0] == "0" && f[1] == "":
			dir, limitFile = filepath.Join("/sys/fs/cgroup", f[2], name), "memory.max"
		case strings.Contains(","+f[1]+",", ",memory,"):
			dir, limitFile = filepath.Join("/sys/fs/cgroup/memory", f[2], name), "memory.limit_in_bytes"
		default:
			continue
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(fmt.Sprint(bytes)), 0o644); err != nil {
			os.Remove(dir)
			continue
		}
		return dir, nil
	}
	return "", errors.New("no writable memory controller in /proc/self/cgroup's hierarchies")
}

// TestHardMemoryLimitChild is the child: under the limit, huge requests
// through the public API are typed out-of-memory errors on every device,
// the process keeps working, and a small training loop completes. It
// does nothing unless the parent started it.
func TestHardMemoryLimitChild(t *testing.T) {
	if os.Getenv(memlimitChildEnv) == "" {
		t.Skip("runs only as the child of TestHardMemoryLimitUlimit and TestHardMemoryLimitCgroup")
	}
	info, err := tensor.CPUBudgetInfo()
	if err != nil || info.Headroom == 0 {
		t.Fatalf("CPU budget %v, %v: want one set by the hard limit", info, err)
	}
	t.Logf("CPU budget before any GPU opens: %v", info)
	devs := devtest.Devices(t)
	info, _ = tensor.CPUBudgetInfo()
	t.Logf("CPU budget with every device open: %v", info)
	const gib = 1 << 28 // float32 elements in 1 GiB
	for _, dev := range devs {
		on := tensor.On(dev)
		idx := tensor.New([]int32{0, 1}).To(dev)
		small := tensor.Rand([]int{1 << 14, 8}, on)
		smallT := tensor.Rand([]int{8, 1 << 14}, on)
		expectBad(t, dev.String()+" under the limit: ", []badCase{
			{"Zeros of 1 GiB", tensor.ErrOutOfMemory, func() { tensor.Zeros([]int{gib}, on) }, []string{"1.00 GiB"}},
			{"Rand of 4 GiB", tensor.ErrOutOfMemory, func() { tensor.Rand([]int{4 * gib}, on) }, []string{"tensor.Rand"}},
			{"OneHot with 2^28 classes", tensor.ErrOutOfMemory, func() { tensor.OneHot(idx, gib) }, []string{"OneHot"}},
			{"Arange with a step of 1e-9", tensor.ErrOutOfMemory, func() { tensor.Arange(0, 1, 1e-9, on) }, []string{"tensor.Arange"}},
			{"Expand(2^28).Contiguous()", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}, on).Expand(gib).Contiguous() }, []string{"Clone"}},
			{"AddScalar of a 1 GiB expanded view", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}, on).Expand(gib).AddScalar(1).Float32s() }, []string{"AddScalar"}},
			{"Sum over rows of an expanded view to 1 GiB", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1, 1}, on).Expand(gib, 2).Sum(1) }, []string{"Sum"}},
			{"reading a 1 GiB expanded view", tensor.ErrOutOfMemory, func() { tensor.Ones([]int{1}, on).Expand(gib).Float32s() }, []string{"tensor.Float32s"}},
			{"MatMul to 16384×16384", tensor.ErrOutOfMemory, func() { small.MatMul(smallT) }, []string{"MatMul"}},
		})
		// The process keeps working on this device.
		x := tensor.Arange(0, 1000, 1, on)
		if got := x.Sum().Item(); got != 499500 {
			t.Errorf("%v: Sum of 0..999 after the refusals = %g", dev, got)
		}
	}
	// Training whose working set fits the limit completes.
	g := tensor.NewGenerator(4)
	x := tensor.Rand([]int{64, 16}, tensor.WithGenerator(g))
	y := tensor.Rand([]int{64, 4}, tensor.WithGenerator(g))
	m := newMLP()
	first := m.step(x, y)
	var last float64
	for range 200 {
		last = m.step(x, y)
	}
	if !(last < first) {
		t.Errorf("training under the limit: loss %g -> %g, want it to fall", first, last)
	}
	t.Logf("trained 200 steps under the limit: loss %.4f -> %.4f", first, last)
}
