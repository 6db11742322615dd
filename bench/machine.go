package bench

import (
	"bufio"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/tessera-ml/tessera/device"
)

// Machine records where a benchmark ran. Every report carries one, so a
// number is never read without the processor, adapter and driver, and
// the BLAS and thread counts of the peers, that produced it.
type Machine struct {
	Time         string               `json:"time"`
	Hostname     string               `json:"hostname"`
	OS           string               `json:"os"`
	Arch         string               `json:"arch"`
	CPUModel     string               `json:"cpu_model"`
	CPUFeatures  []string             `json:"cpu_features"`
	Cores        int                  `json:"cores"`
	GOMAXPROCS   int                  `json:"gomaxprocs"`
	GoVersion    string               `json:"go_version"`
	Adapters     []device.AdapterInfo `json:"adapters"`
	AdapterError string               `json:"adapter_error,omitempty"`
	LoadAverage  string               `json:"load_average"` // /proc/loadavg at the start: 1, 5, 15 minutes (others' work on a shared machine)
	Env          map[string]string    `json:"env"`          // the variables below that are set
	Peer         *PeerInfo            `json:"peer"`         // nil without --torch
}

// machineEnv are the environment variables that change what a benchmark
// measures: device choice, GPU budget and batching, the Vulkan driver,
// and the peers' thread pools and OpenBLAS kernel choice.
var machineEnv = []string{
	"TESSERA_DEVICE", "TESSERA_ADAPTER", "TESSERA_GPU_BUDGET", "TESSERA_GPU_ALLOC",
	"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "GOMAXPROCS", "GOGC",
	"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
}

// CurrentMachine describes this machine and its WebGPU adapters.
func CurrentMachine() Machine {
	m := Machine{
		Time:        time.Now().UTC().Format(time.RFC3339),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		CPUModel:    cpuModel(),
		CPUFeatures: cpuFeatures(),
		Cores:       runtime.NumCPU(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		GoVersion:   runtime.Version(),
		Env:         map[string]string{},
	}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil && len(strings.Fields(string(b))) >= 3 {
		m.LoadAverage = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	adapters, err := device.Adapters()
	if err != nil {
		m.AdapterError = err.Error()
	}
	m.Adapters = adapters
	for _, k := range machineEnv {
		if v, ok := os.LookupEnv(k); ok {
			m.Env[k] = v
		}
	}
	return m
}

// cpuModel returns the processor's model name from /proc/cpuinfo, or the
// architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && (strings.TrimSpace(k) == "model name" || strings.TrimSpace(k) == "Model") {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// cpuFeatures lists the instruction-set extensions golang.org/x/sys/cpu
// detected (its HasXXX fields of the architecture's struct), lower case:
// avx2, fma, avx512f, ...
func cpuFeatures() []string {
	var v reflect.Value
	switch runtime.GOARCH {
	case "amd64", "386":
		v = reflect.ValueOf(cpu.X86)
	case "arm64":
		v = reflect.ValueOf(cpu.ARM64)
	default:
		return nil
	}
	var fs []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if name, ok := strings.CutPrefix(f.Name, "Has"); ok && f.Type.Kind() == reflect.Bool && v.Field(i).Bool() {
			fs = append(fs, strings.ToLower(name))
		}
	}
	sort.Strings(fs)
	return fs
}

// adapter returns the adapter with index i, if listed.
func (m *Machine) adapter(i int) (device.AdapterInfo, bool) {
	for _, a := range m.Adapters {
		if a.Index == i {
			return a, true
		}
	}
	return device.AdapterInfo{}, false
}
