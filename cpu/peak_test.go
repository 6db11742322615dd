package cpu

import "testing"

// TestFMAPeak checks the flops FMAPeak reports for its width.
func TestFMAPeak(t *testing.T) {
	per := map[int]float64{512: 12 * 16 * 2, 256: 12 * 8 * 2, 0: 12 * 2}[FMABits()]
	if got, want := FMAPeak(3, 1000), 3*1000*per; got != want {
		t.Fatalf("FMAPeak(3, 1000) = %v flops at %d bits, want %v", got, FMABits(), want)
	}
}
