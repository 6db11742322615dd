package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
)

// TestTrainOnTwoGPUs trains lstm on two GPU devices of this process (two
// logical GPUs of one adapter, lavapipe in CI: see TestMain), batch 3
// each: it says so, and ends with the loss of one device with batch 6.
func TestTrainOnTwoGPUs(t *testing.T) {
	gpu := devtest.MustGPU(t)
	two := gpu.String() + "," + tensor.GPU(gpu.Index+1).String()
	args := []string{"train", "lstm", "-hidden", "7", "-sequences", "40", "-length", "7", "-delay", "2", "-steps", "4", "-eval-every", "0"}
	code, both, stderr := runArgs(append(args, "-device", two, "-batch", "3")...)
	if code != 0 || stderr != "" {
		t.Fatalf("-device %s: exit status %d\n%s%s", two, code, both, stderr)
	}
	for _, want := range []string{"training on " + two + ", one rank each", "data-parallel over 2 ranks: -batch 3 each, 6 examples a step",
		"lstm: 4 steps on " + two, "data-parallel over 2 ranks: 6 examples a step"} {
		if !strings.Contains(both, want) {
			t.Errorf("the output does not say %q:\n%s", want, both)
		}
	}
	code, alone, stderr := runArgs(append(args, "-device", gpu.String(), "-batch", "6")...)
	if code != 0 {
		t.Fatalf("-device %s: exit status %d\n%s", gpu, code, stderr)
	}
	// The summary prints 5 digits, so a rounding apart can move the last.
	if got, want := lossOf(t, both), lossOf(t, alone); math.Abs(got-want) > 1e-4*math.Abs(want) {
		t.Errorf("final loss %v on %s, %v on %s with their union batch", got, two, want, gpu)
	}
}

// TestTrainDevicesResumeAlone trains lstm 2 steps as two ranks of this
// process on the CPU, batch 4 each, and resumes the checkpoint alone
// with batch 8 for 2 more, and the other way round: both end with the
// loss of 4 uninterrupted steps alone with batch 8.
func TestTrainDevicesResumeAlone(t *testing.T) {
	both := resumesAlone(t, "cpu,cpu", func(args ...string) (int, string, string) {
		return runArgs(append(args, "-device", "cpu,cpu", "-batch", "4")...)
	})
	if !strings.Contains(both, "lstm: 4 steps on cpu,cpu (2 this run)") {
		t.Errorf("the summary does not give the devices:\n%s", both)
	}
}

// TestTrainBadDevices gives -device lists that cannot train: each is
// one line on stderr and exit status 2, before any training.
func TestTrainBadDevices(t *testing.T) {
	one := t.TempDir() // a training set of one image
	if err := mnist.WriteDir(one, mnist.Stripes(1), mnist.Stripes(10)); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "odd.safetensors") // 3 examples into the epoch
	if code, stdout, stderr := runArgs(append(lstm(1), "-batch", "3", "-checkpoint", odd)...); code != 0 {
		t.Fatalf("the checkpoint: exit status %d\n%s%s", code, stdout, stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown device", append(lstm(1), "-device", "gpu:0,tpu"),
			`tessera train: -device "gpu:0,tpu": "tpu" is not a device: want a list of devices, one per rank, such as gpu:0,gpu:1`},
		{"empty entry", append(lstm(1), "-device", "cpu,"), `tessera train: -device "cpu,": "" is not a device`},
		{"duplicate GPU", append(lstm(1), "-device", "gpu:1,gpu:1"),
			`tessera train: -device "gpu:1,gpu:1": gpu:1 is named twice (as "gpu:1" and "gpu:1"): each GPU serves one rank (TESSERA_LOGICAL_GPUS=2 offers each adapter as two GPUs)`},
		{"the CPU with a GPU", append(lstm(1), "-device", "gpu:0,cpu"),
			`tessera train: -device "gpu:0,cpu" mixes the CPU and GPUs: their optimizer steps round differently, so the ranks would drift apart; list GPUs only, or the CPU only`},
		{"program without data parallelism", []string{"train", "charrnn", "-device", "cpu,cpu", "-steps", "1"},
			"tessera train: charrnn does not train data-parallel: give -device one device"},
		{"batch above a rank's share", append(lstm(1), "-device", "cpu,cpu", "-batch", "30"),
			"tessera train: -batch 30 is more than each of 2 ranks' share of the 40 -sequences, 20"},
		{"more ranks than examples", []string{"train", "mnist-mlp", "-device", "cpu,cpu", "-data", one, "-hidden", "3", "-layers", "1", "-batch", "1", "-steps", "1"},
			"tessera train: -device lists 2 devices, one per rank, but the training set has 1 examples: list at most 1"},
		{"resume that 2 ranks cannot share", append(lstm(2), "-device", "cpu,cpu", "-batch", "3", "-resume", odd),
			"tessera train: -resume: the checkpoint was saved by 1 ranks after 3 examples of epoch 0, which 2 ranks cannot share evenly; resume with a number of ranks that divides 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(tt.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2\n%s", code, stdout)
			}
			wantOneLine(t, stderr, tt.want)
		})
	}
}

// TestTrainDevicesUnderMpirun: -device lists the ranks of one process,
// which mpirun's ranks cannot add to: one line from rank 0, status 2.
func TestTrainDevicesUnderMpirun(t *testing.T) {
	code, stdout, stderr := mpirunCommand(t, 2, append(lstm(1), "-device", "cpu,cpu")...)
	if code != 2 {
		t.Errorf("exit status %d, want 2\n%s", code, stdout)
	}
	wantOneLine(t, stderr, `tessera train: -device "cpu,cpu" names 2 devices, one per rank of this process, but mpirun started 2 ranks already: give each process one device, or run without mpirun`)
}
