package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// A Unit says how a workload's work per step becomes the number the
// tables print: a rate (work per second over Scale, higher is better) or,
// when PerOp is set, microseconds per unit of work (lower is better).
type Unit struct {
	Name  string  // "GFLOP/s", "GB/s", "steps/s", "µs/op"
	Scale float64 // work units per printed unit: 1e9 for GFLOP/s
	PerOp bool    // print seconds per work unit in µs instead of a rate
}

// Units of the registered workloads.
var (
	GFLOPs   = Unit{Name: "GFLOP/s", Scale: 1e9}
	GBs      = Unit{Name: "GB/s", Scale: 1e9}
	StepsPS  = Unit{Name: "steps/s", Scale: 1}
	MicrosOp = Unit{Name: "µs/op", PerOp: true}
)

// Value is the printed number for work units done in sec seconds.
func (u Unit) Value(work, sec float64) float64 {
	if u.PerOp {
		return sec / work * 1e6
	}
	return work / sec / u.Scale
}

// A Size is one problem size of a workload: Dims are passed to the peer
// implementations (tools/bench/peers) as they are, X places the point on
// the chart's size axis and Label names it in the table.
type Size struct {
	Label string
	X     float64
	Dims  []int
}

// A Case is a workload set up at one size on one device. Step does one
// step of work without waiting for the device; the runner waits after
// each step inside the timed loop. Release frees what Setup allocated.
// Warm, when set, is how long the runner steps, untimed, before each
// measurement: for a workload that measures a limit of the processor
// (fma_peak), whose cores may have idled and clocked down in the pause
// before it.
type Case struct {
	Step    func()
	Release func()
	Warm    time.Duration
}

// A Workload is one entry of the benchmark registry. Peers names the
// implementations in tools/bench/peers/peers.py that run the same work
// (written as a user of that library writes it): "torch" runs on the
// CPU next to Tessera's CPU and on CUDA next to a real GPU, "numpy" on
// the CPU only.
type Workload struct {
	Name   string // flag, JSON and peer-script key
	Family string // chart and table heading
	Unit   Unit
	Sizes  []Size // a full run
	Quick  []Size // --quick
	Peers  []string
	Work   func(s Size) float64 // work units per step, in Unit (flops, bytes, ops, steps)
	Setup  func(dev tensor.Device, s Size) Case
	Doc    string // how Work is counted, printed under the table
	// CPUOnly workloads measure the processor, not a device: they run
	// once, on the CPU, whatever devices are benchmarked.
	CPUOnly bool
}

// registry lists every workload in table order. A new workload (conv,
// the CNN and transformer training steps) is one entry here plus its
// definition and its peer functions in tools/bench/peers/peers.py.
var registry = []*Workload{
	&fmaPeak, &gemm, &conv2d, &mulAdd, &sum, &softmax, &tinyOp,
	&mlpStep, &cnnStep, &mincharStep, &lstmPaddedStep, &lstmRaggedStep, &gptPaddedStep, &gptRaggedStep,
}

// Workloads returns the registry in table order.
func Workloads() []*Workload { return registry }

// Select returns the workloads named in the comma-separated list names
// ("" or "all" selects every one), or an error naming an unknown one and
// the known names.
func Select(names string) ([]*Workload, error) {
	if names == "" || names == "all" {
		return registry, nil
	}
	var out []*Workload
	for n := range strings.SplitSeq(names, ",") {
		n = strings.TrimSpace(n)
		w := lookup(n)
		if w == nil {
			return nil, fmt.Errorf("unknown workload %q (known: %s)", n, strings.Join(knownNames(), ", "))
		}
		out = append(out, w)
	}
	return out, nil
}

func lookup(name string) *Workload {
	for _, w := range registry {
		if w.Name == name {
			return w
		}
	}
	return nil
}

func knownNames() []string {
	var ns []string
	for _, w := range registry {
		ns = append(ns, w.Name)
	}
	return ns
}

// sizes returns the workload's sizes for the mode.
func (w *Workload) sizes(quick bool) []Size {
	if quick {
		return w.Quick
	}
	return w.Sizes
}
