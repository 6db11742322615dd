package programs

import (
	"os"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
)

// TestMain offers each adapter as two logical GPUs (unless the
// environment says otherwise), so that -device gpu:0,gpu:1 trains two
// ranks on a machine with one adapter, such as CI's lavapipe.
func TestMain(m *testing.M) {
	devtest.LogicalGPUs(2)
	os.Exit(m.Run())
}
