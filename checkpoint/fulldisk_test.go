//go:build linux

package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// fullDiskEnv makes the test binary the child of TestSaveOnFullDisk:
// "ulimit <dir>" or "tmpfs <dir>".
const fullDiskEnv = "CHECKPOINT_TEST_FULL_DISK"

// fullDiskLimit is the room left: the file-size limit, or the tmpfs's
// size. A checkpoint of 1,000 float32 fits; one of 100,000 does not.
const fullDiskLimit = 64 << 10

// TestSaveOnFullDisk saves a checkpoint, then a larger one that does not
// fit, in a child process: under a file-size limit (ulimit -f, with
// SIGXFSZ ignored, so that write fails with EFBIG) and on a full tmpfs
// (ENOSPC) mounted in a mount namespace of its own. The failed Save is an
// error naming the file and the cause; the previous checkpoint is left
// as it was, no temporary file stays, and a checkpoint that fits saves
// afterwards. The tmpfs case skips, saying why, where no mount namespace
// can be made (no CAP_SYS_ADMIN and no user namespaces).
func TestSaveOnFullDisk(t *testing.T) {
	if v := os.Getenv(fullDiskEnv); v != "" {
		mode, dir, _ := strings.Cut(v, " ")
		fullDiskChild(t, mode, dir)
		return
	}
	t.Run("ulimit", func(t *testing.T) {
		out, err := fullDiskCmd("ulimit", t.TempDir(), nil).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		t.Logf("the child:\n%s", out)
	})
	t.Run("tmpfs", func(t *testing.T) {
		dir := t.TempDir()
		var errs []string
		for _, attr := range []*syscall.SysProcAttr{
			{Cloneflags: syscall.CLONE_NEWNS},
			{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}},
		} {
			out, err := fullDiskCmd("tmpfs", dir, attr).CombinedOutput()
			switch {
			case err != nil && bytes.Contains(out, []byte("=== RUN")):
				t.Fatalf("the child: %v\n%s", err, out)
			case err != nil: // it did not start
				errs = append(errs, err.Error())
			case bytes.Contains(out, []byte("--- SKIP")):
				errs = append(errs, string(bytes.TrimSpace(out)))
			case bytes.Contains(out, []byte("--- PASS")):
				t.Logf("the child:\n%s", out)
				return
			default:
				t.Fatalf("the child did not pass:\n%s", out)
			}
		}
		t.Skipf("no tmpfs to fill: %s", strings.Join(errs, "; "))
	})
}

// fullDiskCmd returns the command that runs the child in mode on dir.
func fullDiskCmd(mode, dir string, attr *syscall.SysProcAttr) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaveOnFullDisk$", "-test.v")
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+mode+" "+dir)
	cmd.SysProcAttr = attr
	return cmd
}

// fullDiskChild fills the disk in dir as mode says and checks Save.
func fullDiskChild(t *testing.T, mode, dir string) {
	cause, says := error(syscall.EFBIG), "file too large"
	switch mode {
	case "ulimit":
		signal.Ignore(syscall.SIGXFSZ)
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		lim.Cur = fullDiskLimit
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
	case "tmpfs":
		cause, says = syscall.ENOSPC, "no space left on device"
		// Private, so that the mount stays in this namespace.
		if err := syscall.Mount("none", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			t.Skipf("making / private: %v", err)
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
			t.Skipf("mounting a tmpfs: %v", err)
		}
	}
	p := filepath.Join(dir, "ckpt.safetensors")
	fits := map[string]*tensor.Tensor{"w": tensor.Ones([]int{1000})}
	if err := Save(p, fits, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	err = Save(p, map[string]*tensor.Tensor{"w": tensor.Ones([]int{100_000})}, map[string]string{"step": "2"})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Op != "Save" || fe.Path != p || !errors.Is(err, cause) || !strings.Contains(err.Error(), says) ||
		!strings.HasPrefix(err.Error(), "checkpoint.Save "+p+": ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("saving past the %s: %v, want a one-line *FileError naming %s that says %q", mode, err, p, says)
	}
	t.Logf("%s: %v", mode, err)
	if now, err := os.ReadFile(p); err != nil || !bytes.Equal(now, old) {
		t.Fatalf("the previous checkpoint changed: %d bytes (%v), want its %d", len(now), err, len(old))
	}
	f, err := Load(p)
	if err != nil || f.Meta["step"] != "1" {
		t.Fatalf("the previous checkpoint: %v, %v", f, err)
	}
	if l := dirNames(t, dir); len(l) != 1 {
		t.Fatalf("files left: %v", l)
	}
	fits["w"] = tensor.Zeros([]int{1000})
	if err := Save(p, fits, map[string]string{"step": "3"}); err != nil {
		t.Fatalf("a checkpoint that fits, after the failure: %v", err)
	}
	if mode == "tmpfs" {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Fatal(err)
		}
	}
}
