package tensor

import "math"

// An Option sets the dtype or device of a tensor a creation function
// makes: tensor.Zeros([]int{2, 3}, tensor.Of(tensor.Float64), tensor.On(dev)).
type Option func(*options)

type options struct {
	dtype    DType
	dtypeSet bool
	device   Device
	gen      *Generator
	ctx      *Context
}

// Of sets the dtype (default Float32, or what the function documents).
func Of(dt DType) Option { return func(o *options) { o.dtype, o.dtypeSet = dt, true } }

// On sets the device (default CPU).
func On(dev Device) Option { return func(o *options) { o.device = dev } }

// WithGenerator draws random numbers from g instead of the default
// generator.
func WithGenerator(g *Generator) Option { return func(o *options) { o.gen = g } }

func makeOptions(opts []Option) options {
	o := options{dtype: Float32, device: CPU, ctx: defaultContext}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// like returns the options that make a tensor like t (dtype, device and
// context), overridden by opts.
func like(t *Tensor, opts []Option) []Option {
	return append([]Option{Like(t)}, opts...)
}

// empty allocates an uninitialised tensor, checking the shape.
func empty(op string, shape []int, o options) *Tensor {
	for _, d := range shape {
		if d < 0 {
			failf(op, ErrShape, nil, "negative dimension in shape %v", shape)
		}
	}
	if o.device.Kind == KindGPU && o.dtype == Float64 {
		failf(op, ErrDType, nil, "float64 tensors live on the CPU only (WGSL has no f64)")
	}
	if err := Available(o.device); err != nil {
		panic(&Error{Op: op, Err: ErrDevice, Detail: err.Error(), Devices: []Device{o.device}})
	}
	t := newTensor(o.dtype, shape, o.device)
	t.ctx = o.ctx
	o.ctx.track(t)
	return t
}

// Full returns a tensor of the given shape filled with v.
func Full(shape []int, v float64, opts ...Option) *Tensor {
	t := empty("Full", shape, makeOptions(opts))
	backendOf(t.Device()).fill(t, v)
	if t.dtype == Int32 {
		t.ref.s.setIndexRange(int64(int32(v)), int64(int32(v)), true)
	}
	return t
}

// Zeros returns a tensor of zeros.
func Zeros(shape []int, opts ...Option) *Tensor { return Full(shape, 0, opts...) }

// Ones returns a tensor of ones.
func Ones(shape []int, opts ...Option) *Tensor { return Full(shape, 1, opts...) }

// ZerosLike returns zeros with t's shape, dtype and device (opts override).
func ZerosLike(t *Tensor, opts ...Option) *Tensor { return Zeros(t.shape, like(t, opts)...) }

// OnesLike returns ones with t's shape, dtype and device.
func OnesLike(t *Tensor, opts ...Option) *Tensor { return Ones(t.shape, like(t, opts)...) }

// FullLike returns v everywhere, with t's shape, dtype and device.
func FullLike(t *Tensor, v float64, opts ...Option) *Tensor {
	return Full(t.shape, v, like(t, opts)...)
}

// fromHost builds a tensor from host values computed in float64.
func fromHost(op string, vals []float64, shape []int, o options) *Tensor {
	t := empty(op, shape, o)
	var src any
	switch o.dtype {
	case Float32:
		src = convertHost[float32](vals)
	case Float64:
		src = vals
	case Int32:
		src = convertHost[int32](vals)
	case Bool:
		src = convertHost[bool](vals)
	}
	backendOf(t.Device()).write(t, src)
	return t
}

// Arange returns the 1-D tensor [start, start+step, ...) stopping before
// end, as torch.arange. Its dtype is Int32 when start, end and step are
// whole numbers (PyTorch gives int64) and Float32 otherwise, unless Of
// says. It panics with ErrArgument for a zero step, a step whose sign
// points away from end, or Int32 values that do not fit.
func Arange(start, end, step float64, opts ...Option) *Tensor {
	o := makeOptions(opts)
	if !o.dtypeSet && start == math.Trunc(start) && end == math.Trunc(end) && step == math.Trunc(step) {
		o.dtype = Int32
	}
	if step == 0 || math.IsNaN(start+end+step) || math.IsInf(start+end+step, 0) || (end-start)/step > 1<<31 {
		failf("Arange", ErrArgument, nil, "bad range start=%g end=%g step=%g", start, end, step)
	}
	if (end-start)/step < 0 {
		failf("Arange", ErrArgument, nil, "upper bound and lower bound inconsistent with step sign: start=%g end=%g step=%g", start, end, step)
	}
	n := int(math.Ceil((end - start) / step))
	if last := start + float64(n-1)*step; o.dtype == Int32 && n > 0 &&
		(start < math.MinInt32 || start > math.MaxInt32 || last < math.MinInt32 || last > math.MaxInt32) {
		failf("Arange", ErrArgument, nil, "values from %g to %g do not fit in int32", start, last)
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	return fromHost("Arange", vals, []int{n}, o)
}

// Linspace returns steps evenly spaced values from start to end
// inclusive, as torch.linspace.
func Linspace(start, end float64, steps int, opts ...Option) *Tensor {
	if steps < 0 {
		failf("Linspace", ErrArgument, nil, "negative steps %d", steps)
	}
	vals := make([]float64, steps)
	if steps == 1 {
		vals[0] = start
		return fromHost("Linspace", vals, []int{steps}, makeOptions(opts))
	}
	// Like PyTorch, fill the first half from start and the second from
	// end, so both ends are exact; integer dtypes truncate toward zero.
	step := (end - start) / float64(steps-1)
	for i := range vals {
		if i < steps/2 {
			vals[i] = start + step*float64(i)
		} else {
			vals[i] = end - step*float64(steps-1-i)
		}
	}
	return fromHost("Linspace", vals, []int{steps}, makeOptions(opts))
}

// Eye returns the n×n identity matrix.
func Eye(n int, opts ...Option) *Tensor {
	if n < 0 {
		failf("Eye", ErrArgument, nil, "n must be at least 0, got %d", n)
	}
	vals := make([]float64, n*n)
	for i := 0; i < n; i++ {
		vals[i*n+i] = 1
	}
	return fromHost("Eye", vals, []int{n, n}, makeOptions(opts))
}
