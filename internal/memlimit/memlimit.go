// Package memlimit reads the limits on this process's memory that the
// kernel enforces or reports: physical memory, the memory controller of
// its cgroup (v2 memory.max, v1 memory.limit_in_bytes, at every level of
// the hierarchy), and the resource limits RLIMIT_AS (ulimit -v) and
// RLIMIT_DATA (ulimit -d). A container runtime sets the cgroup limit; a
// shell or a job scheduler sets the resource limits. Each Limit says how
// much of it the process (or its cgroup) already uses, so that a budget
// can be what is left.
//
// memlimit imports nothing from the module.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
)

// A Limit is one bound on the process's memory.
type Limit struct {
	Name  string // what sets it: "RLIMIT_AS (ulimit -v)", "cgroup v2 memory.max (/sys/fs/cgroup/job/memory.max)"
	Bytes int64  // the limit
	Used  int64  // bytes of it in use when read, by everything but the Go runtime's own mappings (see Read)
	Hard  bool   // exceeding it fails an allocation or kills the process (all but physical memory)
}

// Available returns Bytes less Used, at least 0.
func (l Limit) Available() int64 { return max(0, l.Bytes-l.Used) }

// String names the limit and its size.
func (l Limit) String() string {
	if l.Used > 0 {
		return fmt.Sprintf("%s: %d bytes, %d in use", l.Name, l.Bytes, l.Used)
	}
	return fmt.Sprintf("%s: %d bytes", l.Name, l.Bytes)
}

// System is what Read reads: files and resource limits. Tests give fakes.
type System struct {
	ReadFile func(name string) ([]byte, error)
	// Rlimit returns the soft limit of a resource ("AS" or "DATA") and
	// whether there is one.
	Rlimit func(resource string) (int64, bool)
	// GoMapped is the memory the Go runtime maps read-write (runtime/metrics
	// /memory/classes/total:bytes): it is subtracted from the address
	// space in use, since a budget for Go-allocated tensors counts it
	// itself.
	GoMapped int64
}

// Read returns every limit the system reports, physical memory first
// when /proc/meminfo can be read. For RLIMIT_AS, Used is the process's
// address space (VmSize) and for RLIMIT_DATA its data segment (VmData),
// both less sys.GoMapped; for a cgroup it is the cgroup's usage less its
// inactive file cache, as the kubelet's working set counts it.
func Read(sys System) []Limit {
	var ls []Limit
	if mi, err := sys.ReadFile("/proc/meminfo"); err == nil {
		if n := field(mi, "MemTotal:"); n > 0 {
			ls = append(ls, Limit{Name: "physical memory (MemTotal)", Bytes: n})
		}
	}
	ls = append(ls, cgroups(sys)...)
	status, _ := sys.ReadFile("/proc/self/status")
	for _, r := range []struct{ res, name, used string }{
		{"AS", "RLIMIT_AS (ulimit -v)", "VmSize:"},
		{"DATA", "RLIMIT_DATA (ulimit -d)", "VmData:"},
	} {
		if n, ok := sys.Rlimit(r.res); ok {
			used := max(0, field(status, r.used)-sys.GoMapped)
			ls = append(ls, Limit{Name: r.name, Bytes: n, Used: used, Hard: true})
		}
	}
	return ls
}

// Tightest returns the hard limit with the least available memory, if
// there is one.
func Tightest(ls []Limit) (Limit, bool) {
	var best Limit
	found := false
	for _, l := range ls {
		if l.Hard && (!found || l.Available() < best.Available()) {
			best, found = l, true
		}
	}
	return best, found
}

// cgroups returns the memory limits of the process's cgroup and of each
// cgroup above it, v2 and v1.
func cgroups(sys System) []Limit {
	self, err := sys.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var ls []Limit
	for line := range strings.SplitSeq(strings.TrimSpace(string(self)), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			ls = append(ls, walk(sys, "/sys/fs/cgroup", f[2], "cgroup v2", "memory.max", "memory.current", "inactive_file")...)
		case hasController(f[1], "memory"):
			ls = append(ls, walk(sys, "/sys/fs/cgroup/memory", f[2], "cgroup v1", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")...)
		}
	}
	return ls
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// unlimitedV1 is where cgroup v1 reports no limit (the largest page
// multiple below 2⁶³); anything this large is no limit.
const unlimitedV1 = math.MaxInt64 / 2

// walk reads the limit file of the cgroup at rel under root and of each
// cgroup above it (a container sees its own cgroup as the root).
func walk(sys System, root, rel, kind, limitFile, usageFile, inactiveKey string) []Limit {
	var ls []Limit
	for dir := path.Clean("/" + rel); ; dir = path.Dir(dir) {
		d := path.Join(root, dir)
		if b, err := sys.ReadFile(path.Join(d, limitFile)); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && n < unlimitedV1 {
				l := Limit{Name: fmt.Sprintf("%s %s (%s)", kind, limitFile, path.Join(d, limitFile)), Bytes: n, Hard: true}
				if u, err := sys.ReadFile(path.Join(d, usageFile)); err == nil {
					if used, err := strconv.ParseInt(strings.TrimSpace(string(u)), 10, 64); err == nil {
						st, _ := sys.ReadFile(path.Join(d, "memory.stat"))
						l.Used = max(0, used-statField(st, inactiveKey))
					}
				}
				ls = append(ls, l)
			}
		}
		if dir == "/" {
			return ls
		}
	}
}

// field returns the "Name:   123 kB" value of a /proc file in bytes, or 0.
func field(text []byte, name string) int64 {
	for line := range strings.SplitSeq(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64>>10 {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// statField returns the value of key in a memory.stat file, or 0.
func statField(text []byte, key string) int64 {
	for line := range strings.SplitSeq(string(text), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// OS is the running system: its files and resource limits, with
// goMapped the Go runtime's read-write mappings.
func OS(goMapped int64) System {
	return System{ReadFile: os.ReadFile, Rlimit: rlimit, GoMapped: goMapped}
}
