//go:build linux

package train

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/checkpoint"
	"github.com/tessera-ml/tessera/internal/atomicfile"
)

// The child of TestKilledWhileSaving: crashEnv names the checkpoint to
// train with (resuming it if it exists), killAtEnv where in which save
// to kill itself ("save stage bytes": the save-th save of the run, at
// atomicfile.Stage stage once bytes are written).
const (
	crashEnv  = "TRAIN_TEST_CRASH_CHECKPOINT"
	killAtEnv = "TRAIN_TEST_KILL_AT"
)

// crashArgs are the toy program's flags in TestKilledWhileSaving: a
// checkpoint of 240 KB (weights, momentum and running mean of 20,000
// inputs), several buffers of atomicfile's, saved after every step.
var crashArgs = []string{"-device", "cpu", "-steps", "12", "-width", "20000"}

// crashChild trains as TestKilledWhileSaving's child and prints each
// step's value as "value <step> <bits in hex>" on stdout, one write each.
func crashChild(t *testing.T, path string) {
	args := append(crashArgs, "-checkpoint", path, "-checkpoint-every", "1")
	if _, err := os.Stat(path); err == nil {
		args = append(args, "-resume", path)
	}
	if at := os.Getenv(killAtEnv); at != "" {
		var save, saves int
		var stage atomicfile.Stage
		var n int64
		fmt.Sscan(at, &save, &stage, &n)
		atomicfile.Hook = func(s atomicfile.Stage, written int64) {
			if s == atomicfile.StageCreated {
				saves++
			}
			if saves == save && s == stage && written >= n {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	_, err := Main(toy(false), args, Options{AfterStep: func(step int, v float64) {
		fmt.Fprintf(os.Stdout, "value %d %x\n", step, math.Float64bits(v))
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// A kill is one run of the child: killed by the hook in a save, or by
// the parent after a delay.
type kill struct {
	save  int // the save of the run that the hook kills in, from 1; 0 for none
	stage atomicfile.Stage
	bytes int64
	after time.Duration // the parent's SIGKILL, if no hook
}

func (k kill) String() string {
	if k.save == 0 {
		return fmt.Sprintf("killed after %v", k.after)
	}
	return fmt.Sprintf("killed in save %d at stage %d (%d bytes)", k.save, k.stage, k.bytes)
}

// TestKilledWhileSaving runs the toy program in a child process that
// saves a checkpoint after every step, and kills it (SIGKILL) again and
// again: inside a save, at each stage of atomicfile's (the temporary
// file created, partly written, complete but not renamed, renamed), and
// at random moments; each run resumes the checkpoint the last one left.
// After each kill the checkpoint must load and hold the step of the
// last save that reached the rename, never a torn file; a kill before
// the rename leaves one temporary file, which the next run removes; and
// every value any run prints must equal, bit for bit, the uninterrupted
// run's value for that step. TRAIN_CRASH_SEED repeats a run's random
// choices (the seed is logged).
func TestKilledWhileSaving(t *testing.T) {
	if p := os.Getenv(crashEnv); p != "" {
		crashChild(t, p)
		return
	}
	want := mustRun(t, toy(false), crashArgs[2:], Options{}).Values
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TRAIN_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("TRAIN_CRASH_SEED=%d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var kills []kill
	for range 2 {
		for _, stage := range []atomicfile.Stage{atomicfile.StageCreated, atomicfile.StageWrote, atomicfile.StageWrote, atomicfile.StageSynced, atomicfile.StageRenamed} {
			k := kill{save: 1 + r.IntN(4), stage: stage}
			if stage == atomicfile.StageWrote {
				k.bytes = 1 + r.Int64N(240_000) // the first buffer's write, or a later one
			}
			kills = append(kills, k)
		}
		for range 3 {
			kills = append(kills, kill{after: time.Duration(r.Int64N(int64(400 * time.Millisecond)))})
		}
	}
	r.Shuffle(len(kills), func(i, j int) { kills[i], kills[j] = kills[j], kills[i] })
	kills = append(kills, kill{after: time.Hour}) // the run that finishes

	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	seen := map[int]int{} // values checked, by step
	prev, mid := 0, 0     // the checkpoint's step (0: none); kills inside a save
	for i, k := range kills {
		if prev == len(want) { // finished: start again from nothing
			os.Remove(path)
			prev = 0
		}
		if k.save > len(want)-prev { // saves left: one after each step but the last, and the end's
			k.save = len(want) - prev
		}
		out, status := runCrashChild(t, path, k)
		for _, line := range strings.Split(out, "\n") {
			if line == "" {
				continue
			}
			var step int
			var bits uint64
			if _, err := fmt.Sscanf(line, "value %d %x", &step, &bits); err != nil {
				t.Fatalf("run %d (%v): the child printed %q\n%s", i, k, line, out)
			}
			if step < prev || step >= len(want) || bits != math.Float64bits(want[step]) {
				t.Fatalf("run %d (%v), resumed at step %d: step %d's value is %v, want %v", i, k, prev, step, math.Float64frombits(bits), want[step])
			}
			seen[step]++
		}
		step, temps := checkpointStep(t, dir, path)
		wantStep, wantTemps := -1, -1 // -1: any
		switch {
		case status == "finished":
			wantStep, wantTemps = len(want), 0
		case status != "killed":
			t.Fatalf("run %d (%v): %s\n%s", i, k, status, out)
		case k.save > 0:
			wantStep, wantTemps = prev+k.save-1, 1
			if k.stage == atomicfile.StageRenamed {
				wantStep, wantTemps = prev+k.save, 0
			}
		}
		if k.save > 0 && status == "finished" {
			t.Fatalf("run %d (%v) from step %d finished", i, k, prev)
		}
		if step < prev || wantStep >= 0 && step != wantStep || wantTemps >= 0 && temps != wantTemps || temps > 1 {
			t.Fatalf("run %d (%v) from step %d: the checkpoint holds step %d and %d temporary files are left; want step %d and %d (-1: any)",
				i, k, prev, step, temps, wantStep, wantTemps)
		}
		if temps == 1 {
			mid++
		}
		prev = step
	}
	if mid < 8 { // the hook's kills before a rename; the timed ones may add
		t.Errorf("only %d kills landed inside a save", mid)
	}
	t.Logf("%d runs, %d killed inside a save; values checked by step: %v", len(kills), mid, seen)
}

// runCrashChild runs the child on path with kill k and returns what it
// printed and how it ended: "killed" (by SIGKILL), "finished", or the
// error.
func runCrashChild(t *testing.T, path string, k kill) (string, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWhileSaving$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	if k.save > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d %d %d", killAtEnv, k.save, k.stage, k.bytes))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if k.save == 0 {
		timer := time.AfterFunc(k.after, func() { cmd.Process.Kill() })
		defer timer.Stop()
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return valuesOnly(out.String()), "finished"
	case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		return valuesOnly(out.String()), "killed"
	}
	return out.String(), err.Error()
}

// valuesOnly keeps the "value" lines of a child's output, which ends
// with the test framework's "PASS" when it finishes.
func valuesOnly(out string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if line := sc.Text(); line != "PASS" {
			fmt.Fprintln(&b, line)
		}
	}
	return b.String()
}

// checkpointStep loads the checkpoint at path, failing the test if it
// does not load, and returns its step (0 when there is no file) and the
// number of temporary files beside it.
func checkpointStep(t *testing.T, dir, path string) (step, temps int) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".ckpt.safetensors.tmp") {
			temps++
		} else if e.Name() != "ckpt.safetensors" {
			t.Fatalf("a file %s in the checkpoint's folder", e.Name())
		}
	}
	f, err := checkpoint.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, temps
	}
	if err != nil {
		t.Fatalf("the checkpoint left by a killed run does not load: %v", err)
	}
	defer f.Release()
	if err := f.GetMeta(checkpoint.MetaStep, &step); err != nil {
		t.Fatal(err)
	}
	return step, temps
}
