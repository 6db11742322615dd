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

// GPU returns WebGPU adapter number i ("gpu:i"). A negative i names no
// device: creating a tensor on it panics with ErrDevice, and Available
// returns an error.
func GPU(i int) Device { return Device{Kind: KindGPU, Index: i} }

func (d Device) String() string {
	switch {
	case d.Kind == KindCPU && d.Index == 0:
		return "cpu"
	case d.Kind == KindGPU:
		return "gpu:" + strconv.Itoa(d.Index)
	}
	return fmt.Sprintf("device(kind %d, index %d)", d.Kind, d.Index)
}

// ParseDevice parses "cpu", "gpu" (gpu:0) or "gpu:N" with N a decimal
// number (no sign, no leading zero), case-insensitively. A malformed
// string is an *Error wrapping ErrDevice.
func ParseDevice(s string) (Device, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "cpu":
		return CPU, nil
	case t == "gpu":
		return GPU(0), nil
	case strings.HasPrefix(t, "gpu:"):
		if n, ok := parseIndex(t[4:]); ok {
			return GPU(n), nil
		}
	}
	return Device{}, &Error{Op: "ParseDevice", Err: ErrDevice, Detail: fmt.Sprintf("bad device %q: want cpu, gpu or gpu:N", s)}
}

// parseIndex parses a device number: digits only, without a leading
// zero, that fit an int.
func parseIndex(s string) (int, bool) {
	if s == "" || (s[0] == '0' && len(s) > 1) || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// checkDevice returns an error unless d is the CPU or a GPU with a
// non-negative index: a Device built by hand (GPU(-1), an unknown Kind)
// names no device.
func checkDevice(d Device) error {
	switch {
	case d.Kind == KindCPU && d.Index == 0, d.Kind == KindGPU && d.Index >= 0:
		return nil
	case d.Kind == KindGPU:
		return fmt.Errorf("tensor: bad device gpu:%d: GPU numbers start at 0", d.Index)
	case d.Kind == KindCPU:
		return fmt.Errorf("tensor: bad device: the CPU has no index (got %d)", d.Index)
	}
	return fmt.Errorf("tensor: unknown device kind %d", d.Kind)
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
	if err := checkDevice(d); err != nil || d.Kind == KindCPU {
		return err
	}
	_, err := gpuBackendFor(d)
	return err
}

// noF64 is why a GPU holds no Float64 tensor.
const noF64 = "float64 tensors live on the CPU only (WGSL has no f64)"

// Holds reports whether d can hold tensors of dt: the CPU every dtype, a
// GPU all but Float64 (WGSL has no f64). Every float64-on-GPU check asks
// it: creation, To, Cast and the GPU backend's allocator in this
// package, the data loader and checkpoint loading outside it.
func (d Device) Holds(dt DType) bool { return d.Kind != KindGPU || dt != Float64 }

// checkHoldsDType fails op with ErrDType, naming ts, when dev cannot hold
// dt; hint is appended to the reason.
func checkHoldsDType(op string, dev Device, dt DType, hint string, ts ...*Tensor) {
	if !dev.Holds(dt) {
		fail(op, ErrDType, noF64+hint, ts...)
	}
}
