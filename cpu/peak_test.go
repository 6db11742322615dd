package cpu

import "testing"

// TestFMAPeak checks the flops FMAPeak reports for its width.
func TestFMAPeak(t *testing.T) {
	per := map[int]float64{512: fmaFlopsZ, 256: fmaFlopsY, 0: goFMAFlops}[FMABits()]
	if got, want := FMAPeak(3, 1000), 3*1000*per; got != want {
		t.Fatalf("FMAPeak(3, 1000) = %v flops at %d bits, want %v", got, FMABits(), want)
	}
}

// TestFMAPeakNothing checks that FMAPeak with no goroutines or no
// iterations returns at once with 0 flops, rather than panicking or
// running the assembly loops, which run at least one iteration, 2⁶⁴ times.
func TestFMAPeakNothing(t *testing.T) {
	for _, c := range [][2]int{{0, 1000}, {-1, 1000}, {2, 0}, {2, -5}} {
		if got := FMAPeak(c[0], c[1]); got != 0 {
			t.Errorf("FMAPeak(%d, %d) = %v flops, want 0", c[0], c[1], got)
		}
	}
}
