package tensor

import (
	"testing"

	"github.com/tessera-ml/tessera/cpu"
)

// TestOpTableComplete fails when an op is added to op.go without its
// row: a name, a family, and for elementwise ops a CPU kernel code and a
// WGSL expression (the GPU kernels are generated from it).
func TestOpTableComplete(t *testing.T) {
	seenUnary := map[cpu.UnaryOp]Op{}
	seenBinary := map[cpu.BinaryOp]Op{}
	for _, op := range Ops() {
		info := opTable[op]
		if info.name == "" || info.fam == famNone {
			t.Errorf("op %d has no name or family in opTable", op)
			continue
		}
		switch {
		case op.IsUnary():
			if info.fam != famUnary || info.cpuUnary == 0 || int(info.cpuUnary) >= cpu.NumUnaryOps || info.wgsl == "" {
				t.Errorf("%v: unary op needs a CPU kernel code and a WGSL expression", op)
			}
			if prev, dup := seenUnary[info.cpuUnary]; dup {
				t.Errorf("%v and %v share CPU kernel code %d", prev, op, info.cpuUnary)
			}
			seenUnary[info.cpuUnary] = op
		case op.IsBinary():
			if info.fam != famBinary || info.cpuBinary == 0 || int(info.cpuBinary) >= cpu.NumBinaryOps || info.wgsl == "" {
				t.Errorf("%v: binary op needs a CPU kernel code and a WGSL expression", op)
			}
			if prev, dup := seenBinary[info.cpuBinary]; dup {
				t.Errorf("%v and %v share CPU kernel code %d", prev, op, info.cpuBinary)
			}
			seenBinary[info.cpuBinary] = op
		}
		for _, i := range info.saves {
			if i < 0 || i > 2 {
				t.Errorf("%v saves input %d, which no op has", op, i)
			}
		}
	}
	// Every binary CPU kernel is reachable from some op (unary codes may
	// include helpers such as Identity).
	for c := cpu.BinaryOp(1); int(c) < cpu.NumBinaryOps; c++ {
		if _, ok := seenBinary[c]; !ok {
			t.Errorf("cpu.BinaryOp %d has no op in the op table", c)
		}
	}
}
