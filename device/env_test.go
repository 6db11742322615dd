package device

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1073741824": 1 << 30, "6GiB": 6 << 30, "512MiB": 512 << 20, "1e9": 1e9,
		"1.5GiB": 3 << 29, "2 gib": 2 << 30, "10KB": 10000, "4k": 4000, "3Mi": 3 << 20,
		"1TiB": 1 << 40, "100B": 100, " 64MiB ": 64 << 20, "2.5e3KiB": 2500 << 10,
	}
	for s, want := range good {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "-1", "-2GiB", "1.5", "6 apples", "1e30", "NaN", "0.3B", "x12"} {
		if n, err := ParseBytes(s); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", s, n)
		}
	}
}

func TestOptionsFromEnv(t *testing.T) {
	for _, k := range []string{AdapterEnv, BudgetEnv, AllocEnv} {
		t.Setenv(k, "")
	}
	o, err := OptionsFromEnv()
	if err != nil || o.Index != -1 || o.Adapter != "" || o.Budget != 0 || o.NoCache || o.AllowCPU {
		t.Fatalf("empty environment: %+v, %v", o, err)
	}
	t.Setenv(AdapterEnv, "lavapipe")
	t.Setenv(BudgetEnv, "6GiB")
	t.Setenv(AllocEnv, "nocache")
	o, err = OptionsFromEnv()
	if err != nil || o.Adapter != "lavapipe" || o.Budget != 6<<30 || !o.NoCache || o.Index != -1 {
		t.Fatalf("set environment: %+v, %v", o, err)
	}
	for k, v := range map[string]string{BudgetEnv: "lots", AllocEnv: "sometimes"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%s: err = %v", k, v, err)
			}
		})
	}
	r := Options{}.resolved()
	if r.Budget != DefaultBudget || r.BatchCap != DefaultBatchCap || r.MaxInFlight != DefaultMaxInFlight || r.Timeout != 60*time.Second {
		t.Errorf("resolved defaults: %+v", r)
	}
}

func TestChooseAdapter(t *testing.T) {
	lava := AdapterInfo{Index: 0, Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Driver: "Mesa 22.3.6", Backend: "vulkan", Type: "cpu", IsCPU: true}
	igpu := AdapterInfo{Index: 1, Name: "Intel(R) UHD Graphics 620", Backend: "vulkan", Type: "integrated"}
	dgpu := AdapterInfo{Index: 2, Name: "NVIDIA GeForce RTX 3080", Backend: "vulkan", Type: "discrete"}
	all := []AdapterInfo{lava, igpu, dgpu}
	cases := []struct {
		list []AdapterInfo
		o    Options
		want int // -1: ErrNoAdapter
	}{
		{all, Options{Index: -1}, 2},
		{all, Options{Index: -1, AllowCPU: true}, 2},
		{[]AdapterInfo{lava, igpu}, Options{Index: -1}, 1},
		{[]AdapterInfo{lava}, Options{Index: -1}, -1},
		{[]AdapterInfo{lava}, Options{Index: -1, AllowCPU: true}, 0},
		{nil, Options{Index: -1, AllowCPU: true}, -1},
		{all, Options{Index: -1, Adapter: "LAVAPIPE"}, 0},
		{all, Options{Index: -1, Adapter: "llvmpipe"}, 0},
		{all, Options{Index: -1, Adapter: "intel"}, 1},
		{all, Options{Index: -1, Adapter: "amd"}, -1},
		{all, Options{Index: 0}, 0},
		{all, Options{Index: 3}, -1},
		{all, Options{Index: 1, Adapter: "nvidia"}, -1},
	}
	for i, c := range cases {
		got, err := chooseAdapter(c.list, c.o)
		if c.want < 0 {
			if !errors.Is(err, ErrNoAdapter) {
				t.Errorf("case %d: got %d, %v; want ErrNoAdapter", i, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("case %d: got %d, %v; want %d", i, got, err, c.want)
		}
	}
	if s := lava.String(); !strings.Contains(s, "gpu:0") || !strings.Contains(s, "CPU adapter") || !strings.Contains(s, "vulkan") {
		t.Errorf("String() = %q", s)
	}
	if s := dgpu.String(); !strings.Contains(s, "GPU") || strings.Contains(s, "CPU") {
		t.Errorf("String() = %q", s)
	}
}

func TestDedupeAdapters(t *testing.T) {
	list := []AdapterInfo{
		{Name: "NVIDIA GeForce RTX 3080", Backend: "vulkan"},
		{Name: "NVIDIA GeForce RTX 3080", Backend: "vulkan"}, // a second, identical card
		{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Backend: "vulkan"},
		{Name: "NVIDIA GeForce RTX 3080", Backend: "dx12"},
		{Name: "Microsoft Basic Render Driver", Backend: "dx12"},
		{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Backend: "gl"},
	}
	got := dedupeAdapters(list)
	want := []bool{true, true, true, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("adapter %d (%s on %s): keep = %v, want %v", i, list[i].Name, list[i].Backend, got[i], want[i])
		}
	}
}
