package bench

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// Config says what Run measures and how.
type Config struct {
	Workloads []*Workload     // nil: every registered workload
	Devices   []tensor.Device // nil: the CPU and every adapter
	Quick     bool            // the workloads' Quick sizes
	Rounds    int             // rounds over every case, interleaving Tessera and the peers
	MinTime   time.Duration   // timed steps per measurement last at least this long
	MinIters  int             // and number at least this many
	Torch     bool            // run the PyTorch and NumPy peers
	Python    string          // interpreter for the peers
	Threads   int             // thread count for the peers' torch and OpenBLAS
	Log       io.Writer       // progress lines; nil discards them

	sys system // the host's package tools; tests replace them
}

// A Report is the outcome of Run: the machine, the settings, and one
// Result per (workload, size, implementation, device).
type Report struct {
	Machine  Machine   `json:"machine"`
	Quick    bool      `json:"quick"`
	Rounds   int       `json:"rounds"`
	MinTime  float64   `json:"min_time_seconds"`
	MinIters int       `json:"min_iters"`
	Threads  int       `json:"threads"`
	Fusion   bool      `json:"fusion"`         // elementwise fusion on (tensor.SetFusion, TESSERA_FUSION)
	Settle   float64   `json:"settle_seconds"` // pause before each measurement (peerSettle)
	Results  []*Result `json:"results"`
	Notes    []string  `json:"notes"` // devices that did not open, peers not run, and why
	Docs     []string  `json:"docs"`  // how each workload counts its work
}

// A Result is one implementation of one workload at one size on one
// device, measured once per round.
type Result struct {
	Workload   string   `json:"workload"`
	Family     string   `json:"family"`
	Size       string   `json:"size"`
	X          float64  `json:"x"`
	Dims       []int    `json:"dims"`
	Impl       string   `json:"impl"`        // tessera, torch, numpy
	Device     string   `json:"device"`      // cpu, gpu:N, cuda
	DeviceName string   `json:"device_name"` // adapter or CUDA device name; "" for the CPU
	Against    string   `json:"against,omitempty"`
	Unit       string   `json:"unit"`
	Rounds     []Round  `json:"rounds"`
	Value      *Spread  `json:"value,omitempty"` // in Unit, over the rounds
	Memory     *Memory  `json:"memory,omitempty"`
	Dispatches *float64 `json:"dispatches_per_step,omitempty"` // GPU only
	// AllocBytes is the tensor memory a step allocates (op results,
	// intermediates included; fused ones are never allocated), Tessera only.
	AllocBytes *float64 `json:"alloc_bytes_per_step,omitempty"`
	// Ratio is, for a peer, Tessera's speed over the peer's in each round
	// (above 1: Tessera is faster), over the rounds.
	Ratio *Spread `json:"ratio,omitempty"`
	Error string  `json:"error,omitempty"`

	speeds []float64 // per round, work per second (0: failed)
}

// A Round is one timed measurement.
type Round struct {
	Seconds float64 `json:"seconds"`
	Iters   int     `json:"iters"`
	Value   float64 `json:"value"` // in the result's unit
}

// slot is a Tessera case or a peer case of one (workload, size).
type slot struct {
	w       *Workload
	size    Size
	res     *Result
	dev     tensor.Device // Tessera
	tc      *tesseraCase  // Tessera, once opened
	peer    string        // peer name ("" for Tessera)
	against *slot         // peer: the Tessera slot it is compared with
	done    bool          // failed; not run again
}

