package tensor

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestOpTableComplete fails when an op is added to op.go without its
// row: a name and a family; for elementwise ops a WGSL expression and a
// CPU kernel for every dtype they compute in, each run here on small tensors (so a kernel of the wrong arity or element
// type fails); for reductions their combine on both devices.
func TestOpTableComplete(t *testing.T) {
	for _, op := range Ops() {
		info := op.info()
		if info.name == "" || info.fam == famNone {
			t.Errorf("op %d has no name or family in opTable", op)
			continue
		}
		if op.IsUnary() != (info.fam == famUnary) || op.IsBinary() != (info.fam == famBinary) {
			t.Errorf("%v: family %d disagrees with the op's place among the constants", op, info.fam)
		}
		for _, i := range info.saves {
			if i < 0 || i > 2 {
				t.Errorf("%v saves input %d, which no op has", op, i)
			}
		}
		arity := map[family]int{famUnary: 1, famBinary: 2, famTernary: 3}[info.fam]
		switch {
		case arity > 0:
			if info.wgsl == "" || info.reduce != nil || info.cpu == (cpuKernels{}) {
				t.Errorf("%v: an elementwise op needs a WGSL expression and CPU kernels, and no reduction", op)
			}
			for dt := range numDTypes {
				if info.cpu[dt] != nil {
					if err := Catch(func() { runRowKernel(op, dt, arity) }); err != nil {
						t.Errorf("%v: the CPU kernel for %v fails on %v operands: %v", op, dt, dt, err)
					}
				}
			}
		case info.fam == famReduce || info.fam == famArgReduce:
			r := info.reduce
			if r == nil || r.wgsl == "" || r.cpu[Float32] == nil || info.cpu != (cpuKernels{}) {
				t.Errorf("%v: a reduction needs a WGSL combine and CPU kernels (Float32 at least), and no elementwise kernels", op)
				continue
			}
			for dt := range numDTypes {
				if r.cpu[dt] == nil {
					continue
				}
				x := Ones([]int{2, 3}, Of(dt))
				if info.fam == famReduce {
					dst := newTensor(dt, []int{2, 1}, CPU)
					r.cpu[dt].reduce(dst, x)
					if got := fmt.Sprint(dst.Float64s()); got != map[bool]string{true: "[3 3]", false: "[1 1]"}[r.emptyOK] {
						t.Errorf("%v of %v ones over 3 = %s", op, dt, got)
					}
					continue
				}
				idx, vals := newTensor(Int32, []int{2, 1}, CPU), newTensor(dt, []int{2, 1}, CPU)
				r.cpu[dt].argReduce(vals, idx, x, 1)
				if got := fmt.Sprint(idx.Float64s(), vals.Float64s()); got != "[0 0] [1 1]" {
					t.Errorf("%v of %v ones along 1: indices and values %s, want the first ones", op, dt, got)
				}
			}
		case info.cpu != (cpuKernels{}) && info.wgsl == "" || info.reduce != nil || info.promote != promoteArith:
			// Where, elementwise with an entry point of its own, has both
			// (its kernels fuse like the families' above).
			t.Errorf("%v: only elementwise ops and reductions have kernels and promotion rules in their row", op)
		}
	}
}

// runRowKernel runs op's CPU kernel for dt on arity inputs of ones.
func runRowKernel(op Op, dt DType, arity int) {
	info := op.info()
	var in [3]*Tensor
	for i := range arity {
		in[i] = Ones([]int{3, 2}, Of(dt)).Transpose(0, 1)
	}
	dst := newTensor(info.outType(dt), []int{2, 3}, CPU)
	info.cpu[dt].run([2]float64{1, 2}, dst, in)
	dst.Float64s()
}

// TestComputeType pins the dtype policy the rows encode (PyTorch's,
// with int32 for int64): which dtype each kind of op computes in and
// returns.
func TestComputeType(t *testing.T) {
	for _, c := range []struct {
		op         Op
		in         DType
		intScalars bool
		compute    DType
		out        DType
	}{
		{OpNeg, Int32, true, Int32, Int32},
		{OpNeg, Bool, true, Int32, Int32},
		{OpAddScalar, Int32, false, Float32, Float32}, // int32 + 0.5
		{OpExp, Int32, true, Float32, Float32},
		{OpExp, Float64, true, Float64, Float64},
		{OpDiv, Int32, true, Float32, Float32}, // true division
		{OpAdd, Bool, true, Int32, Int32},
		{OpPow, Int32, true, Int32, Int32},
		{OpLt, Bool, true, Int32, Bool},
		{OpEq, Float64, true, Float64, Bool},
		{OpLogicalAnd, Float32, true, Bool, Bool},
		{OpAddcmul, Int32, true, Float32, Float32},
		{OpSum, Bool, true, Int32, Int32},
		{OpArgMax, Float64, true, Float64, Float64},
	} {
		info := c.op.info()
		ct := info.computeType(c.in, c.intScalars)
		if out := info.outType(ct); ct != c.compute || out != c.out {
			t.Errorf("%v on %v (int scalars %v): computes in %v and returns %v, want %v and %v", c.op, c.in, c.intScalars, ct, out, c.compute, c.out)
		}
	}
}

// TestInPlaceResultType: an in-place op whose result the target's dtype
// cannot hold is ErrDType on every device, as PyTorch's "result type
// Float can't be cast to the desired output type Int": integer division
// is true division, and bools do no arithmetic. (Before the rows held the
// dtype policy, the CPU divided integers, and int32 addcmul_ silently
// wrote nothing.)
func TestInPlaceResultType(t *testing.T) {
	devs := []Device{CPU}
	if g, err := TestGPU(); err == nil {
		devs = append(devs, g)
	}
	for _, dev := range devs {
		ints := func() *Tensor { return New([]int32{6, 7}).To(dev) }
		bools := func() *Tensor { return New([]bool{true, false}).To(dev) }
		for name, f := range map[string]func(){
			"int32 div_":     func() { ints().DivInPlace(ints()) },
			"int32 addcmul_": func() { ints().AddcmulInPlace(ints(), ints(), 1) },
			"int32 addcdiv_": func() { ints().AddcdivInPlace(ints(), ints(), 1) },
			"bool add_":      func() { bools().AddInPlace(bools(), 1) },
			"bool mul_(2)":   func() { bools().MulScalarInPlace(2) },
		} {
			err := Catch(f)
			if !errors.Is(err, ErrDType) || !strings.Contains(err.Error(), "can't be cast") {
				t.Errorf("%v: %s: %v, want ErrDType", dev, name, err)
			}
		}
		if got := ints().AddInPlace(ints(), 1).MulInPlace(ints()).Float64s(); fmt.Sprint(got) != "[72 98]" {
			t.Errorf("%v: int32 (x+x)·x in place = %v", dev, got)
		}
	}
}
