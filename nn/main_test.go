package nn_test

import (
	"os"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestMain caps CPU memory at 2 GiB unless the environment says
// otherwise, so that the adversarial sizes of TestAdversarialArguments
// (2³¹ rows) are a quick out-of-memory error, not minutes of allocation.
func TestMain(m *testing.M) {
	if os.Getenv(tensor.CPUBudgetEnv) == "" {
		os.Setenv(tensor.CPUBudgetEnv, "2GiB")
	}
	os.Exit(m.Run())
}
