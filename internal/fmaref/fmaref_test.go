package fmaref

import (
	"errors"
	"testing"

	"github.com/tessera-ml/tessera/cpu"
)

// TestRun checks the flops Run counts for the CPU's width, that its
// times and share are in range, and that it refuses a width, a thread
// count or an iteration count it cannot run.
func TestRun(t *testing.T) {
	bits := cpu.FMABits()
	if bits == 0 {
		t.Skip("no 256- or 512-bit FMAs on this CPU")
	}
	r, err := Run(bits, 2, 1000)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	per := map[int]float64{512: 16 * 16 * 2, 256: 12 * 8 * 2}[bits]
	if err != nil || r.Flops != 2*1000*per || r.Seconds <= 0 || r.Share < 0 || r.Share > 1.01 {
		t.Fatalf("Run(%d, 2, 1000) = %+v, %v; want %v flops, seconds above 0, a share from 0 to 1", bits, r, err, 2*1000*per)
	}
	for _, c := range []struct {
		bits, threads int
		iters         int64
	}{{128, 1, 1}, {bits, 0, 1}, {bits, 1 << 20, 1}, {bits, 1, 0}} {
		if _, err := Run(c.bits, c.threads, c.iters); err == nil {
			t.Errorf("Run(%d, %d, %d): no error", c.bits, c.threads, c.iters)
		}
	}
}
