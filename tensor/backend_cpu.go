package tensor

import (
	"fmt"

	"github.com/tessera-ml/tessera/cpu"
)

// cpuBackend runs ops with the kernels of package cpu on Go slices:
// []float32, []float64, []int32 or []bool, one per dtype.
type cpuBackend struct{}

func lay(t *Tensor) cpu.Layout {
	return cpu.Layout{Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

func (cpuBackend) alloc(dt DType, n int) (any, error) { return cpuPool.get(dt, n) }

func (cpuBackend) free(dt DType, buf any) { cpuPool.put(buf) }

func (cpuBackend) write(dst *Tensor, src any) {
	defer unpin(pin(dst))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	case []int32:
		copy(d, src.([]int32))
	case []bool:
		copy(d, src.([]bool))
	}
}

func (cpuBackend) read(x *Tensor) any {
	defer unpin(pin(x))
	switch b := x.ref.s.buf.(type) {
	case []float32:
		return readAs(b, x)
	case []float64:
		return readAs(b, x)
	case []int32:
		return readAs(b, x)
	case []bool:
		return readAs(b, x)
	}
	panic("tensor: unknown CPU buffer")
}

func readAs[T cpu.Elem](b []T, x *Tensor) []T {
	out := make([]T, x.Numel())
	cpu.Copy(out, cpu.Contiguous(x.shape...), b, lay(x))
	return out
}

func (cpuBackend) fill(dst *Tensor, v float64) {
	defer unpin(pin(dst))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Fill(d, lay(dst), float32(v))
	case []float64:
		cpu.Fill(d, lay(dst), v)
	case []int32:
		cpu.Fill(d, lay(dst), int32(v))
	case []bool:
		cpu.Fill(d, lay(dst), v != 0)
	}
}

func (cpuBackend) copy(dst, x *Tensor) {
	defer unpin(pin(dst, x))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Copy(d, lay(dst), x.ref.s.buf.([]float32), lay(x))
	case []float64:
		cpu.Copy(d, lay(dst), x.ref.s.buf.([]float64), lay(x))
	case []int32:
		cpu.Copy(d, lay(dst), x.ref.s.buf.([]int32), lay(x))
	case []bool:
		cpu.Copy(d, lay(dst), x.ref.s.buf.([]bool), lay(x))
	}
}

func (cpuBackend) cast(dst, x *Tensor) {
	defer unpin(pin(dst, x))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		castInto(d, dst, x)
	case []float64:
		castInto(d, dst, x)
	case []int32:
		castInto(d, dst, x)
	case []bool:
		castInto(d, dst, x)
	}
}

func castInto[D cpu.Elem](d []D, dst, x *Tensor) {
	switch s := x.ref.s.buf.(type) {
	case []float32:
		cpu.Cast(d, lay(dst), s, lay(x))
	case []float64:
		cpu.Cast(d, lay(dst), s, lay(x))
	case []int32:
		cpu.Cast(d, lay(dst), s, lay(x))
	case []bool:
		cpu.Cast(d, lay(dst), s, lay(x))
	}
}

func (cpuBackend) unary(op Op, p [2]float64, dst, x *Tensor) {
	defer unpin(pin(dst, x))
	code, params := opTable[op].cpuUnary, cpu.UnaryParams{A: p[0], B: p[1]}
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Unary(code, params, d, lay(dst), x.ref.s.buf.([]float32), lay(x))
	case []float64:
		cpu.Unary(code, params, d, lay(dst), x.ref.s.buf.([]float64), lay(x))
	case []int32:
		cpu.Unary(code, params, d, lay(dst), x.ref.s.buf.([]int32), lay(x))
	default:
		panic(fmt.Sprintf("tensor: %v on %v reached the CPU backend", op, dst.dtype))
	}
}

