package memlimit

import (
	"io/fs"
	"strings"
	"testing"
)

// fakeSystem serves files from a map and resource limits from another.
func fakeSystem(files map[string]string, rlimits map[string]int64, goMapped int64) System {
	return System{
		ReadFile: func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		},
		Rlimit: func(res string) (int64, bool) {
			n, ok := rlimits[res]
			return n, ok
		},
		GoMapped: goMapped,
	}
}

func TestReadFindsEveryLimit(t *testing.T) {
	sys := fakeSystem(map[string]string{
		"/proc/meminfo":     "MemTotal:       24684084 kB\nMemFree: 5 kB\n",
		"/proc/self/status": "VmSize:\t 1048576 kB\nVmData:\t  204800 kB\n",
		"/proc/self/cgroup": "12:memory:/job/step\n0::/user.slice/job\n",
		// v2: a limit on the parent only; the leaf says max.
		"/sys/fs/cgroup/user.slice/job/memory.max":             "max\n",
		"/sys/fs/cgroup/user.slice/memory.max":                 "4294967296\n",
		"/sys/fs/cgroup/user.slice/memory.current":             "1073741824\n",
		"/sys/fs/cgroup/user.slice/memory.stat":                "anon 5\ninactive_file 536870912\n",
		"/sys/fs/cgroup/memory/job/step/memory.limit_in_bytes": "9223372036854771712\n",
		"/sys/fs/cgroup/memory/job/memory.limit_in_bytes":      "2147483648\n",
	}, map[string]int64{"AS": 3 << 30}, 512<<20)
	ls := Read(sys)
	want := []Limit{
		{Name: "physical memory (MemTotal)", Bytes: 24684084 << 10},
		{Name: "cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/job/memory.limit_in_bytes)", Bytes: 2 << 30, Hard: true},
		{Name: "cgroup v2 memory.max (/sys/fs/cgroup/user.slice/memory.max)", Bytes: 4 << 30, Used: 512 << 20, Hard: true},
		{Name: "RLIMIT_AS (ulimit -v)", Bytes: 3 << 30, Used: 512 << 20, Hard: true},
	}
	if len(ls) != len(want) {
		t.Fatalf("Read found %v, want %v", ls, want)
	}
	for i := range want {
		if ls[i] != want[i] {
			t.Errorf("limit %d: %+v, want %+v", i, ls[i], want[i])
		}
	}
	tight, ok := Tightest(ls)
	if !ok || !strings.HasPrefix(tight.Name, "cgroup v1") {
		t.Errorf("Tightest = %v, %v; want the cgroup v1 limit (2 GiB available)", tight, ok)
	}
}

func TestReadWithoutLimits(t *testing.T) {
	ls := Read(fakeSystem(nil, nil, 0))
	if len(ls) != 0 {
		t.Fatalf("Read of an empty system found %v", ls)
	}
	if _, ok := Tightest(ls); ok {
		t.Fatal("Tightest found a limit among none")
	}
	if got := (Limit{Bytes: 1, Used: 5}).Available(); got != 0 {
		t.Errorf("Available over the limit = %d, want 0", got)
	}
}

// TestReadThisProcess reads the real system: physical memory is there on
// Linux, and every limit is positive.
func TestReadThisProcess(t *testing.T) {
	for _, l := range Read(OS(0)) {
		if l.Bytes <= 0 || l.Used < 0 || l.Name == "" {
			t.Errorf("bad limit %+v", l)
		}
		t.Log(l)
	}
}

// TestReadIgnoresMalformedFiles: files that do not parse (or give no
// limit) add no limit and never a negative one.
func TestReadIgnoresMalformedFiles(t *testing.T) {
	sys := fakeSystem(map[string]string{
		"/proc/meminfo":                                 "MemTotal: lots kB\n",
		"/proc/self/status":                             "VmSize: -5 kB\n",
		"/proc/self/cgroup":                             "garbage\n::\n0::/a\n3:memory:/b\n",
		"/sys/fs/cgroup/a/memory.max":                   "-1\n",
		"/sys/fs/cgroup/memory.max":                     "12abc\n",
		"/sys/fs/cgroup/memory/b/memory.limit_in_bytes": "0\n",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":   "\n",
	}, map[string]int64{"DATA": 1 << 30}, 0)
	ls := Read(sys)
	if len(ls) != 1 || ls[0].Name != "RLIMIT_DATA (ulimit -d)" || ls[0].Used != 0 {
		t.Fatalf("Read of malformed files = %v, want only RLIMIT_DATA with nothing counted in use", ls)
	}
}
