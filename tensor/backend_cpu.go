package tensor

import (
	"fmt"

	"github.com/tessera-ml/tessera/cpu"
)

// cpuBackend runs ops with the kernels of package cpu on Go slices:
// []float32, []float64, []int32 or []bool, one per dtype. Every method
// finds its typed kernel with cpuFor, the one dtype dispatch: in an op's
// row (opmath.go) for elementwise ops and reductions, in the tables
// below for the rest.
type cpuBackend struct{}

func lay(t *Tensor) cpu.Layout {
	return cpu.Layout{Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

// cpuBuf returns t's CPU buffer as a []T, realizing t first if it is
// pending. It panics when T is not the element type of t's dtype, a bug
// in tensor.
func cpuBuf[T cpu.Elem](t *Tensor) []T {
	b, ok := t.ref.s.memory().([]T)
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

// The CPU kernels that belong to no op's row, by dtype and by what the
// element type supports: every dtype is stored, copied, cast, selected
// and gathered (elemCPU), numbers are also added (numberCPU), and floats
// also do float math (floatCPU).
type (
	elemCPU interface {
		write(dst *Tensor, src any)
		read(x *Tensor) any
		fill(dst *Tensor, v float64)
		copy(dst, x *Tensor)
		cast(dst, x *Tensor) // dst has this dtype, x any
		indexSelect(dst, x, index *Tensor, dim int) error
		gather(dst, x, index *Tensor, dim int) error
	}
	numberCPU interface {
		cumsum(dst, x *Tensor, dim int)
		indexAdd(dst, index, src *Tensor, dim int) error
		indexAmax(dst, index, src *Tensor, dim int) error
		scatterAdd(dst, index, src *Tensor, dim int) error
	}
	floatCPU interface {
		softmax(log bool, dst, x *Tensor, dim int)
		matmul(dst, a, b *Tensor)
		unfold(dst, x *Tensor, w window, pad float64)
		fold(dst, cols *Tensor, w window)
		attention(out, lse, q, k, v, seg *Tensor, a attnShape)
		attentionBackward(res, q, k, v, out, lse, g, seg *Tensor, a attnShape)
		random(normal bool, dst *Tensor, seed, offset uint64, a, b float64)
	}
)

var (
	elemKernels = [numDTypes]elemCPU{
		Float32: elemOf[float32]{}, Float64: elemOf[float64]{}, Int32: elemOf[int32]{}, Bool: elemOf[bool]{},
	}
	numberKernels = [numDTypes]numberCPU{Float32: numberOf[float32]{}, Float64: numberOf[float64]{}, Int32: numberOf[int32]{}}
	floatKernels  = [numDTypes]floatCPU{Float32: floatOf[float32]{}, Float64: floatOf[float64]{}}
)

func (cpuBackend) alloc(dt DType, n int) (any, error) { return cpuPool.get(dt, n) }

func (cpuBackend) free(dt DType, buf any) { cpuPool.put(buf) }

func (cpuBackend) write(dst *Tensor, src any) {
	defer unpin(pin(dst))
	cpuFor("write", dst.dtype, &elemKernels).write(dst, src)
}

func (cpuBackend) read(x *Tensor) any {
	defer unpin(pin(x))
	return cpuFor("read", x.dtype, &elemKernels).read(x)
}

func (cpuBackend) fill(dst *Tensor, v float64) {
	defer unpin(pin(dst))
	cpuFor("fill", dst.dtype, &elemKernels).fill(dst, v)
}

func (cpuBackend) copy(dst, x *Tensor) {
	defer unpin(pin(dst, x))
	cpuFor("copy", dst.dtype, &elemKernels).copy(dst, x)
}

func (cpuBackend) cast(dst, x *Tensor) {
	defer unpin(pin(dst, x))
	cpuFor("Cast", dst.dtype, &elemKernels).cast(dst, x)
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

func (cpuBackend) where(dst, cond, x, y *Tensor) {
	defer unpin(pin(dst, cond, x, y))
	cpuFor("Where", dst.dtype, &OpWhere.info().cpu).run([2]float64{}, dst, [3]*Tensor{cond, x, y})
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
	cpuFor("CumSum", dst.dtype, &numberKernels).cumsum(dst, x, dim)
}

func (cpuBackend) softmax(log bool, dst, x *Tensor, dim int) {
	defer unpin(pin(dst, x))
	cpuFor("Softmax", dst.dtype, &floatKernels).softmax(log, dst, x, dim)
}

func (cpuBackend) matmul(dst, a, b *Tensor) {
	defer unpin(pin(dst, a, b))
	cpuFor("MatMul", dst.dtype, &floatKernels).matmul(dst, a, b)
}

func (cpuBackend) unfold(dst, x *Tensor, w window, pad float64) {
	defer unpin(pin(dst, x))
	cpuFor("Unfold", dst.dtype, &floatKernels).unfold(dst, x, w, pad)
}

func (cpuBackend) fold(dst, cols *Tensor, w window) {
	defer unpin(pin(dst, cols))
	cpuFor("Fold", dst.dtype, &floatKernels).fold(dst, cols, w)
}

func (cpuBackend) attention(out, lse, q, k, v, seg *Tensor, a attnShape) {
	defer unpin(pin(out, lse, q, k, v, seg))
	cpuFor("ScaledDotProductAttention", q.dtype, &floatKernels).attention(out, lse, q, k, v, seg, a)
}

func (cpuBackend) attentionBackward(res, q, k, v, out, lse, g, seg *Tensor, a attnShape) {
	defer unpin(pin(res, q, k, v, out, lse, g, seg))
	cpuFor("ScaledDotProductAttentionBackward", q.dtype, &floatKernels).attentionBackward(res, q, k, v, out, lse, g, seg, a)
}

func (cpuBackend) indexSelect(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	return cpuFor("IndexSelect", dst.dtype, &elemKernels).indexSelect(dst, x, index, dim)
}

func (cpuBackend) indexAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	return cpuFor("IndexAdd", dst.dtype, &numberKernels).indexAdd(dst, index, src, dim)
}

func (cpuBackend) indexAmax(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	return cpuFor("IndexAmax", dst.dtype, &numberKernels).indexAmax(dst, index, src, dim)
}

func (cpuBackend) gather(dst, x, index *Tensor, dim int) error {
	defer unpin(pin(dst, x, index))
	return cpuFor("Gather", dst.dtype, &elemKernels).gather(dst, x, index, dim)
}

func (cpuBackend) scatterAdd(dst, index, src *Tensor, dim int) error {
	defer unpin(pin(dst, index, src))
	return cpuFor("ScatterAdd", dst.dtype, &numberKernels).scatterAdd(dst, index, src, dim)
}

func (cpuBackend) random(normal bool, dst *Tensor, seed, offset uint64, a, b float64) {
	defer unpin(pin(dst))
	cpuFor("random", dst.dtype, &floatKernels).random(normal, dst, seed, offset, a, b)
}

func (cpuBackend) sync() error { return nil }

// elemOf, numberOf and floatOf are the kernels of the tables above for
// element type T.
type (
	elemOf[T cpu.Elem]     struct{}
	numberOf[T cpu.Number] struct{}
	floatOf[T cpu.Float]   struct{}
)

func (elemOf[T]) write(dst *Tensor, src any) { copy(cpuBuf[T](dst), src.([]T)) }

func (elemOf[T]) read(x *Tensor) any {
	out := make([]T, x.Numel())
	cpu.Copy(out, cpu.Contiguous(x.shape...), cpuBuf[T](x), lay(x))
	return out
}

func (elemOf[T]) fill(dst *Tensor, v float64) { cpu.Fill(cpuBuf[T](dst), lay(dst), fromFloat64[T](v)) }

// fromFloat64 converts v to T with Go's rules (bool: v != 0).
func fromFloat64[T cpu.Elem](v float64) T {
	var out any
	switch any(*new(T)).(type) {
	case float32:
		out = float32(v)
	case float64:
		out = v
	case int32:
		out = int32(v)
	case bool:
		out = v != 0
	}
	return out.(T)
}

func (elemOf[T]) copy(dst, x *Tensor) { cpu.Copy(cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x)) }

func (elemOf[T]) cast(dst, x *Tensor) {
	from := [numDTypes]caster{castOf[T, float32]{}, castOf[T, float64]{}, castOf[T, int32]{}, castOf[T, bool]{}}
	cpuFor("Cast", x.dtype, &from).cast(dst, x)
}

// caster casts a tensor of one dtype into another's (castOf[D, S]: S to D).
type caster interface{ cast(dst, x *Tensor) }

type castOf[D, S cpu.Elem] struct{}

func (castOf[D, S]) cast(dst, x *Tensor) { cpu.Cast(cpuBuf[D](dst), lay(dst), cpuBuf[S](x), lay(x)) }

func (elemOf[T]) indexSelect(dst, x, index *Tensor, dim int) error {
	return cpu.IndexSelect(cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x), dim, flatIndex(index))
}

func (elemOf[T]) gather(dst, x, index *Tensor, dim int) error {
	return cpu.Gather(cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x), dim, cpuBuf[int32](index), lay(index))
}

