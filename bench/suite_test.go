package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestRegistry checks what every workload must have for the runner, the
// table, the charts and the peers: a unique name, a unit, sizes for both
// modes with distinct chart positions, positive work, a setup, a doc line
// that starts with the name, and known peers.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range Workloads() {
		if w.Name == "" || seen[w.Name] {
			t.Errorf("workload name %q empty or repeated", w.Name)
		}
		seen[w.Name] = true
		if w.Unit.Name == "" || (!w.Unit.PerOp && w.Unit.Scale <= 0) {
			t.Errorf("%s: unit %+v", w.Name, w.Unit)
		}
		if w.Setup == nil || w.Work == nil || w.Family == "" || !strings.HasPrefix(w.Doc, w.Name+": ") {
			t.Errorf("%s: missing setup, work, family or doc (%q)", w.Name, w.Doc)
		}
		for _, sizes := range [][]Size{w.Sizes, w.Quick} {
			if len(sizes) == 0 {
				t.Errorf("%s: no sizes for one mode", w.Name)
			}
			xs := map[float64]bool{}
			for _, s := range sizes {
				if xs[s.X] || s.Label == "" || len(s.Dims) == 0 || !(w.Work(s) > 0) {
					t.Errorf("%s: size %+v repeats its x, lacks a label or dims, or has no work", w.Name, s)
				}
				xs[s.X] = true
			}
		}
		for _, p := range w.Peers {
			if p != "torch" && p != "numpy" {
				t.Errorf("%s: unknown peer %q", w.Name, p)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	ws, err := Select("sum, gemm")
	if err != nil || len(ws) != 2 || ws[0].Name != "sum" || ws[1].Name != "gemm" {
		t.Fatalf("Select(sum, gemm) = %v, %v", ws, err)
	}
	if ws, err := Select("all"); err != nil || len(ws) != len(Workloads()) {
		t.Fatalf("Select(all) = %d workloads, %v", len(ws), err)
	}
	if _, err := Select("gemm,conv9"); err == nil || !strings.Contains(err.Error(), `"conv9"`) || !strings.Contains(err.Error(), "minchar_step") {
		t.Fatalf("Select(conv9) error %v, want the name and the known names", err)
	}
}

// TestRunEveryWorkload runs the whole registry at its quick sizes for
// one short round on the CPU and the GPU: every case gives a positive
// rate and a peak memory of the device's kind, and the GPU counts its
// dispatches.
func TestRunEveryWorkload(t *testing.T) {
	devs := devtest.Devices(t)
	rep, err := Run(Config{Quick: true, Devices: devs, Rounds: 1, MinTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	cpuOnly := map[string]bool{}
	for _, w := range Workloads() {
		if w.CPUOnly {
			want += len(w.Quick) // devs holds the CPU once
			cpuOnly[w.Name] = true
			continue
		}
		want += len(w.Quick) * len(devs)
	}
	if len(rep.Results) != want {
		t.Fatalf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		name := r.Workload + " " + r.Size + " " + r.Device
		if r.Error != "" || r.Value == nil || !(r.Value.Median > 0) || len(r.Rounds) != 1 || r.Rounds[0].Iters < 1 {
			t.Errorf("%s: error %q, value %+v, rounds %+v", name, r.Error, r.Value, r.Rounds)
			continue
		}
		wantKind := "go-heap-peak"
		if r.Device != "cpu" {
			wantKind = "gpu-peak"
			if r.Dispatches == nil || *r.Dispatches < 1 {
				t.Errorf("%s: dispatches per step %v", name, r.Dispatches)
			}
			if r.DeviceName == "" {
				t.Errorf("%s: no adapter name", name)
			}
		}
		if cpuOnly[r.Workload] && r.Device != "cpu" {
			t.Errorf("%s: a CPU-only workload ran on %s", name, r.Device)
		}
		if r.Memory == nil || r.Memory.Kind != wantKind || (r.Memory.Bytes <= 0 && !cpuOnly[r.Workload]) {
			t.Errorf("%s: memory %+v, want %s above 0", name, r.Memory, wantKind)
		}
	}
	if rep.Machine.CPUModel == "" || rep.Machine.Cores < 1 || rep.Machine.GoVersion == "" || len(rep.Docs) != len(Workloads()) {
		t.Errorf("machine record %+v, docs %d", rep.Machine, len(rep.Docs))
	}
}

// TestRunFailingCase checks that a case whose setup or step panics (a
// typed tensor error here) is recorded as failed, is not run again, and
// leaves the other cases measured.
func TestRunFailingCase(t *testing.T) {
	steps := 0
	broken := &Workload{
		Name: "broken", Family: "broken", Unit: StepsPS, Doc: "broken: fails on its second step",
		Quick: []Size{{Label: "1", X: 1, Dims: []int{1}}}, Work: oneStep,
		Setup: func(dev tensor.Device, s Size) Case {
			return Case{Step: func() {
				if steps++; steps > 1 {
					tensor.Zeros([]int{2}).MatMul(tensor.Zeros([]int{3}))
				}
			}, Release: func() {}}
		},
	}
	rep, err := Run(Config{Workloads: []*Workload{broken, &sum}, Quick: true, Devices: []tensor.Device{tensor.CPU}, Rounds: 3, MinTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(sum.Quick)+1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	r := rep.Results[0]
	if !strings.Contains(r.Error, "MatMul") || r.Value != nil || steps != 2 {
		t.Errorf("broken case: error %q, value %+v after %d steps; want a MatMul error after 2 steps, no value", r.Error, r.Value, steps)
	}
	for _, r := range rep.Results[1:] {
		if r.Error != "" || r.Value == nil || r.Value.N != 3 {
			t.Errorf("%s %s: error %q, value %+v; want 3 rounds", r.Workload, r.Size, r.Error, r.Value)
		}
	}
}

// TestRunUnavailableDevice checks that a device that does not open is a
// note, not a failure.
func TestRunUnavailableDevice(t *testing.T) {
	rep, err := Run(Config{Workloads: []*Workload{&tinyOp}, Devices: []tensor.Device{tensor.CPU, tensor.GPU(99)}, Rounds: 1, MinTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Device != "cpu" {
		t.Fatalf("results %+v, want the CPU only", rep.Results)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "gpu:99 not measured") }) {
		t.Errorf("notes %q do not say gpu:99 was not measured", rep.Notes)
	}
}

// TestRatios checks the per-round ratio of speeds, Tessera over the peer,
// for a rate and for a time per op (both: above 1 means Tessera is faster).
func TestRatios(t *testing.T) {
	tess := &slot{res: &Result{speeds: []float64{10, 20, 30, 0, 40}}}
	peer := &Result{speeds: []float64{5, 10, 10, 10, 0}, Rounds: []Round{{Value: 1}, {Value: 3}, {Value: 2}}}
	peer.summarize(tess)
	if peer.Ratio == nil || peer.Ratio.N != 3 || peer.Ratio.Median != 2 || peer.Ratio.Min != 2 || peer.Ratio.Max != 3 {
		t.Errorf("ratio %+v, want 3 rounds (the failed ones dropped), median 2, range 2–3", peer.Ratio)
	}
	if peer.Value.Median != 2 || peer.Value.Min != 1 || peer.Value.Max != 3 {
		t.Errorf("value %+v", peer.Value)
	}
	// Speeds are work per second whatever the unit: Tessera at 10 µs/op
	// against a peer at 20 µs/op is 2× faster.
	tess = &slot{res: &Result{speeds: []float64{100 / 1e-3}}}
	peer = &Result{speeds: []float64{100 / 2e-3}}
	peer.summarize(tess)
	if MicrosOp.Value(100, 1e-3) != 10 || peer.Ratio.Median != 2 {
		t.Errorf("µs/op value %v, ratio %+v", MicrosOp.Value(100, 1e-3), peer.Ratio)
	}
	if v := GFLOPs.Value(4e9, 2); v != 2 {
		t.Errorf("GFLOP/s of 4e9 flops in 2 s = %v", v)
	}
}

func TestSpread(t *testing.T) {
	s := spread([]float64{4, 1, 3, 2, 5})
	if *s != (Spread{Median: 3, Min: 1, Max: 5, Q1: 2, Q3: 4, N: 5}) {
		t.Errorf("spread = %+v", *s)
	}
	if s := spread([]float64{1, 2}); s.Median != 1.5 || s.Q1 != 1.25 {
		t.Errorf("spread of two = %+v", *s)
	}
	if spread(nil) != nil {
		t.Error("spread of nothing is not nil")
	}
}

// TestPlanPairsPeers checks which Tessera device each peer is compared
// with: the CPU for torch and numpy, the first real GPU for torch on CUDA,
// never a software adapter.
func TestPlanPairsPeers(t *testing.T) {
	rep := &Report{}
	rep.Machine.Adapters = append(rep.Machine.Adapters, adapterFixture(0, true), adapterFixture(1, false), adapterFixture(2, false))
	p := &peerProc{info: PeerInfo{CUDA: &CUDAInfo{Device: "H200"}, Workloads: map[string][]string{"torch": {"minchar_step"}, "numpy": {"minchar_step"}}}}
	cfg := Config{Workloads: []*Workload{&mincharStep, &gemm}, Rounds: 1}
	cases := plan(rep, cfg, []tensor.Device{tensor.CPU, tensor.GPU(0), tensor.GPU(1), tensor.GPU(2)}, p)
	var got []string
	for _, sl := range cases {
		got = append(got, sl.res.Workload+" "+sl.res.Impl+" "+sl.res.Device+" vs "+sl.res.Against)
	}
	want := []string{
		"minchar_step tessera cpu vs ", "minchar_step tessera gpu:0 vs ", "minchar_step tessera gpu:1 vs ", "minchar_step tessera gpu:2 vs ",
		"minchar_step torch cpu vs cpu", "minchar_step torch cuda vs gpu:1", "minchar_step numpy cpu vs cpu",
	}
	for range gemm.Sizes {
		want = append(want, "gemm tessera cpu vs ", "gemm tessera gpu:0 vs ", "gemm tessera gpu:1 vs ", "gemm tessera gpu:2 vs ")
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(rep.Notes); n != len(gemm.Sizes) || !strings.Contains(rep.Notes[0], "no torch version") {
		t.Errorf("notes %q, want one per gemm size saying the script lacks it", rep.Notes)
	}
}

var errFake = errors.New("fake")

// TestSettleTime checks the pause before each measurement: none without
// peers, peerSettle with them, capped at the measurement time.
func TestSettleTime(t *testing.T) {
	for _, c := range []struct {
		min   time.Duration
		peers bool
		want  time.Duration
	}{
		{250 * time.Millisecond, false, 0},
		{250 * time.Millisecond, true, peerSettle},
		{20 * time.Millisecond, true, 20 * time.Millisecond},
	} {
		if got := settleTime(Config{MinTime: c.min}, c.peers); got != c.want {
			t.Errorf("settleTime(min %v, peers %v) = %v, want %v", c.min, c.peers, got, c.want)
		}
	}
}
