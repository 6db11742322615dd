package bench

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/tensor"
)

func adapterFixture(i int, software bool) device.AdapterInfo {
	a := device.AdapterInfo{Index: i, Name: "gpu fixture", Backend: "vulkan", Type: "discrete"}
	if software {
		a.Name, a.Type, a.IsCPU = "llvmpipe", "cpu", true
	}
	return a
}

// fakeSystem records the commands it is asked to run and fails those
// whose command line starts with a prefix in fail.
type fakeSystem struct {
	noDpkg bool
	fail   []string
	ran    []string
}

func (f *fakeSystem) system(root bool) system {
	return system{
		lookPath: func(name string) (string, error) {
			if name == "dpkg" && f.noDpkg {
				return "", exec.ErrNotFound
			}
			return "/usr/bin/" + name, nil
		},
		run: func(log io.Writer, env []string, name string, args ...string) error {
			line := strings.Join(append([]string{name}, args...), " ")
			f.ran = append(f.ran, line)
			for _, p := range f.fail {
				if strings.HasPrefix(line, p) {
					return errFake
				}
			}
			return nil
		},
		root: root,
	}
}

func TestInstallOpenBLAS(t *testing.T) {
	const check = "dpkg -s libopenblas0-pthread"
	const install = "apt-get install -y -q libopenblas0-pthread"
	for _, c := range []struct {
		name    string
		fake    fakeSystem
		root    bool
		want    []string
		wantErr string
	}{
		{"not Debian", fakeSystem{noDpkg: true}, true, nil, "not a Debian system"},
		{"installed already", fakeSystem{}, true, []string{check}, "does not point at it"},
		{"root installs", fakeSystem{fail: []string{"dpkg"}}, true, []string{check, install}, ""},
		{"sudo installs", fakeSystem{fail: []string{"dpkg"}}, false, []string{check, "sudo -n " + install}, ""},
		{"stale lists updated", fakeSystem{fail: []string{"dpkg", install}}, true, []string{check, install, "apt-get update -q", install}, "apt-get install libopenblas0-pthread failed"},
		{"no sudo", fakeSystem{fail: []string{"dpkg", "sudo"}}, false, []string{check, "sudo -n " + install, "sudo -n apt-get update -q"}, "sudo -n apt-get update failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.fake.system(c.root).installOpenBLAS(io.Discard)
			if !slices.Equal(c.fake.ran, c.want) {
				t.Errorf("ran %q, want %q", c.fake.ran, c.want)
			}
			if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("error %v, want %q", err, c.wantErr)
			}
		})
	}
}

func TestReferenceBLASDetected(t *testing.T) {
	for _, c := range []struct {
		torch, numpy string
		want         bool
	}{{"openblas", "openblas", false}, {"mkl", "openblas", false}, {"reference", "openblas", true}, {"openblas", "reference", true}} {
		if got := (&PeerInfo{TorchBLAS: c.torch, NumPyBLAS: c.numpy}).referenceBLAS(); got != c.want {
			t.Errorf("torch %s, numpy %s: reference %v", c.torch, c.numpy, got)
		}
	}
	err := refusal("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", errFake)
	if !errors.Is(err, errReferenceBLAS) || !strings.Contains(err.Error(), "libblas.so.3") || !strings.Contains(err.Error(), "without --torch") {
		t.Errorf("refusal = %v", err)
	}
}

// torchPython returns Debian's interpreter when it has torch and numpy,
// else skips: the peers need them and tests must not install them.
func torchPython(t *testing.T) string {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("%s cannot import torch and numpy (%v): install python3-torch to test the peers", python, err)
	}
	return python
}