func (cpuBackend) binary(op Op, dst, x, y *Tensor) {
	defer unpin(pin(dst, x, y))
	code := opTable[op].cpuBinary
	if code.IsLogical() {
		cpu.Logical(code, dst.ref.s.buf.([]bool), lay(dst), x.ref.s.buf.([]bool), lay(x), y.ref.s.buf.([]bool), lay(y))
		return
	}
	if code.IsComparison() {
		d := dst.ref.s.buf.([]bool)
		switch a := x.ref.s.buf.(type) {
		case []float32:
			cpu.Compare(code, d, lay(dst), a, lay(x), y.ref.s.buf.([]float32), lay(y))
		case []float64:
			cpu.Compare(code, d, lay(dst), a, lay(x), y.ref.s.buf.([]float64), lay(y))
		case []int32:
			cpu.Compare(code, d, lay(dst), a, lay(x), y.ref.s.buf.([]int32), lay(y))
		case []bool:
			// Bools compare as 0 and 1; Eq and Ne are the common cases (masks).
			xi, yi := boolsAsInt32(x), boolsAsInt32(y)
			cpu.Compare(code, d, lay(dst), xi, lay(x), yi, lay(y))
		}
		return
	}
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Binary(code, d, lay(dst), x.ref.s.buf.([]float32), lay(x), y.ref.s.buf.([]float32), lay(y))
	case []float64:
		cpu.Binary(code, d, lay(dst), x.ref.s.buf.([]float64), lay(x), y.ref.s.buf.([]float64), lay(y))
	case []int32:
		cpu.Binary(code, d, lay(dst), x.ref.s.buf.([]int32), lay(x), y.ref.s.buf.([]int32), lay(y))
	default:
		panic(fmt.Sprintf("tensor: %v on %v reached the CPU backend", op, dst.dtype))
	}
}

// boolsAsInt32 converts a bool storage to int32, element for element.
func boolsAsInt32(x *Tensor) []int32 {
	b := x.ref.s.buf.([]bool)
	out := make([]int32, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

func (cpuBackend) ternary(op Op, s float64, dst, a, b, c *Tensor) {
	defer unpin(pin(dst, a, b, c))
	code := cpu.Addcmul
	if op == OpAddcdiv {
		code = cpu.Addcdiv
	}
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Ternary(code, s, d, lay(dst), a.ref.s.buf.([]float32), lay(a), b.ref.s.buf.([]float32), lay(b), c.ref.s.buf.([]float32), lay(c))
	case []float64:
		cpu.Ternary(code, s, d, lay(dst), a.ref.s.buf.([]float64), lay(a), b.ref.s.buf.([]float64), lay(b), c.ref.s.buf.([]float64), lay(c))
	}
}

func (cpuBackend) where(dst, cond, x, y *Tensor) {
	defer unpin(pin(dst, cond, x, y))
	cb := cond.ref.s.buf.([]bool)
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Where(d, lay(dst), cb, lay(cond), x.ref.s.buf.([]float32), lay(x), y.ref.s.buf.([]float32), lay(y))
	case []float64:
		cpu.Where(d, lay(dst), cb, lay(cond), x.ref.s.buf.([]float64), lay(x), y.ref.s.buf.([]float64), lay(y))
	case []int32:
		cpu.Where(d, lay(dst), cb, lay(cond), x.ref.s.buf.([]int32), lay(x), y.ref.s.buf.([]int32), lay(y))
	case []bool:
		cpu.Where(d, lay(dst), cb, lay(cond), x.ref.s.buf.([]bool), lay(x), y.ref.s.buf.([]bool), lay(y))
	}
}

var cpuReduceOps = map[Op]cpu.ReduceOp{OpSum: cpu.SumOp, OpAmax: cpu.MaxOp, OpAmin: cpu.MinOp, OpMaxDim: cpu.MaxOp, OpMinDim: cpu.MinOp, OpArgMax: cpu.MaxOp, OpArgMin: cpu.MinOp}

func (cpuBackend) reduce(op Op, dst, x *Tensor) {
	defer unpin(pin(dst, x))
	code := cpuReduceOps[op]
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Reduce(code, d, lay(dst), x.ref.s.buf.([]float32), lay(x))
	case []float64:
		cpu.Reduce(code, d, lay(dst), x.ref.s.buf.([]float64), lay(x))
	case []int32:
		cpu.Reduce(code, d, lay(dst), x.ref.s.buf.([]int32), lay(x))
	}
}

func (cpuBackend) argReduce(op Op, vals, idx, x *Tensor, dim int) {
	defer unpin(pin(vals, idx, x))
	code := cpuReduceOps[op]
	ib := idx.ref.s.buf.([]int32)
	var vl cpu.Layout
	if vals != nil {
		vl = lay(vals)
	}
	switch xb := x.ref.s.buf.(type) {
	case []float32:
		cpu.ArgReduce(code, valsBuf[float32](vals), vl, ib, lay(idx), xb, lay(x), dim)
	case []float64:
		cpu.ArgReduce(code, valsBuf[float64](vals), vl, ib, lay(idx), xb, lay(x), dim)
	case []int32:
		cpu.ArgReduce(code, valsBuf[int32](vals), vl, ib, lay(idx), xb, lay(x), dim)
	}
}

func valsBuf[T cpu.Number](vals *Tensor) []T {
	if vals == nil {
		return nil
	}
	return vals.ref.s.buf.([]T)
}

