//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fileSizeEnv, in a child run as the command (asCommandEnv), limits the
// size of the files it writes to this many bytes (ulimit -f), with
// SIGXFSZ ignored so that a write past it fails with EFBIG. It is set in
// init, before TestMain runs the command.
const fileSizeEnv = "TESSERA_TEST_FILE_SIZE"

func init() {
	v := os.Getenv(fileSizeEnv)
	if v == "" {
		return
	}
	n, err := strconv.ParseUint(v, 10, 64)
	var lim syscall.Rlimit
	if err == nil {
		err = syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim)
	}
	if err == nil {
		signal.Ignore(syscall.SIGXFSZ)
		lim.Cur = n
		err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
	}
	if err != nil {
		panic(fileSizeEnv + ": " + err.Error())
	}
}

// lstm returns the arguments of a small lstm run of steps steps on the
// CPU. The program has no schedule that depends on the number of steps,
// so a checkpoint of a shorter run resumes into a longer one.
func lstm(steps int) []string {
	return []string{"train", "lstm", "-device", "cpu", "-hidden", "7", "-sequences", "40", "-batch", "8", "-length", "9", "-delay", "2",
		"-steps", strconv.Itoa(steps)}
}

// finalLoss returns the "final training loss" line of a run's output.
func finalLoss(t *testing.T, stdout string) string {
	t.Helper()
	m := regexp.MustCompile(`final training loss: \S+`).FindString(stdout)
	if m == "" {
		t.Fatalf("no final training loss in\n%s", stdout)
	}
	return m
}

// TestTrainSaveFails resumes a checkpoint in a child process under a
// file-size limit smaller than the checkpoint it must save at the end:
// the command exits with status 1 and one line on stderr that names the
// file and the cause; the checkpoint is left as it was, with no
// temporary file beside it, and resuming it without the limit ends with
// the loss of an uninterrupted run.
func TestTrainSaveFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ckpt.safetensors")
	args := lstm(4)
	if code, stdout, stderr := runArgs(append(lstm(2), "-checkpoint", p)...); code != 0 {
		t.Fatalf("the first 2 steps: exit status %d\n%s%s", code, stdout, stderr)
	}
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append(args, "-resume", p, "-checkpoint", p)...)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1", fileSizeEnv+"="+strconv.Itoa(len(old)/2))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("exit status %v, want 1\nstdout:\n%s", err, stdout.String())
	}
	wantOneLine(t, stderr.String(), "tessera train: cannot save the checkpoint after step 4, the file is left as it was: checkpoint.Save "+p+": ",
		"file too large")
	if now, _ := os.ReadFile(p); !bytes.Equal(now, old) {
		t.Error("the failed save changed the checkpoint")
	}
	if l, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*")); l != nil {
		t.Errorf("temporary files left: %v", l)
	}
	code, resumed, errOut := runArgs(append(args, "-resume", p)...)
	_, whole, _ := runArgs(args...)
	t.Logf("the child: %s; resumed: %s; uninterrupted: %s; checkpoint %d bytes", strings.TrimSpace(stderr.String()), finalLoss(t, resumed), finalLoss(t, whole), len(old))
	if code != 0 || finalLoss(t, resumed) != finalLoss(t, whole) {
		t.Errorf("resuming: exit status %d, %q; uninterrupted: %q\n%s", code, finalLoss(t, resumed), finalLoss(t, whole), errOut)
	}
}

// TestTrainResumeDamaged resumes a checkpoint cut short, one with a bit
// flipped in its data, one with a bit flipped in its metadata, and a
// file that is not a checkpoint: each is exit status 1 and one line that
// names the file and what is wrong with it.
func TestTrainResumeDamaged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ckpt.safetensors")
	args := lstm(3)
	if code, stdout, stderr := runArgs(append(args, "-checkpoint", p)...); code != 0 {
		t.Fatalf("exit status %d\n%s%s", code, stdout, stderr)
	}
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x10
		return b
	}
	step := bytes.Index(good, []byte(`"step":"`)) + len(`"step":"`)
	for _, c := range []struct {
		name string
		file []byte
		says []string
	}{
		{"cut", good[:len(good)-1000], []string{"truncated: want " + strconv.Itoa(len(good)) + " bytes, have " + strconv.Itoa(len(good)-1000)}},
		{"data", flip(len(good) - 5), []string{"checksum mismatch: the bytes of tensor ", "the file is damaged"}},
		{"step", flip(step), []string{"checksum mismatch: the header's tensor names, dtypes, shapes and metadata give CRC-32C"}},
		{"text", []byte("not a checkpoint at all\n"), []string{"not a safetensors file?"}},
	} {
		q := filepath.Join(dir, c.name+".safetensors")
		if err := os.WriteFile(q, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runArgs(append(args, "-resume", q)...)
		if code != 1 {
			t.Errorf("%s: exit status %d, want 1\n%s", c.name, code, stdout)
		}
		wantOneLine(t, stderr, "tessera train: checkpoint.Load "+q+": ", c.says...)
		t.Logf("%s: %s", c.name, strings.TrimSpace(stderr))
	}
}
