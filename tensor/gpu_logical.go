package tensor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LogicalGPUsEnv is the environment variable that offers each WebGPU
// adapter as several logical GPUs, as TensorFlow's logical devices split
// one physical GPU: with TESSERA_LOGICAL_GPUS=2, gpu:0 and gpu:1 are two
// devices of adapter 0 (each its own WebGPU device, queue, allocator and
// budget) and gpu:2 and gpu:3 two of adapter 1. It lets multi-device
// code (data-parallel training over the GPUs of one process) run, and be
// tested, on a machine with one adapter, such as CI's lavapipe. Unset,
// it is 1: gpu:N is adapter N. It is read when the first GPU opens.
const LogicalGPUsEnv = "TESSERA_LOGICAL_GPUS"

// maxLogicalGPUs bounds TESSERA_LOGICAL_GPUS: more devices of one adapter
// than this share it too thinly to be of use.
const maxLogicalGPUs = 64

// logicalGPUs returns TESSERA_LOGICAL_GPUS, read once, or the error of a
// malformed value.
var logicalGPUs = sync.OnceValues(func() (int, error) {
	return parseLogicalGPUs(os.Getenv(LogicalGPUsEnv))
})

// parseLogicalGPUs parses TESSERA_LOGICAL_GPUS: empty is 1, else a whole
// number from 1 to maxLogicalGPUs.
func parseLogicalGPUs(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLogicalGPUs {
		return 0, fmt.Errorf("tensor: %s=%q: want a whole number of logical GPUs per adapter, 1 to %d", LogicalGPUsEnv, s, maxLogicalGPUs)
	}
	return n, nil
}

// adapterOf returns the adapter index of GPU dev: dev.Index over the
// logical GPUs per adapter.
func adapterOf(dev Device) (int, error) {
	k, err := logicalGPUs()
	if err != nil {
		return 0, err
	}
	return dev.Index / k, nil
}

// firstGPUOf returns the first logical GPU of adapter index a.
func firstGPUOf(a int) Device {
	k, err := logicalGPUs()
	if err != nil {
		k = 1 // opening it reports the error
	}
	return GPU(a * k)
}
