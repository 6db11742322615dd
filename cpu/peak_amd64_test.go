package cpu

import (
	"testing"

	xcpu "golang.org/x/sys/cpu"
)

// TestFMALoops runs each assembly FMA loop the CPU can run, not only the
// widest that FMAPeak picks, and checks the flops fmaLoop counts for the
// one it picks: fmaLoopY is otherwise never run on an AVX-512 machine.
func TestFMALoops(t *testing.T) {
	if xcpu.X86.HasAVX2 && xcpu.X86.HasFMA {
		fmaLoopY(1000)
	}
	if cpuAVX512 {
		fmaLoopZ(1000)
	}
	per := map[int]float64{512: fmaFlopsZ, 256: fmaFlopsY, 0: goFMAFlops}[FMABits()]
	if got := fmaLoop(1000); got != 1000*per {
		t.Fatalf("fmaLoop(1000) = %v flops at %d bits, want %v", got, FMABits(), 1000*per)
	}
}
