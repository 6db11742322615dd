// Package mpitest runs a test binary (or any program) as the ranks of an
// Open MPI job, for the np=2 tests of distributed, ddp, train and the
// tessera command. Without Open MPI's mpirun the test skips, saying how
// to install it, or fails when TESSERA_REQUIRE_MPI=1, as in CI, whose
// ci/test.sh installs it.
package mpitest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv is the variable that makes a missing mpirun a failure.
const RequireEnv = "TESSERA_REQUIRE_MPI"

// Mpirun returns the path of Open MPI's mpirun. Without one (or with
// another MPI's) it skips tb, or fails it when TESSERA_REQUIRE_MPI=1.
func Mpirun(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("mpirun")
	if err == nil {
		var v []byte
		v, err = exec.Command(path, "--version").CombinedOutput()
		if err == nil && !strings.Contains(string(v), "Open MPI") {
			err = errors.New(path + " is not Open MPI's: " + strings.TrimSpace(string(v)))
		}
	}
	if err != nil {
		why := "no Open MPI mpirun (apt-get install libopenmpi-dev openmpi-bin): " + err.Error()
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%s=1 but %s", RequireEnv, why)
		}
		tb.Skip(why + "; " + RequireEnv + "=1 makes this a failure")
	}
	return path
}

// A Job is an mpirun launch of NP ranks of Args.
type Job struct {
	NP    int
	Flags []string      // more mpirun flags: "-q" (no help text of its own), "--tag-output"
	Env   []string      // KEY=VALUE, set for mpirun and passed on to every rank (-x)
	Args  []string      // the program and its arguments; os.Args[0] re-runs this test binary
	Limit time.Duration // the job's deadline; 0 means 60 s
}

// Command returns the job's command, as root and with more ranks than
// cores allowed, and the cancel of its deadline. Past the deadline it
// sends mpirun SIGTERM, which mpirun passes on to the ranks (a SIGKILL
// would orphan them), and gives it 10 s more. It skips or fails tb as
// Mpirun does.
func (j Job) Command(tb testing.TB) (*exec.Cmd, context.CancelFunc) {
	tb.Helper()
	path := Mpirun(tb)
	args := append([]string{"--allow-run-as-root", "--oversubscribe"}, j.Flags...)
	args = append(args, "-np", strconv.Itoa(j.NP))
	for _, kv := range j.Env {
		args = append(args, "-x", kv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.limit())
	cmd := exec.CommandContext(ctx, path, append(args, j.Args...)...)
	cmd.Env = append(os.Environ(), j.Env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, cancel
}

// Run runs the job and returns the output of mpirun and every rank
// together, its error (saying so when the job ran past its deadline)
// and how long it took. It skips or fails tb as Mpirun does.
func (j Job) Run(tb testing.TB) (string, error, time.Duration) {
	tb.Helper()
	cmd, cancel := j.Command(tb)
	defer cancel()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil && took >= j.limit() {
		err = errors.New("mpirun ran past " + j.limit().String() + ": " + err.Error())
	}
	return string(out), err, took
}

// limit returns the job's deadline.
func (j Job) limit() time.Duration {
	if j.Limit <= 0 {
		return 60 * time.Second
	}
	return j.Limit
}
