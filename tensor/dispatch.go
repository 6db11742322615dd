package tensor

// A backend runs primitive ops on one kind of device. Tensor methods
// check arguments, allocate outputs, broadcast inputs (as stride-0 views)
// and record provenance; a backend only computes. Operands arrive as
// Tensors whose storage lives on the backend's device, with any strides
// unless a method says otherwise; dst is written in place through its
// own layout.
type backend interface {
	alloc(dt DType, n int) (any, error)
	free(dt DType, buf any)
	// write copies a host slice ([]float32, []float64, []int32 or []bool
	// matching dst's dtype) into the contiguous tensor dst.
	write(dst *Tensor, src any)
	// read returns the elements of x in row-major order as a host slice.
	read(x *Tensor) any

	fill(dst *Tensor, v float64)
	copy(dst, x *Tensor)
	cast(dst, x *Tensor)
	unary(op Op, p [2]float64, dst, x *Tensor)
	binary(op Op, dst, x, y *Tensor)
	ternary(op Op, s float64, dst, a, b, c *Tensor)
	where(dst, cond, x, y *Tensor)

	// reduce reduces x into dst, whose shape is x's with size 1 on the
	// reduced dims (op is OpSum, OpAmax or OpAmin).
	reduce(op Op, dst, x *Tensor)
	// argReduce writes the max (OpMaxDim) or min (OpMinDim) of x along
	// dim and its int32 index; vals may be nil.
	argReduce(op Op, vals, idx, x *Tensor, dim int)
	cumsum(dst, x *Tensor, dim int)
	softmax(log bool, dst, x *Tensor, dim int)
	// matmul computes dst (B,M,N, contiguous) = a (B,M,K) · b (B,K,N).
	matmul(dst, a, b *Tensor)

	indexSelect(dst, x, index *Tensor, dim int) error
	indexAdd(dst, index, src *Tensor, dim int) error
	gather(dst, x, index *Tensor, dim int) error
	scatterAdd(dst, index, src *Tensor, dim int) error

	// random fills the contiguous dst from the Philox stream (seed,
	// offset): uniform in [a, b) or normal with mean a and std b.
	random(normal bool, dst *Tensor, seed, offset uint64, a, b float64)
	// sync waits for queued work (a no-op on the CPU).
	sync() error
}

// backends is the dispatch table: the only place a device maps to code.
// The GPU entry is filled by the GPU backend when it opens a device.
var backends = [numDeviceKinds]backend{
	KindCPU: cpuBackend{},
}

// backendOf returns the backend of dev.
func backendOf(dev Device) backend {
	if dev.Kind == KindCPU {
		return backends[KindCPU]
	}
	b, err := gpuBackendFor(dev)
	if err != nil {
		panic(&Error{Op: "device", Err: ErrDevice, Detail: err.Error(), Devices: []Device{dev}})
	}
	return b
}

// Sync waits until every queued op on dev has finished. Benchmarks call
// it inside the timed loop; reading a tensor's data syncs implicitly.
func Sync(dev Device) error { return backendOf(dev).sync() }
