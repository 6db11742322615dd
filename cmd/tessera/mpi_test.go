package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest/mpitest"
	"github.com/tessera-ml/tessera/internal/mnist"
)

// mpirunCommand runs this test binary as the tessera command with args,
// np ranks under Open MPI's mpirun -q (which keeps its own help text
// off stderr), and returns the exit status and the ranks' output. Without
// Open MPI's mpirun the test skips, or fails when TESSERA_REQUIRE_MPI=1
// (as in CI).
func mpirunCommand(t *testing.T, np int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd, cancel := mpitest.Job{NP: np, Flags: []string{"-q"}, Env: []string{asCommandEnv + "=1"}, Args: append([]string{os.Args[0]}, args...)}.Command(t)
	defer cancel()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Run()
	if strings.Contains(errOut.String(), "MPI is not available") {
		t.Skipf("this build cannot reach MPI: %s", errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestTrainBadWorld launches worlds that the flags cannot serve: each is
// one line on stderr (rank 0's; the other ranks stay quiet) and exit
// status 2.
func TestTrainBadWorld(t *testing.T) {
	one := t.TempDir() // a training set of one image
	if err := mnist.WriteDir(one, mnist.Stripes(1), mnist.Stripes(10)); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "odd.safetensors") // 3 examples into the epoch
	if code, stdout, stderr := runArgs("train", "lstm", "-device", "cpu", "-hidden", "7", "-sequences", "40", "-length", "9", "-delay", "2",
		"-batch", "3", "-steps", "1", "-checkpoint", odd); code != 0 {
		t.Fatalf("the checkpoint: exit status %d\n%s%s", code, stdout, stderr)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"more ranks than examples", []string{"train", "mnist-mlp", "-device", "cpu", "-data", one, "-hidden", "3", "-layers", "1", "-batch", "1", "-steps", "1"},
			"tessera train: 2 ranks but the training set has 1 examples: launch at most 1"},
		{"batch above a rank's share", append(lstm(1), "-batch", "30"),
			"tessera train: -batch 30 is more than each of 2 ranks' share of the 40 -sequences, 20"},
		{"resume that 2 ranks cannot share", append(lstm(2), "-batch", "3", "-resume", odd),
			"tessera train: -resume: the checkpoint was saved by 1 ranks after 3 examples of epoch 0, which 2 ranks cannot share evenly; resume with a number of ranks that divides 3"},
		{"program without data parallelism", []string{"train", "charrnn", "-device", "cpu", "-steps", "1"},
			"tessera train: charrnn does not train data-parallel: run it without mpirun, or with -np 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := mpirunCommand(t, 2, tt.args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2\n%s", code, stdout)
			}
			wantOneLine(t, stderr, tt.want)
		})
	}
}

// TestTrainResumesAtAnotherWorld trains lstm 2 steps as 2 ranks of batch
// 4, resumes the checkpoint alone with batch 8 for 2 more, and the other
// way round: both end with the loss of 4 uninterrupted steps alone with
// batch 8 (the same examples, in the same order).
func TestTrainResumesAtAnotherWorld(t *testing.T) {
	both := resumesAlone(t, "np=2", func(args ...string) (int, string, string) {
		return mpirunCommand(t, 2, append(args, "-batch", "4")...)
	})
	if !strings.Contains(both, "data-parallel over 2 ranks: 8 examples a step") {
		t.Errorf("the np=2 summary does not give the world:\n%s", both)
	}
}

// resumesAlone runs lstm 2 steps with two (2 ranks of batch 4, named
// how), resumes the checkpoint alone with batch 8 for 2 more, and the
// other way round, and checks that both end with the loss of 4
// uninterrupted steps alone with batch 8. It returns the output of the
// run that two resumed.
func resumesAlone(t *testing.T, how string, two func(args ...string) (int, string, string)) string {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	if code, stdout, stderr := two(append(lstm(2), "-checkpoint", a)...); code != 0 {
		t.Fatalf("%s: exit status %d\n%s%s", how, code, stdout, stderr)
	}
	code, alone, stderr := runArgs(append(lstm(4), "-resume", a)...)
	if code != 0 {
		t.Fatalf("resumed alone: exit status %d\n%s", code, stderr)
	}
	if code, stdout, stderr := runArgs(append(lstm(2), "-checkpoint", b)...); code != 0 {
		t.Fatalf("alone: exit status %d\n%s%s", code, stdout, stderr)
	}
	code, both, stderr := two(append(lstm(4), "-resume", b)...)
	if code != 0 {
		t.Fatalf("resumed as %s: exit status %d\n%s", how, code, stderr)
	}
	_, whole, _ := runArgs(lstm(4)...)
	want := lossOf(t, whole)
	for _, got := range []struct {
		how, out string
	}{{how + " then alone", alone}, {"alone then " + how, both}} {
		// The summary prints 5 digits, so a rounding apart can move the last.
		if l := lossOf(t, got.out); math.Abs(l-want) > 1e-4*math.Abs(want) {
			t.Errorf("%s: final loss %v, uninterrupted alone %v", got.how, l, want)
		}
	}
	return both
}

// lossOf returns the final training loss of a run's output.
func lossOf(t *testing.T, stdout string) float64 {
	t.Helper()
	m := regexp.MustCompile(`final training loss: (\S+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no final training loss in\n%s", stdout)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
