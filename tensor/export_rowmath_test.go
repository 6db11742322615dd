package tensor

// Hooks for TestRowMath (package tensor_test), which checks the CPU
// kernels of each op's row against its spec (internal/opspec).

// RowKernelDTypes returns the dtypes op's row has CPU kernels for.
func RowKernelDTypes(op Op) []DType {
	var out []DType
	for dt := range numDTypes {
		if op.info().cpu[dt] != nil {
			out = append(out, dt)
		}
	}
	return out
}

// RunRowKernel runs op's CPU kernel for dt on ins (of one shape) with
// parameters p and returns the result, of the row's output dtype.
func RunRowKernel(op Op, dt DType, p [2]float64, ins []*Tensor) *Tensor {
	info := op.info()
	dst := newTensor(info.outType(dt), ins[0].Shape(), CPU)
	var in [3]*Tensor
	copy(in[:], ins)
	info.cpu[dt].run(p, dst, in)
	return dst
}
