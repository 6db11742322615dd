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

// unary, binary and ternary run the op's row kernel for the inputs'
// dtype (the dtype it computes in).
func (cpuBackend) unary(op Op, p [2]float64, dst, x *Tensor) {
	defer unpin(pin(dst, x))
	cpuFor(op.String(), x.dtype, &op.info().cpu).run(p, dst, [3]*Tensor{x})
}

func (cpuBackend) binary(op Op, dst, x, y *Tensor) {
	defer unpin(pin(dst, x, y))
	cpuFor(op.String(), x.dtype, &op.info().cpu).run([2]float64{}, dst, [3]*Tensor{x, y})
}

func (cpuBackend) ternary(op Op, s float64, dst, a, b, c *Tensor) {
	defer unpin(pin(dst, a, b, c))
	cpuFor(op.String(), a.dtype, &op.info().cpu).run([2]float64{s}, dst, [3]*Tensor{a, b, c})
}

// cpuBuf returns t's CPU buffer as a []T. It panics when T is not the
// element type of t's dtype, a bug in tensor.
func cpuBuf[T cpu.Elem](t *Tensor) []T {
	b, ok := t.ref.s.buf.([]T)
	if !ok {
		panic(fmt.Sprintf("tensor: the CPU buffer of a %v tensor is %T, not %T", t.dtype, t.ref.s.buf, b))
	}
	return b
}

// cpuFor returns the kernel for dtype dt in table. It panics, naming
// what runs, when dt is no dtype or has no kernel there: the op layer
// casts operands to a dtype the op computes in before calling a backend,
// so reaching it is a bug in tensor, never uninitialised output.
func cpuFor[K any](what string, dt DType, table *[numDTypes]K) K {
	if dt.valid() {
		if k := table[dt]; any(k) != nil {
			return k
		}
	}
	panic(fmt.Sprintf("tensor: %s has no CPU kernel for dtype %v", what, dt))
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

func (cpuBackend) reduce(op Op, dst, x *Tensor) {
	defer unpin(pin(dst, x))
	cpuFor(op.String(), x.dtype, &op.info().reduce.cpu).reduce(dst, x)
}

func (cpuBackend) argReduce(op Op, vals, idx, x *Tensor, dim int) {
	defer unpin(pin(vals, idx, x))
	cpuFor(op.String(), x.dtype, &op.info().reduce.cpu).argReduce(vals, idx, x, dim)
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
