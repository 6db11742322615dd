//go:build linux

package train

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// fullDiskEnv makes the test binary the child of TestFailedSaveKeepsState,
// working in the folder it names.
const fullDiskEnv = "TRAIN_TEST_FULL_DISK"

// fullDiskArgs are the toy program's flags there: a checkpoint of about
// 24 KB (weights, momentum and running mean of 2,000 inputs), more than
// the file-size limit of 16 KB.
var fullDiskArgs = []string{"-device", "cpu", "-steps", "10", "-width", "2000"}

// TestFailedSaveKeepsState fills the disk under a checkpoint save, in a
// child process under a file-size limit (ulimit -f, SIGXFSZ ignored, so
// that write fails with EFBIG). At the level of the loop's state: the
// failed save is an error naming the file, leaves the previous
// checkpoint as it was, and changes nothing in the task (weights,
// optimizer, loader, generators, extra state, step); training goes on
// with the values of an uninterrupted run, a later save succeeds once
// there is room, and resuming it continues those values bit for bit. At
// the level of Main: a periodic or a final save that fails stops the
// run with one *SaveError, leaving the checkpoint file as it was.
func TestFailedSaveKeepsState(t *testing.T) {
	if dir := os.Getenv(fullDiskEnv); dir != "" {
		fullDiskChild(t, dir)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailedSaveKeepsState$", "-test.v")
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	t.Logf("the child:\n%s", out)
}

// limitFileSize sets the soft limit on the size of the files this
// process writes (the hard limit stays, so that it can be raised again);
// math.MaxUint64 lifts it.
func limitFileSize(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
}

func fullDiskChild(t *testing.T, dir string) {
	signal.Ignore(syscall.SIGXFSZ)
	want := mustRun(t, toy(false), fullDiskArgs[2:], Options{}).Values
	newTask := func() (Task, *History) {
		f, build, err := parse(toy(false), fullDiskArgs, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		tensor.ManualSeed(f.Seed)
		task, err := build(&Run{Flags: f, Device: tensor.CPU, Out: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return task, &History{Curve: "loss"}
	}
	steps := func(task Task, hist *History, from, to int) {
		for i := from; i < to; i++ {
			v := task.Step(i)
			hist.addStep(i, v)
			if math.Float64bits(v) != math.Float64bits(want[i]) {
				t.Fatalf("step %d: %v, want %v as without the failed save", i, v, want[i])
			}
		}
	}
	p := filepath.Join(dir, "ckpt.safetensors")
	task, hist := newTask()
	defer task.Close()
	steps(task, hist, 0, 4)
	if err := save(p, "toy", 4, 1, task.State(), tensor.DefaultGenerator(), hist); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(p)
	steps(task, hist, 4, 6)

	limitFileSize(t, 16<<10)
	before := snapshot(t, task, hist)
	err := save(p, "toy", 6, 1, task.State(), tensor.DefaultGenerator(), hist)
	if !errors.Is(err, syscall.EFBIG) || !strings.HasPrefix(err.Error(), "checkpoint.Save "+p+": ") || !strings.Contains(err.Error(), "file too large") {
		t.Fatalf("saving past the file-size limit: %v", err)
	}
	t.Logf("the failed save: %v", err)
	if now, _ := os.ReadFile(p); !bytes.Equal(now, old) {
		t.Fatal("the failed save changed the previous checkpoint")
	}
	if after := snapshot(t, task, hist); !maps.Equal(before, after) {
		for k := range before {
			if before[k] != after[k] {
				t.Errorf("the failed save changed %s", k)
			}
		}
		t.FailNow()
	}
	steps(task, hist, 6, 8)
	limitFileSize(t, math.MaxUint64)
	if err := save(p, "toy", 8, 1, task.State(), tensor.DefaultGenerator(), hist); err != nil {
		t.Fatalf("saving once there is room: %v", err)
	}
	resumed, rhist := newTask()
	defer resumed.Close()
	if step, err := restore(p, "toy", resumed.State(), rhist, &Run{Device: tensor.CPU, World: 1}); err != nil || step != 8 {
		t.Fatalf("restore: step %d, %v", step, err)
	}
	steps(resumed, rhist, 8, 10)

	// Main: the periodic save after step 3 fails, with no checkpoint
	// before it; then resuming the one of step 8, the final save fails.
	limitFileSize(t, 16<<10)
	fresh := filepath.Join(dir, "fresh.safetensors")
	for _, c := range []struct {
		path string
		args []string
		step int
	}{
		{fresh, []string{"-checkpoint", fresh, "-checkpoint-every", "3"}, 3},
		{p, []string{"-checkpoint", p, "-resume", p}, 10},
	} {
		old, _ := os.ReadFile(c.path)
		res, err := Main(toy(false), append(fullDiskArgs, c.args...), Options{})
		var se *SaveError
		if !errors.As(err, &se) || se.Path != c.path || se.Step != c.step || !errors.Is(err, syscall.EFBIG) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Main %q past the file-size limit: %v, want a one-line *SaveError of step %d", c.args, err, c.step)
		}
		t.Logf("Main: %v", err)
		if now, _ := os.ReadFile(c.path); !bytes.Equal(now, old) || res.Steps != c.step || res.Saved != "" {
			t.Fatalf("Main %q: the file now holds %d bytes, was %d; %d steps, saved %q", c.args, len(now), len(old), res.Steps, res.Saved)
		}
	}
	if l, _ := filepath.Glob(filepath.Join(dir, ".*")); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
}

// snapshot returns everything a checkpoint of task would hold, the
// tensors' bits included, by name.
func snapshot(t *testing.T, task Task, hist *History) map[string]string {
	t.Helper()
	tensors, meta, err := contents("toy", 0, 1, task.State(), tensor.DefaultGenerator(), hist)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range meta {
		m["metadata "+k] = v
	}
	for name, x := range tensors {
		var b strings.Builder
		for _, v := range x.Float32s() {
			fmt.Fprintf(&b, "%08x", math.Float32bits(v))
		}
		m["tensor "+name] = b.String()
	}
	return m
}
