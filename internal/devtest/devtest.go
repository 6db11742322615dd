// Package devtest gives tests the devices to run on: the CPU always, and
// the first GPU adapter that opens (lavapipe included) whenever one does.
// With TESSERA_REQUIRE_GPU=1, as in CI, a missing GPU fails the test
// instead of being skipped, so a broken runner cannot pass silently. The
// rule lives in gpuleaf, which the leaves' own tests use.
package devtest

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/devtest/gpuleaf"
	"github.com/tessera-ml/tessera/tensor"
)

var probe = sync.OnceValues(func() (tensor.Device, error) { return tensor.TestGPU() })

// Devices returns the CPU and, when an adapter opens, a GPU.
func Devices(tb testing.TB) []tensor.Device {
	if g, ok := GPU(tb); ok {
		return []tensor.Device{tensor.CPU, g}
	}
	return []tensor.Device{tensor.CPU}
}

// GPU returns a GPU device for tests, of any adapter type. Without one it
// logs why and returns false, or fails the test when
// TESSERA_REQUIRE_GPU=1. Tests that need the GPU use MustGPU.
func GPU(tb testing.TB) (tensor.Device, bool) {
	tb.Helper()
	d, err := probe()
	if err != nil {
		if Required() {
			tb.Fatalf("TESSERA_REQUIRE_GPU=1 but no GPU opens: %v", err)
		}
		tb.Logf("no GPU, running on the CPU only: %v", err)
		return tensor.Device{}, false
	}
	return d, true
}

// MustGPU returns a GPU device for a test that needs one, of any adapter
// type. Without an adapter (or in a build without cgo) the test skips,
// or fails when TESSERA_REQUIRE_GPU=1; any other error opening the GPU
// fails it (gpuleaf.Check).
func MustGPU(tb testing.TB) tensor.Device {
	tb.Helper()
	d, err := probe()
	gpuleaf.Check(tb, err, device.ErrNoAdapter, device.ErrNotCompiled)
	return d
}

// Required reports whether TESSERA_REQUIRE_GPU=1.
func Required() bool { return gpuleaf.Required() }

// Runtime returns the GPU runtime of dev, a GPU device from GPU or
// MustGPU, for tests that count its dispatches, read its memory
// statistics or set its limits; an error fails the test.
func Runtime(tb testing.TB, dev tensor.Device) *device.GPU {
	tb.Helper()
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// LogicalGPUs offers each adapter as n logical GPUs
// (tensor.LogicalGPUsEnv) unless the environment sets it already, so
// that tests of several GPU devices (-device gpu:0,gpu:1) run on a
// machine with one adapter, such as CI's lavapipe. A TestMain calls it
// before m.Run: the value is read when the first GPU opens.
func LogicalGPUs(n int) {
	if os.Getenv(tensor.LogicalGPUsEnv) == "" {
		os.Setenv(tensor.LogicalGPUsEnv, strconv.Itoa(n))
	}
}
