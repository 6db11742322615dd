//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// killEnv makes the test binary a child that writes the file it names
// and kills itself with SIGKILL at the stage and byte count killAtEnv
// gives (see TestKilledWrite).
const (
	killEnv   = "ATOMICFILE_TEST_KILL_FILE"
	killAtEnv = "ATOMICFILE_TEST_KILL_AT"
)

// newContents is what the child writes: 200 KiB, several buffers' worth.
var newContents = bytes.Repeat([]byte("new contents "), 200<<10/13)

// TestKilledWrite kills a process at each stage of a Write (in the
// first and in a later buffer of the data, complete but not renamed,
// renamed) and checks that the file is then the old one or the new one,
// whole; that a kill before the rename leaves one temporary file and a
// kill after it none; and that the next Write removes the leftover.
func TestKilledWrite(t *testing.T) {
	if p := os.Getenv(killEnv); p != "" {
		var stage Stage
		var n int64
		fmt.Sscan(os.Getenv(killAtEnv), &stage, &n)
		Hook = func(s Stage, written int64) {
			if s == stage && written >= n {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		Write(p, func(w io.Writer) error { _, err := w.Write(newContents); return err })
		t.Fatal("the child was not killed")
	}
	for _, c := range []struct {
		stage  Stage
		n      int64
		isNew  bool
		temp   bool // a temporary file is left
		reason string
	}{
		{StageCreated, 0, false, true, "created"},
		{StageWrote, 1, false, true, "first buffer written"},
		{StageWrote, 100 << 10, false, true, "second buffer written"},
		{StageSynced, 0, false, true, "synced, not renamed"},
		{StageRenamed, 0, true, false, "renamed"},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		if err := Write(p, writeString("old")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWrite$")
		cmd.Env = append(os.Environ(), killEnv+"="+p, killAtEnv+"="+strconv.Itoa(int(c.stage))+" "+strconv.FormatInt(c.n, 10))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("%s: the child ended with %v, not SIGKILL\n%s", c.reason, err, out)
		}
		want := []byte("old")
		if c.isNew {
			want = newContents
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: the file holds %d bytes (%v), want the %s contents", c.reason, len(b), err, map[bool]string{false: "old", true: "new"}[c.isNew])
		}
		if l := leftovers(t, dir, "f"); len(l) != map[bool]int{false: 0, true: 1}[c.temp] {
			t.Errorf("%s: temporary files %v", c.reason, l)
		}
		if err := Write(p, writeString("next")); err != nil {
			t.Fatal(err)
		}
		if l := leftovers(t, dir, "f"); l != nil {
			t.Errorf("%s: the next Write left %v", c.reason, l)
		}
	}
}

// TestRemoveStaleSparesLockedAndOthers checks that Write removes an
// unlocked temporary file of its path but keeps a locked one (a Write in
// progress elsewhere) and files that only look alike.
func TestRemoveStaleSparesLockedAndOthers(t *testing.T) {
	dir := t.TempDir()
	names := []string{".f.tmp1", ".f.tmp2", ".f.tmpx", ".f.tmp3.bak", ".g.tmp4", "f.tmp5"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	held, err := os.Open(filepath.Join(dir, ".f.tmp2"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if ok, err := lock(held); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if err := Write(filepath.Join(dir, "f"), writeString("data")); err != nil {
		t.Fatal(err)
	}
	got := leftovers(t, dir, "f")
	if want := []string{".f.tmp2", ".f.tmp3.bak", ".f.tmpx", ".g.tmp4", "f.tmp5"}; !slices.Equal(got, want) {
		t.Errorf("after Write: %v, want %v", got, want)
	}
}

// TestWriteAt fills in bytes at the start after more than a buffer of
// data, and checks the stages Hook sees.
func TestWriteAt(t *testing.T) {
	var stages []Stage
	var last int64
	Hook = func(s Stage, n int64) {
		if len(stages) == 0 || stages[len(stages)-1] != s {
			stages = append(stages, s)
		}
		last = n
	}
	defer func() { Hook = nil }()
	p := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte{'.'}, 100<<10)
	err := Write(p, func(w io.Writer) error {
		if _, err := w.Write(data); err != nil {
			return err
		}
		_, err := w.(io.WriterAt).WriteAt([]byte("head"), 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := append([]byte("head"), data[4:]...); !bytes.Equal(b, want) {
		t.Errorf("the file starts %q and holds %d bytes, want \"head....\" and %d", b[:8], len(b), len(want))
	}
	if want := []Stage{StageCreated, StageWrote, StageSynced, StageRenamed}; !slices.Equal(stages, want) || last != int64(len(data)) {
		t.Errorf("stages %v ending at %d bytes, want %v ending at %d", stages, last, want, len(data))
	}
}

// TestLockLastsUntilRename checks that the temporary file stays locked
// after it is closed, until it is renamed, so that removeStale of a
// Write elsewhere cannot take a complete file from under the rename.
func TestLockLastsUntilRename(t *testing.T) {
	dir := t.TempDir()
	checked := false
	Hook = func(s Stage, _ int64) {
		if s != StageSynced {
			return
		}
		l := leftovers(t, dir)
		if len(l) != 1 {
			t.Fatalf("at StageSynced: %v", l)
		}
		f, err := os.Open(filepath.Join(dir, l[0]))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if locked, err := lock(f); locked || err != nil {
			t.Errorf("the closed temporary file could be locked: %v %v", locked, err)
		}
		checked = true
	}
	defer func() { Hook = nil }()
	if err := Write(filepath.Join(dir, "f"), writeString("x")); err != nil || !checked {
		t.Fatalf("Write: %v (checked %v)", err, checked)
	}
}
