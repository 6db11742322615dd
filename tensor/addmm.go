package tensor

import (
	"fmt"

	"github.com/tessera-ml/tessera/cpu"
)

// Addmm returns input + a·b for matrices a (m, k) and b (k, n) and an
// input that broadcasts to (m, n), as torch.addmm(input, a, b) with beta
// and alpha 1: a linear layer's x·Wᵀ + bias. Integer operands compute in
// Float32.
//
// The result is the product followed by Add, bit for bit on the CPU,
// where a Float32 bias row (input of shape (n) or (1, n), or a view
// broadcast along the rows) is added by the GEMM's kernels as they store
// each block of the product, from registers, saving Add's pass over the
// result. On a GPU it runs MatMul then Add, which fusion makes one
// dispatch (a matmul epilogue).
//
// It panics with ErrShape unless a and b are 2-D with equal inner dims
// and input broadcasts to (m, n), and with ErrDevice for operands on
// different devices.
func Addmm(input, a, b *Tensor) *Tensor { return addmm(OpAddmm, false, input, a, b) }

// AddmmReLU returns Addmm(input, a, b).ReLU(), as PyTorch's
// torch._addmm_activation(input, a, b): a linear layer and its ReLU.
// On the CPU, with a Float32 bias row, the GEMM's kernels add the bias
// and take the ReLU as they store the product, saving the passes of Add
// and ReLU; the result is theirs bit for bit. Shapes, dtypes and panics
// are Addmm's.
func AddmmReLU(input, a, b *Tensor) *Tensor { return addmm(OpAddmmReLU, true, input, a, b) }

// addmm is Addmm (op OpAddmm) and, with relu, AddmmReLU (OpAddmmReLU).
func addmm(op Op, relu bool, input, a, b *Tensor) *Tensor {
	name := op.String()
	defer allocatedFor(name)
	operands(name, input, a, b)
	if a.Dim() != 2 || b.Dim() != 2 {
		fail(name, ErrShape, "a and b must be matrices", input, a, b)
	}
	m, k, n := a.shape[0], a.shape[1], b.shape[1]
	if b.shape[0] != k {
		fail(name, ErrShape, fmt.Sprintf("inner dimensions differ: %d and %d", k, b.shape[0]), input, a, b)
	}
	shape := []int{m, n}
	if !broadcastsTo(input.shape, shape) {
		fail(name, ErrShape, fmt.Sprintf("input must broadcast to %v", shape), input, a, b)
	}
	dt := floatType(PromoteTypes(PromoteTypes(a.dtype, b.dtype), input.dtype))
	input, a, b = input.Cast(dt), a.Cast(dt), b.Cast(dt)
	ins := []*Tensor{input, a, b}
	if a.Device().Kind != KindCPU {
		// The ops one by one, unrecorded: with fusion one dispatch.
		out := a.Detach().MatMul(b.Detach()).Add(input.Detach())
		if relu {
			out = out.ReLU()
		}
		return record(out, op, Attrs{}, ins...)
	}
	shapeNumel(name, shape, ins...)
	out := newResult(dt, shape, a.Device(), ins)
	if out.Numel() > 0 {
		cpuAddmm(out, input.broadcastView(shape), a, b, relu)
	}
	return record(out, op, Attrs{}, ins...)
}

// cpuAddmm computes dst (m, n), contiguous, = a·b + input, then its ReLU
// when relu is set, input laid out in dst's shape: through the GEMM's
// epilogue where the CPU takes it (Float32, input a row broadcast over
// the rows), else as the product then Add (and ReLU) in place.
func cpuAddmm(dst, input, a, b *Tensor, relu bool) {
	defer unpin(pin(dst, input, a, b))
	m, n, k := dst.shape[0], dst.shape[1], a.shape[1]
	d3, a3, b3 := dst.asMatrix(1, m, n), a.asMatrix(1, m, k), b.asMatrix(0, k, n)
	if dst.dtype == Float32 && input.strides[0] == 0 && input.strides[1] == 1 {
		bias := cpuBuf[float32](input)[input.offset : input.offset+n]
		epi := cpu.Epilogue{Bias: bias, ReLU: relu}
		if cpu.MatMulEpilogue(cpuBuf[float32](dst), lay(d3), cpuBuf[float32](a), lay(a3), cpuBuf[float32](b), lay(b3), epi) {
			return
		}
	}
	bk := cpuBackend{}
	bk.matmul(d3, a3, b3)
	bk.binary(OpAdd, dst, dst, input)
	if relu {
		bk.unary(OpReLU, [2]float64{}, dst, dst)
	}
}
