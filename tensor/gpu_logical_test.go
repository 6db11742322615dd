package tensor_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestLogicalGPUs runs TestLogicalGPUsChild in a child process with
// TESSERA_LOGICAL_GPUS=2 (read when the first GPU opens, so not in this
// process), and checks that a malformed value is an error naming it.
func TestLogicalGPUs(t *testing.T) {
	devtest.MustGPU(t)
	for _, c := range []struct{ value, want string }{
		{"2", "--- PASS: TestLogicalGPUsChild"},
		{"zero", "TESSERA_LOGICAL_GPUS=\"zero\""},
		{"0", "1 to 64"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLogicalGPUsChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), tensor.LogicalGPUsEnv+"="+c.value, "TESSERA_LOGICAL_CHILD=1")
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) || (c.value == "2") != (err == nil) {
			t.Errorf("%s=%s: %v, want output with %q:\n%s", tensor.LogicalGPUsEnv, c.value, err, c.want, out)
		}
	}
}

// TestLogicalGPUsChild: gpu:0 and gpu:1 are two devices of adapter 0,
// each computing on its own, with tensors moving between them.
func TestLogicalGPUsChild(t *testing.T) {
	if os.Getenv("TESSERA_LOGICAL_CHILD") == "" {
		t.Skip("runs only as the child of TestLogicalGPUs")
	}
	g0, err := tensor.GPUDevice(tensor.GPU(0))
	if err != nil {
		t.Fatal(err)
	}
	g1, err := tensor.GPUDevice(tensor.GPU(1))
	if err != nil {
		t.Fatal(err)
	}
	if g0 == g1 {
		t.Fatal("gpu:0 and gpu:1 are the same device")
	}
	if g0.Info().Name != g1.Info().Name {
		t.Errorf("gpu:0 is %q, gpu:1 %q: want two devices of one adapter", g0.Info().Name, g1.Info().Name)
	}
	x := tensor.Arange(0, 12, 1).Reshape(3, 4)
	want := x.MatMul(x.T()).Float32s()
	a := x.To(tensor.GPU(0))
	b := a.To(tensor.GPU(1))
	if b.Device() != tensor.GPU(1) {
		t.Fatalf("To(gpu:1) gave a tensor on %v", b.Device())
	}
	for _, y := range []*tensor.Tensor{a, b} {
		if got := y.MatMul(y.T()).Float32s(); !slices.Equal(got, want) {
			t.Errorf("on %v: %v, want %v", y.Device(), got, want)
		}
	}
	t.Logf("gpu:0 and gpu:1: two devices of %s", g0.Info().Name)
}
