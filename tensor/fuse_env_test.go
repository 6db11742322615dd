package tensor

import (
	"math"
	"testing"
)

// TESSERA_FUSION: off words turn fusion off, on words fuse on the CPU
// too, and anything else (unset, a typo, a number) keeps the default,
// GPUs only, as FusionEnv's doc says.
func TestFusionSetting(t *testing.T) {
	for _, c := range []struct {
		v      string
		on     bool
		cpuMin int64
	}{
		{"", true, math.MaxInt64}, {"0", false, math.MaxInt64}, {" OFF ", false, math.MaxInt64}, {"no", false, math.MaxInt64},
		{"1", true, cpuFuseMinSize}, {"On", true, cpuFuseMinSize}, {"all", true, cpuFuseMinSize},
		{"2", true, math.MaxInt64}, {"maybe", true, math.MaxInt64}, {"-1", true, math.MaxInt64}, {"\x00", true, math.MaxInt64},
	} {
		if on, cpuMin := fusionSetting(c.v); on != c.on || cpuMin != c.cpuMin {
			t.Errorf("fusionSetting(%q) = %v, %d; want %v, %d", c.v, on, cpuMin, c.on, c.cpuMin)
		}
	}
}