// Run measures the configured workloads on the configured devices in
// cfg.Rounds rounds; each round runs every case of a (workload, size) on
// every device in Tessera, then in each peer, so that a drift of a shared
// machine hits both sides of a ratio alike. It returns an error for a
// Config without rounds, for peers that do not start, and for peers on a
// reference BLAS; a case that fails is recorded in its Result.
func Run(cfg Config) (*Report, error) {
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("bench: %d rounds, want at least 1", cfg.Rounds)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Workloads == nil {
		cfg.Workloads = registry
	}
	if cfg.MinIters < 1 {
		cfg.MinIters = 1
	}
	rep := &Report{Machine: CurrentMachine(), Quick: cfg.Quick, Rounds: cfg.Rounds, MinTime: cfg.MinTime.Seconds(),
		MinIters: cfg.MinIters, Threads: cfg.Threads, Fusion: tensor.Fusion()}
	devs := cfg.Devices
	if devs == nil {
		devs = []tensor.Device{tensor.CPU}
		for _, a := range rep.Machine.Adapters {
			devs = append(devs, tensor.GPU(a.Index))
		}
	}
	var open []tensor.Device
	for _, d := range devs {
		if err := tensor.Available(d); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%v not measured: %v", d, err))
			continue
		}
		open = append(open, d)
	}
	var peer *peerProc
	if cfg.Torch {
		if cfg.sys.run == nil {
			cfg.sys = host
		}
		p, err := startPeers(cfg.sys, cfg.Python, cfg.Threads, cfg.Log)
		if err != nil {
			return nil, err
		}
		defer p.close()
		peer, rep.Machine.Peer = p, &p.info
	}
	cases := plan(rep, cfg, open, peer)
	defer func() {
		for _, sl := range cases {
			if sl.tc != nil {
				sl.tc.c.Release()
			}
		}
	}()
	settle := settleTime(cfg, peer != nil)
	rep.Settle = settle.Seconds()
	for round := range cfg.Rounds {
		for _, sl := range cases {
			time.Sleep(settle)
			if err := measure(sl, round, cfg, peer); err != nil {
				return nil, err
			}
		}
	}
	for _, sl := range cases {
		sl.res.summarize(sl.against)
		rep.Results = append(rep.Results, sl.res)
	}
	for _, w := range cfg.Workloads {
		rep.Docs = append(rep.Docs, w.Doc)
	}
	rep.Notes = append(rep.Notes, peakShares(rep.Results)...)
	return rep, nil
}

// peerSettle is the pause before each measurement of a run with peers:
// OpenBLAS's idle worker threads keep polling for a while after a call
// before they sleep (OPENBLAS_THREAD_TIMEOUT), so a measurement that
// starts right after a peer's BLAS call shares the cores with them
// (measured on the 2-core machine: the FMA peak fell from 420–436 to 354
// GFLOP/s and GEMM 1024 from ~370 to 272–341 GFLOP/s in runs with the
// peer process beside it).
const peerSettle = 200 * time.Millisecond

// settleTime is the pause before each measurement: peerSettle when peers
// run, capped at the measurement time (quick runs and tests stay quick),
// and none without peers.
func settleTime(cfg Config, peers bool) time.Duration {
	if !peers {
		return 0
	}
	return min(peerSettle, cfg.MinTime)
}

// plan lists the cases in run order: per workload and size, Tessera on
// each device, then each peer next to the device it is compared with
// (torch and numpy on the CPU; torch on CUDA next to the first GPU that is
// not a software adapter).
func plan(rep *Report, cfg Config, devs []tensor.Device, peer *peerProc) []*slot {
	var cases []*slot
	for _, w := range cfg.Workloads {
		for _, s := range w.sizes(cfg.Quick) {
			result := func(impl, dev, name string) *Result {
				return &Result{Workload: w.Name, Family: w.Family, Size: s.Label, X: s.X, Dims: s.Dims,
					Impl: impl, Device: dev, DeviceName: name, Unit: w.Unit.Name, speeds: make([]float64, cfg.Rounds)}
			}
			var cpu, gpu *slot
			for _, d := range devs {
				if w.CPUOnly && d.Kind != tensor.KindCPU {
					continue
				}
				sl := &slot{w: w, size: s, res: result("tessera", d.String(), ""), dev: d}
				if d.Kind == tensor.KindCPU {
					cpu = sl
				} else if a, ok := rep.Machine.adapter(d.Index); ok {
					sl.res.DeviceName = a.Name
					if gpu == nil && !a.IsCPU {
						gpu = sl
					}
				}
				cases = append(cases, sl)
			}
			if peer == nil {
				continue
			}
			for _, p := range w.Peers {
				if !peer.supports(p, w.Name) {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s: the peer script has no %s version", w.Name, s.Label, p))
					continue
				}
				if cpu != nil {
					sl := &slot{w: w, size: s, res: result(p, "cpu", ""), peer: p, against: cpu}
					sl.res.Against = cpu.res.Device
					cases = append(cases, sl)
				}
				if p == "torch" && gpu != nil && peer.info.CUDA != nil {
					sl := &slot{w: w, size: s, res: result(p, "cuda", peer.info.CUDA.Device), peer: p, against: gpu}
					sl.res.Against = gpu.res.Device
					cases = append(cases, sl)
				}
			}
		}
	}
	return cases
}