// flatIndex returns the elements of the contiguous 1-D index tensor.
func flatIndex(index *Tensor) []int32 {
	return cpuBuf[int32](index)[index.offset : index.offset+index.Numel()]
}

func (numberOf[T]) cumsum(dst, x *Tensor, dim int) {
	cpu.CumSum(cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x), dim)
}

func (numberOf[T]) indexAdd(dst, index, src *Tensor, dim int) error {
	return cpu.IndexAdd(cpuBuf[T](dst), lay(dst), dim, flatIndex(index), cpuBuf[T](src), lay(src))
}

func (numberOf[T]) indexAmax(dst, index, src *Tensor, dim int) error {
	return cpu.IndexAmax(cpuBuf[T](dst), lay(dst), dim, flatIndex(index), cpuBuf[T](src), lay(src))
}

func (numberOf[T]) scatterAdd(dst, index, src *Tensor, dim int) error {
	return cpu.ScatterAdd(cpuBuf[T](dst), lay(dst), dim, cpuBuf[int32](index), lay(index), cpuBuf[T](src), lay(src))
}

func (floatOf[T]) softmax(log bool, dst, x *Tensor, dim int) {
	cpu.Softmax(log, cpuBuf[T](dst), lay(dst), cpuBuf[T](x), lay(x), dim)
}

