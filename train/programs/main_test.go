package programs

import (
	"os"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestMain offers each adapter as two logical GPUs (unless the
// environment says otherwise), so that -device gpu:0,gpu:1 trains two
// ranks on a machine with one adapter, such as CI's lavapipe.
func TestMain(m *testing.M) {
	if os.Getenv(tensor.LogicalGPUsEnv) == "" {
		os.Setenv(tensor.LogicalGPUsEnv, "2")
	}
	os.Exit(m.Run())
}
