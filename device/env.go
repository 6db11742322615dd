package device

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultBudget is the allocator budget when neither Options.Budget nor
// TESSERA_GPU_BUDGET says otherwise. WebGPU cannot report how much memory a
// device has, and wgpu-native aborts the process when the driver runs out,
// so the default is modest: 2 GiB fits every discrete GPU of the last
// decade and, on lavapipe, a small share of host memory. Raise it with
// TESSERA_GPU_BUDGET on larger devices.
const DefaultBudget = 2 << 30

// Defaults for the stream (see Options).
const (
	DefaultBatchCap    = 64
	DefaultMaxInFlight = 4
	DefaultTimeout     = 60 * time.Second
)

// Environment variables read by OptionsFromEnv.
const (
	AdapterEnv = "TESSERA_ADAPTER"
	AllocEnv   = "TESSERA_GPU_ALLOC"
)

// Options configure Open.
type Options struct {
	// Index selects "gpu:N" from Adapters(), whatever its type; -1 chooses
	// automatically. (The zero Options select gpu:0; OptionsFromEnv
	// starts from -1.)
	Index int
	// Adapter is a case-insensitive substring of the adapter's name or
	// driver ("lavapipe" also matches Mesa's llvmpipe Vulkan adapter); ""
	// matches any. Naming an adapter selects it even when it is a CPU
	// adapter.
	Adapter string
	// AllowCPU allows a CPU-type adapter (lavapipe, llvmpipe, SwiftShader,
	// WARP) when choosing automatically. Without it automatic selection
	// picks only real GPUs and returns ErrNoAdapter otherwise.
	AllowCPU bool
	// Budget is the number of bytes the allocator may reserve; 0 means
	// DefaultBudget.
	Budget int64
	// NoCache (debug) returns freed blocks to the driver as soon as the work
	// using them has retired.
	NoCache bool
	// BatchCap is the number of recorded commands per submission; 0 means
	// DefaultBatchCap.
	BatchCap int
	// MaxInFlight bounds the submissions in flight; 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// Timeout bounds waits for submitted work (readback, Sync); 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// OptionsFromEnv returns automatic-selection Options (Index -1) adjusted by
// the environment:
//
//	TESSERA_ADAPTER=name      adapter name substring (Options.Adapter)
//	TESSERA_GPU_BUDGET=6GiB   allocator budget (see ParseBytes)
//	TESSERA_GPU_ALLOC=nocache debug mode without caching ("cache" or "" = default)
//
// A malformed value is an error. TESSERA_DEVICE, which chooses between the
// CPU and the GPUs, belongs to package tensor (tensor.DefaultDevice).
func OptionsFromEnv() (Options, error) {
	o := Options{Index: -1}
	if v := strings.TrimSpace(os.Getenv(AdapterEnv)); v != "" {
		o.Adapter = v
	}
	if v := strings.TrimSpace(os.Getenv(BudgetEnv)); v != "" {
		n, err := ParseBytes(v)
		if err != nil {
			return o, fmt.Errorf("tessera: %s=%q: %w", BudgetEnv, v, err)
		}
		o.Budget = n
	}
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv(AllocEnv))); v {
	case "", "cache", "default":
	case "nocache", "no-cache", "none":
		o.NoCache = true
	default:
		return o, fmt.Errorf("tessera: %s=%q: want \"nocache\" or \"cache\"", AllocEnv, v)
	}
	return o, nil
}

// ParseBytes parses a byte count: a plain integer ("1073741824"), a float
// ("1e9", "1.5GiB") or a number with a unit. Binary units are KiB, MiB,
// GiB, TiB (also Ki, Mi, Gi, Ti); decimal units are K/KB, M/MB, G/GB, T/TB;
// B is bytes. Units are case-insensitive and may follow a space. The result
// must be a non-negative integer number of bytes that fits an int64.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty byte count")
	}
	// Split the number from the unit: the unit is the trailing run of
	// letters, except that an exponent such as "1e9" belongs to the number.
	i := len(t)
	for i > 0 {
		c := t[i-1]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			i--
			continue
		}
		break
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	if num == "" {
		return 0, fmt.Errorf("byte count %q has no number", s)
	}
	mult := 1.0
	switch unit {
	case "", "b":
	case "k", "kb":
		mult = 1e3
	case "m", "mb":
		mult = 1e6
	case "g", "gb":
		mult = 1e9
	case "t", "tb":
		mult = 1e12
	case "ki", "kib":
		mult = 1 << 10
	case "mi", "mib":
		mult = 1 << 20
	case "gi", "gib":
		mult = 1 << 30
	case "ti", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("byte count %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s, t[i:])
	}
	if unit == "" {
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			if n < 0 {
				return 0, fmt.Errorf("byte count %q is negative", s)
			}
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("byte count %q is not a number", s)
	}
	f *= mult
	if f < 0 {
		return 0, fmt.Errorf("byte count %q is negative", s)
	}
	if f >= math.MaxInt64 {
		return 0, fmt.Errorf("byte count %q overflows int64", s)
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("byte count %q is not a whole number of bytes", s)
	}
	return int64(f), nil
}

// resolved returns o with zero fields replaced by defaults.
func (o Options) resolved() Options {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.BatchCap <= 0 {
		o.BatchCap = DefaultBatchCap
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}