func (cpuBackend) cumsum(dst, x *Tensor, dim int) {
	defer unpin(pin(dst, x))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.CumSum(d, lay(dst), x.ref.s.buf.([]float32), lay(x), dim)
	case []float64:
		cpu.CumSum(d, lay(dst), x.ref.s.buf.([]float64), lay(x), dim)
	case []int32:
		cpu.CumSum(d, lay(dst), x.ref.s.buf.([]int32), lay(x), dim)
	}
}

func (cpuBackend) softmax(log bool, dst, x *Tensor, dim int) {
	defer unpin(pin(dst, x))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.Softmax(log, d, lay(dst), x.ref.s.buf.([]float32), lay(x), dim)
	case []float64:
		cpu.Softmax(log, d, lay(dst), x.ref.s.buf.([]float64), lay(x), dim)
	}
}

func (cpuBackend) matmul(dst, a, b *Tensor) {
	defer unpin(pin(dst, a, b))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		cpu.MatMul(d, lay(dst), a.ref.s.buf.([]float32), lay(a), b.ref.s.buf.([]float32), lay(b))
	case []float64:
		cpu.MatMul(d, lay(dst), a.ref.s.buf.([]float64), lay(a), b.ref.s.buf.([]float64), lay(b))
	}
}

func (cpuBackend) indexSelect(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	ib := index.ref.s.buf.([]int32)[index.offset : index.offset+index.Numel()]
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		return cpu.IndexSelect(d, lay(dst), x.ref.s.buf.([]float32), lay(x), dim, ib)
	case []float64:
		return cpu.IndexSelect(d, lay(dst), x.ref.s.buf.([]float64), lay(x), dim, ib)
	case []int32:
		return cpu.IndexSelect(d, lay(dst), x.ref.s.buf.([]int32), lay(x), dim, ib)
	case []bool:
		return cpu.IndexSelect(d, lay(dst), x.ref.s.buf.([]bool), lay(x), dim, ib)
	}
	return nil
}

func (cpuBackend) indexAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	ib := index.ref.s.buf.([]int32)[index.offset : index.offset+index.Numel()]
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		return cpu.IndexAdd(d, lay(dst), dim, ib, src.ref.s.buf.([]float32), lay(src))
	case []float64:
		return cpu.IndexAdd(d, lay(dst), dim, ib, src.ref.s.buf.([]float64), lay(src))
	case []int32:
		return cpu.IndexAdd(d, lay(dst), dim, ib, src.ref.s.buf.([]int32), lay(src))
	}
	return nil
}

func (cpuBackend) gather(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	ib := index.ref.s.buf.([]int32)
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		return cpu.Gather(d, lay(dst), x.ref.s.buf.([]float32), lay(x), dim, ib, lay(index))
	case []float64:
		return cpu.Gather(d, lay(dst), x.ref.s.buf.([]float64), lay(x), dim, ib, lay(index))
	case []int32:
		return cpu.Gather(d, lay(dst), x.ref.s.buf.([]int32), lay(x), dim, ib, lay(index))
	case []bool:
		return cpu.Gather(d, lay(dst), x.ref.s.buf.([]bool), lay(x), dim, ib, lay(index))
	}
	return nil
}

func (cpuBackend) scatterAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	ib := index.ref.s.buf.([]int32)
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		return cpu.ScatterAdd(d, lay(dst), dim, ib, lay(index), src.ref.s.buf.([]float32), lay(src))
	case []float64:
		return cpu.ScatterAdd(d, lay(dst), dim, ib, lay(index), src.ref.s.buf.([]float64), lay(src))
	case []int32:
		return cpu.ScatterAdd(d, lay(dst), dim, ib, lay(index), src.ref.s.buf.([]int32), lay(src))
	}
	return nil
}

func (cpuBackend) random(normal bool, dst *Tensor, seed, offset uint64, a, b float64) {
	defer unpin(pin(dst))
	switch d := dst.ref.s.buf.(type) {
	case []float32:
		randomInto(normal, d[dst.offset:dst.offset+dst.Numel()], seed, offset, a, b)
	case []float64:
		randomInto(normal, d[dst.offset:dst.offset+dst.Numel()], seed, offset, a, b)
	}
}

func randomInto[T cpu.Float](normal bool, d []T, seed, offset uint64, a, b float64) {
	if normal {
		cpu.Normal(d, seed, offset, a, b)
	} else {
		cpu.Uniform(d, seed, offset, a, b)
	}
}

func (cpuBackend) sync() error { return nil }
