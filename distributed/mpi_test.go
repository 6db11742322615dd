package distributed

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/devtest/mpitest"
)

// TestMain closes the group that a test or benchmark run under mpirun
// left open: a rank that exits without finalizing MPI fails the job.
func TestMain(m *testing.M) {
	code := m.Run()
	world.mu.Lock()
	g := world.g
	world.mu.Unlock()
	if g != nil && g.MPI() {
		if err := g.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// childEnv marks a test binary started by mpirun from one of the tests
// below; its value is the child's part (see TestMPIChild).
const childEnv = "TESSERA_DISTRIBUTED_CHILD"

// mpirun runs this test binary's TestMPIChild as np ranks under Open
// MPI's mpirun, with childEnv set to part, and returns the tagged output
// of every rank and mpirun, its error and how long it took. Without
// Open MPI's mpirun the test skips, or fails when TESSERA_REQUIRE_MPI=1
// (as in CI, whose ci/test.sh installs it).
func mpirun(t *testing.T, part string, np int, limit time.Duration) (string, error, time.Duration) {
	t.Helper()
	return mpitest.Job{
		NP: np, Flags: []string{"--tag-output"}, Env: []string{childEnv + "=" + part}, Limit: limit,
		Args: []string{os.Args[0], "-test.run=^TestMPIChild$", "-test.v", "-test.count=1", "-test.timeout=" + limit.String()},
	}.Run(t)
}

// TestMPI runs the collectives at np=2 (TestMPIChild, part
// "collectives"): every op, dtype and device against a float64
// reference, the mismatched-argument errors, and non-blocking work.
func TestMPI(t *testing.T) {
	out, err, took := mpirun(t, "collectives", 2, 60*time.Second)
	if err != nil || strings.Count(out, "--- PASS: TestMPIChild") != 2 {
		t.Fatalf("mpirun -np 2 (%v): %v\n%s", took.Round(time.Millisecond), err, out)
	}
	t.Logf("np=2 in %v", took.Round(time.Millisecond))
}

// TestMPIRankEnds ends rank 1 of an np=2 job while rank 0 waits for it
// in an AllReduce: killed (SIGKILL), exited with status 3, aborted
// (Group.Abort), or closed (a rank that stopped early). The job must end
// as a failure, rank 0 included, naming what happened, well within 60 s
// rather than leave rank 0 waiting for ever. The first three are Open
// MPI's doing: mpirun aborts the job when a rank dies or exits without
// finalizing; the last is Close's, which meets rank 0's AllReduce and
// tells both.
func TestMPIRankEnds(t *testing.T) {
	if !cgoEnabled {
		t.Skip("built without cgo: no rank gets as far as a collective")
	}
	for _, tt := range []struct {
		part   string
		status int      // mpirun's exit status: the first failed rank's (0: any but 0)
		says   []string // in the job's output, from the ranks themselves
	}{
		{"kill", 128 + 9, []string{"rank 1 kills itself"}},
		{"exit", 3, []string{"rank 1 exits with status 3"}},
		{"abort", 7, []string{"rank 1 aborts with status 7"}},
		{"close", 0, []string{"rank 1 closes: distributed: rank 1: Close: ranks disagree: ranks called different collectives here (AllReduce and Close",
			"rank 0: AllReduce returned distributed: rank 0: AllReduce: ranks disagree"}},
	} {
		t.Run(tt.part, func(t *testing.T) {
			out, err, took := mpirun(t, tt.part, 2, 60*time.Second)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || (tt.status != 0 && exit.ExitCode() != tt.status) {
				t.Fatalf("mpirun: %v in %v, want exit status %d (0: any failure)\n%s", err, took, tt.status, out)
			}
			for _, s := range tt.says {
				if !strings.Contains(out, s) {
					t.Errorf("the job's output does not say %q:\n%s", s, out)
				}
			}
			t.Logf("mpirun ended the job %v after the start: %v", took.Round(time.Millisecond), err)
		})
	}
}
