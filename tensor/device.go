package tensor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A DeviceKind is the kind of processor a tensor lives on.
type DeviceKind uint8

// The device kinds. Each has one entry in the dispatch table (dispatch.go).
const (
	KindCPU DeviceKind = iota
	KindGPU
	numDeviceKinds
)

// A Device names where a tensor's storage lives: the CPU, or GPU number
// Index in the list that `tessera devices` prints.
type Device struct {
	Kind  DeviceKind
	Index int
}

// CPU is the host processor.
var CPU = Device{Kind: KindCPU}

// GPU returns WebGPU adapter number i ("gpu:i").
func GPU(i int) Device { return Device{Kind: KindGPU, Index: i} }

func (d Device) String() string {
	if d.Kind == KindCPU {
		return "cpu"
	}
	return "gpu:" + strconv.Itoa(d.Index)
}

// ParseDevice parses "cpu", "gpu" (gpu:0) or "gpu:N".
func ParseDevice(s string) (Device, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); {
	case s == "cpu":
		return CPU, nil
	case s == "gpu":
		return GPU(0), nil
	case strings.HasPrefix(s, "gpu:"):
		n, err := strconv.Atoi(s[4:])
		if err != nil || n < 0 {
			return Device{}, fmt.Errorf("tensor: bad device %q: want cpu, gpu or gpu:N", s)
		}
		return GPU(n), nil
	}
	return Device{}, fmt.Errorf("tensor: bad device %q: want cpu, gpu or gpu:N", s)
}

// DefaultDevice returns the device programs should train on, and a
// sentence saying which and why, for the user to see. It reads
// TESSERA_DEVICE (auto, cpu, gpu, gpu:N; default auto). Auto picks a
// real GPU when the GPU backend finds one, else the CPU: a CPU-type
// adapter such as lavapipe is slower than the CPU backend, so it is used
// only when asked for by name.
func DefaultDevice() (Device, string, error) {
	want := strings.ToLower(strings.TrimSpace(os.Getenv("TESSERA_DEVICE")))
	if want == "" || want == "auto" {
		if d, info, ok := autoGPU(); ok {
			return d, "training on " + d.String() + " (" + info + ")", nil
		}
		return CPU, "training on cpu: " + gpuUnavailableReason(), nil
	}
	d, err := ParseDevice(want)
	if err != nil {
		return Device{}, "", err
	}
	if d.Kind == KindCPU {
		return d, "training on cpu (TESSERA_DEVICE=cpu)", nil
	}
	if err := Available(d); err != nil {
		return Device{}, "", err
	}
	return d, "training on " + d.String() + " (" + deviceDescription(d) + ")", nil
}

// Available returns nil when tensors can be placed on d, else an error
// saying why not (no adapter, GPU support not compiled in, ...).
func Available(d Device) error {
	if d.Kind == KindCPU {
		return nil
	}
	if d.Kind != KindGPU {
		return fmt.Errorf("tensor: unknown device kind %d", d.Kind)
	}
	_, err := gpuBackendFor(d)
	return err
}
