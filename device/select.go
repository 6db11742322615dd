package device

import (
	"fmt"
	"strings"
)

// dedupeAdapters marks which adapters of a list (in backend preference
// order) to keep: an adapter whose name an earlier adapter of another
// backend already listed is the same device seen through a less preferred
// backend (DX12 after Vulkan on Windows, GL after Vulkan on Linux). Equal
// names within one backend are distinct devices (two identical GPUs).
func dedupeAdapters(infos []AdapterInfo) []bool {
	keep := make([]bool, len(infos))
	first := map[string]string{} // lower-case name -> backend that listed it first
	for i, a := range infos {
		key := strings.ToLower(strings.TrimSpace(a.Name))
		if b, seen := first[key]; seen && b != a.Backend {
			continue
		}
		first[key] = a.Backend
		keep[i] = true
	}
	return keep
}

// matchesName reports whether the adapter's name or driver contains sub
// (case-insensitive); "lavapipe" also matches Mesa's llvmpipe on Vulkan.
func matchesName(a AdapterInfo, sub string) bool {
	hay := strings.ToLower(a.Name + " " + a.Driver)
	if a.Backend == "vulkan" && strings.Contains(hay, "llvmpipe") {
		hay += " lavapipe"
	}
	return strings.Contains(hay, strings.ToLower(sub))
}

// typeRank orders adapters for automatic selection (lower is better).
func typeRank(a AdapterInfo) int {
	switch {
	case a.IsCPU:
		return 3
	case a.Type == "discrete":
		return 0
	case a.Type == "integrated":
		return 1
	default:
		return 2
	}
}

// chooseAdapter applies Options.Index, Options.Adapter and Options.AllowCPU
// to the adapter list.
func chooseAdapter(infos []AdapterInfo, o Options) (int, error) {
	list := func() string {
		if len(infos) == 0 {
			return "no adapters found (is a Vulkan driver installed? lavapipe: mesa-vulkan-drivers)"
		}
		var s []string
		for _, a := range infos {
			s = append(s, a.String())
		}
		return "adapters: " + strings.Join(s, "; ")
	}
	if o.Index >= 0 {
		if o.Index >= len(infos) {
			return -1, fmt.Errorf("%w: gpu:%d does not exist (%s)", ErrNoAdapter, o.Index, list())
		}
		if o.Adapter != "" && !matchesName(infos[o.Index], o.Adapter) {
			return -1, fmt.Errorf("%w: gpu:%d does not match adapter name %q (%s)", ErrNoAdapter, o.Index, o.Adapter, list())
		}
		return o.Index, nil
	}
	if o.Adapter != "" {
		best := -1
		for i, a := range infos {
			if matchesName(a, o.Adapter) && (best < 0 || typeRank(a) < typeRank(infos[best])) {
				best = i
			}
		}
		if best < 0 {
			return -1, fmt.Errorf("%w: no adapter name contains %q (%s)", ErrNoAdapter, o.Adapter, list())
		}
		return best, nil
	}
	best := -1
	for i, a := range infos {
		if a.IsCPU && !o.AllowCPU {
			continue
		}
		if best < 0 || typeRank(a) < typeRank(infos[best]) {
			best = i
		}
	}
	if len(infos) == 0 {
		return -1, fmt.Errorf("%w: %s", ErrNoAdapter, list())
	}
	if best < 0 {
		return -1, fmt.Errorf("%w: no hardware GPU found and CPU adapters were not allowed (use TESSERA_DEVICE=gpu or TESSERA_ADAPTER to run on a CPU adapter; %s)", ErrNoAdapter, list())
	}
	return best, nil
}