// TestPeerScript starts the embedded script and checks its report, that
// it implements every registered peer workload, and one timed case with
// its memory, an unknown workload and a device it does not run on.
func TestPeerScript(t *testing.T) {
	t.Parallel() // most of its time is Python importing torch
	p, err := startPeer(torchPython(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	i := p.info
	if i.Torch == "" || i.NumPy == "" || i.Threads != 1 || i.TorchBLAS == "" || i.TorchBLAS == "unknown" || len(i.BLASLibraries) == 0 || !strings.Contains(i.TorchConfig, "BLAS_INFO") {
		t.Errorf("peer info %+v", i)
	}
	for _, w := range Workloads() {
		for _, peer := range w.Peers {
			if !p.supports(peer, w.Name) {
				t.Errorf("peers.py has no %s version of %s", peer, w.Name)
			}
		}
	}
	r, err := p.run(peerRequest{Workload: "tiny_op", Peer: "torch", Device: "cpu", Dims: tinyOp.Quick[0].Dims, MinTime: 0.001, MinIters: 3})
	if err != nil || r.Error != "" || r.Iters < 3 || !(r.Seconds > 0) || r.Memory == nil || r.Memory.Kind != "rss-peak-growth" {
		t.Errorf("tiny_op: %+v, %v", r, err)
	}
	if r, err := p.run(peerRequest{Workload: "tiny_op", Peer: "torch", Device: "cpu", Dims: tinyOp.Quick[0].Dims, MinTime: 0.001, MinIters: 1}); err != nil || r.Memory != nil {
		t.Errorf("second request: %+v, %v; want no memory (measured once per case)", r, err)
	}
	if r, err := p.run(peerRequest{Workload: "conv9", Peer: "torch", Device: "cpu", Dims: []int{1}}); err != nil || !strings.Contains(r.Error, "no torch version of workload 'conv9'") {
		t.Errorf("unknown workload: %+v, %v", r, err)
	}
	if r, err := p.run(peerRequest{Workload: "minchar_step", Peer: "numpy", Device: "cuda", Dims: []int{4, 3, 5}}); err != nil || !strings.Contains(r.Error, "numpy does not run on cuda") {
		t.Errorf("numpy on cuda: %+v, %v", r, err)
	}
}

// TestRunWithPeers runs two workloads against their peers for five
// rounds: every peer has a ratio over five rounds against the CPU, unless
// the peers load a reference BLAS, which must be refused (the fake system
// does not install anything).
func TestRunWithPeers(t *testing.T) {
	t.Parallel()
	python := torchPython(t)
	fake := &fakeSystem{fail: []string{"dpkg", "apt-get"}}
	rep, err := Run(Config{Workloads: []*Workload{&tinyOp, &mincharStep}, Quick: true, Devices: []tensor.Device{tensor.CPU},
		Rounds: 5, MinTime: time.Millisecond, Torch: true, Python: python, Threads: 1, sys: fake.system(true)})
	if errors.Is(err, errReferenceBLAS) {
		t.Logf("refused as it must be: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for _, r := range rep.Results {
		if r.Impl == "tessera" {
			continue
		}
		peers = append(peers, r.Workload+" "+r.Impl)
		if r.Error != "" || r.Ratio == nil || r.Ratio.N != 5 || !(r.Ratio.Median > 0) || r.Against != "cpu" || r.Memory == nil {
			t.Errorf("%s %s: error %q, ratio %+v, against %q, memory %+v", r.Workload, r.Impl, r.Error, r.Ratio, r.Against, r.Memory)
		}
	}
	if want := []string{"tiny_op torch", "minchar_step torch", "minchar_step numpy"}; !slices.Equal(peers, want) {
		t.Errorf("peers %q, want %q", peers, want)
	}
	if p := rep.Machine.Peer; p == nil || p.referenceBLAS() || p.Threads != 1 || p.Env["OPENBLAS_NUM_THREADS"] != "1" {
		t.Errorf("peer record %+v", p)
	}
}

// TestPeerStartFailures: an interpreter that is missing, dies, or talks
// nonsense is an error that says so, with what it printed on stderr.
func TestPeerStartFailures(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		python string
		want   []string
	}{
		{filepath.Join(dir, "missing"), []string{"starting the PyTorch peers", "set --python"}},
		{fake("dies", "echo 'ModuleNotFoundError: torch' >&2; exit 1"), []string{"did not start", "ModuleNotFoundError: torch"}},
		{fake("chatty", "echo hello there"), []string{"did not start", `peer script sent "hello there"`}},
	} {
		p, err := startPeer(c.python, 1)
		if err == nil {
			p.close()
			t.Errorf("%s started", c.python)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.python, err, w)
			}
		}
	}
}