func (floatOf[T]) matmul(dst, a, b *Tensor) {
	cpu.MatMul(cpuBuf[T](dst), lay(dst), cpuBuf[T](a), lay(a), cpuBuf[T](b), lay(b))
}

// cpuWindow is w as package cpu's Window.
func cpuWindow(w window) cpu.Window {
	return cpu.Window{C: w.C, H: w.H, W: w.W, OH: w.OH, OW: w.OW, KH: w.Kernel[0], KW: w.Kernel[1],
		SH: w.Stride[0], SW: w.Stride[1], DH: w.Dilation[0], DW: w.Dilation[1], PH: w.Padding[0], PW: w.Padding[1]}
}

func (floatOf[T]) unfold(dst, x *Tensor, w window, pad float64) {
	cpu.Im2Col(cpuBuf[T](dst)[dst.offset:], cpuBuf[T](x), lay(x), cpuWindow(w), T(pad))
}

func (floatOf[T]) fold(dst, cols *Tensor, w window) {
	cpu.Col2Im(cpuBuf[T](dst)[dst.offset:], cpuBuf[T](cols), lay(cols), cpuWindow(w))
}

// cpuAttention is a as package cpu's Attention over the segments seg.
func cpuAttention(a attnShape, seg *Tensor) cpu.Attention {
	return cpu.Attention{N: a.n, H: a.h, D: a.d, Seg: cpuBuf[int32](seg)[seg.offset:], Scale: a.scale, Causal: a.causal}
}

// rows returns the contiguous t's elements.
func rows[T cpu.Float](t *Tensor) []T { return cpuBuf[T](t)[t.offset : t.offset+t.Numel()] }

func (floatOf[T]) attention(out, lse, q, k, v, seg *Tensor, a attnShape) {
	cpu.AttentionForward(rows[T](out), rows[T](lse), rows[T](q), rows[T](k), rows[T](v), cpuAttention(a, seg))
}

func (floatOf[T]) attentionBackward(res, q, k, v, out, lse, g, seg *Tensor, a attnShape) {
	r, m := rows[T](res), q.Numel()
	cpu.AttentionBackward(r[:m], r[m:2*m], r[2*m:], rows[T](q), rows[T](k), rows[T](v), rows[T](out), rows[T](lse), rows[T](g), cpuAttention(a, seg))
}

func (floatOf[T]) random(normal bool, dst *Tensor, seed, offset uint64, a, b float64) {
	d := cpuBuf[T](dst)[dst.offset : dst.offset+dst.Numel()]
	if normal {
		cpu.Normal(d, seed, offset, a, b)
	} else {
		cpu.Uniform(d, seed, offset, a, b)
	}
}