// measure runs sl's measurement of the given round and logs it. Only a
// broken peer script is an error; a failing case records its error and is
// not run again.
func measure(sl *slot, round int, cfg Config, peer *peerProc) error {
	r := sl.res
	if sl.done {
		return nil
	}
	w, size := sl.w, sl.size
	var sec float64
	var iters int
	var err error
	if sl.peer == "" {
		if sl.tc == nil {
			if sl.tc, err = openTessera(w, size, sl.dev); err == nil {
				r.Memory = sl.tc.mem
				r.AllocBytes = &sl.tc.allocBytes
				if sl.dev.Kind == tensor.KindGPU {
					r.Dispatches = &sl.tc.dispatches
				}
			}
		}
		if err == nil {
			sec, iters, err = sl.tc.time(cfg.MinTime, cfg.MinIters)
		}
	} else {
		resp, perr := peer.run(peerRequest{Workload: r.Workload, Peer: sl.peer, Device: r.Device, Dims: r.Dims,
			MinTime: cfg.MinTime.Seconds(), MinIters: cfg.MinIters})
		if perr != nil {
			return perr
		}
		sec, iters = resp.Seconds, resp.Iters
		if resp.Memory != nil {
			r.Memory = resp.Memory
		}
		if resp.Error != "" {
			err = fmt.Errorf("%s", resp.Error)
		}
	}
	label := fmt.Sprintf("round %d/%d  %-13s %-22s %-7s %-6s", round+1, cfg.Rounds, r.Workload, r.Size, r.Impl, r.Device)
	if err != nil {
		r.Error, sl.done = err.Error(), true
		fmt.Fprintf(cfg.Log, "%s  failed: %v\n", label, err)
		return nil
	}
	work := w.Work(size)
	v := w.Unit.Value(work*float64(iters), sec)
	r.Rounds = append(r.Rounds, Round{Seconds: sec, Iters: iters, Value: v})
	r.speeds[round] = work * float64(iters) / sec
	fmt.Fprintf(cfg.Log, "%s  %s\n", label, formatValue(v, r.Unit))
	return nil
}

// summarize computes the result's spread over its rounds and, for a peer,
// the spread of the per-round ratio of Tessera's speed to its own.
func (r *Result) summarize(against *slot) {
	var vals []float64
	for _, rd := range r.Rounds {
		vals = append(vals, rd.Value)
	}
	r.Value = spread(vals)
	if against == nil {
		return
	}
	var ratios []float64
	for i, s := range r.speeds {
		if t := against.res.speeds[i]; s > 0 && t > 0 {
			ratios = append(ratios, t/s)
		}
	}
	r.Ratio = spread(ratios)
}

// A Spread summarises per-round numbers: the median, the extremes and the
// quartiles (linear interpolation), over N rounds.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	N      int     `json:"n"`
}

// spread returns the Spread of xs, or nil for none.
func spread(xs []float64) *Spread {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Sorted(slices.Values(xs))
	q := func(p float64) float64 {
		pos := p * float64(len(s)-1)
		i := int(pos)
		if i+1 >= len(s) {
			return s[i]
		}
		return s[i] + (pos-float64(i))*(s[i+1]-s[i])
	}
	return &Spread{Median: q(0.5), Min: s[0], Max: s[len(s)-1], Q1: q(0.25), Q3: q(0.75), N: len(s)}
}
