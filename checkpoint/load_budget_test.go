package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// writeSparseCheckpoint writes a safetensors file at path whose one F32
// tensor "w" has n elements, all zero, as a sparse file: its header is
// real and its data a hole, so a checkpoint of many GiB costs no disk.
func writeSparseCheckpoint(t *testing.T, path string, n int64) {
	t.Helper()
	header := fmt.Sprintf(`{"w":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}`, n, 4*n)
	for len(header)%8 != 0 {
		header += " "
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(len(header)))
	if _, err := f.Write(append(size[:], header...)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(8+len(header)) + 4*n); err != nil {
		t.Fatal(err)
	}
}

// expectLoadOOM checks that loading path onto dev is an out-of-memory
// error naming the file and the tensor, and that a small checkpoint
// loads afterwards.
func expectLoadOOM(t *testing.T, path string, dev tensor.Device) {
	t.Helper()
	_, err := Load(path, On(dev))
	var fe *FileError
	if !errors.Is(err, tensor.ErrOutOfMemory) || !errors.As(err, &fe) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"w"`) {
		t.Fatalf("%v: loading a checkpoint beyond the CPU budget: %v, want an out-of-memory *FileError naming %s and tensor \"w\"", dev, err, path)
	}
	small := filepath.Join(t.TempDir(), "small.safetensors")
	if err := Save(small, map[string]*tensor.Tensor{"v": tensor.New([]float32{1, 2, 3})}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(small, On(dev))
	if err != nil {
		t.Fatalf("%v: a small checkpoint after the refusal: %v", dev, err)
	}
	if got := f.Tensors["v"].Float32s(); len(got) != 3 || got[2] != 3 {
		t.Fatalf("%v: the small checkpoint loaded as %v", dev, got)
	}
}

// TestLoadBeyondTheBudget: a checkpoint whose tensor is larger than the
// CPU budget (32 GiB, beyond the machines CI runs on) is an
// out-of-memory error, before any host slice is made for it, on every
// device.
func TestLoadBeyondTheBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.safetensors")
	writeSparseCheckpoint(t, path, 8<<30)
	if budget, err := tensor.CPUBudget(); err != nil || budget >= 64<<30 {
		t.Skipf("a CPU budget of %d bytes (%v) holds the 32 GiB tensor and its copy", budget, err)
	}
	for _, dev := range devtest.Devices(t) {
		expectLoadOOM(t, path, dev)
	}
}

// TestLoadBeyondAnAddressSpaceLimit runs TestLoadUnderLimitChild in a
// child process under ulimit -v of 2 GiB, where a 3 GiB checkpoint is
// beyond the budget although the machine's memory holds it.
func TestLoadBeyondAnAddressSpaceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "3gib.safetensors")
	writeSparseCheckpoint(t, path, 3<<28)
	cmd := exec.Command("sh", "-c", `ulimit -v 2097152 && exec "$0" "$@"`, os.Args[0], "-test.run=^TestLoadUnderLimitChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TESSERA_LOAD_LIMIT_CHILD="+path, tensor.CPUBudgetEnv+"=")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "fatal error") || err != nil || !strings.Contains(string(out), "--- PASS: TestLoadUnderLimitChild") {
		t.Fatalf("the child under ulimit -v 2 GiB: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "budget") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// TestLoadUnderLimitChild is TestLoadBeyondAnAddressSpaceLimit's child.
func TestLoadUnderLimitChild(t *testing.T) {
	path := os.Getenv("TESSERA_LOAD_LIMIT_CHILD")
	if path == "" {
		t.Skip("runs only as the child of TestLoadBeyondAnAddressSpaceLimit")
	}
	for _, dev := range devtest.Devices(t) {
		expectLoadOOM(t, path, dev)
		t.Logf("%v: loading the 3 GiB checkpoint is out of memory", dev)
	}
	info, _ := tensor.CPUBudgetInfo()
	t.Logf("CPU budget: %v", info)
}
