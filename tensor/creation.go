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

// makeOptions applies opts for op, panicking with ErrDType for a dtype
// that is none of the four and ErrDevice for a malformed device.
func makeOptions(op string, opts []Option) options {
	o := options{dtype: Float32, device: CPU, ctx: defaultContext}
	for _, f := range opts {
		if f == nil {
			failf(op, ErrArgument, nil, "nil Option")
		}
		f(&o)
	}
	checkDType(op, o.dtype)
	if err := checkDevice(o.device); err != nil {
		panic(&Error{Op: op, Err: ErrDevice, Detail: err.Error(), Devices: []Device{o.device}})
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
	o = checkCreate(op, shape, o)
	defer allocatedFor(op)
	t := newBare(o.dtype, shape, o.device) // track guards it unless a Scope holds it (as newResult)
	t.ctx = o.ctx
	o.ctx.track(t)
	return t
}

// checkCreate checks the shape, dtype and device of a tensor op creates
// and returns o with its context filled in.
func checkCreate(op string, shape []int, o options) options {
	shapeNumel(op, shape)
	checkHoldsDType(op, o.device, o.dtype, "")
	if err := Available(o.device); err != nil {
		panic(&Error{Op: op, Err: ErrDevice, Detail: err.Error(), Devices: []Device{o.device}})
	}
	if o.ctx == nil {
		o.ctx = defaultContext
	}
	return o
}

// pendingFull is filled's result as a pending constant (fuseConstant),
// placed as empty places a tensor, or nil.
func pendingFull(op string, shape []int, v float64, o options) *Tensor {
	o = checkCreate(op, shape, o)
	t := fuseConstant(op, shape, v, o.dtype, o.device)
	if t == nil {
		return nil
	}
	t.ctx = o.ctx
	o.ctx.track(t)
	if t.dtype == Int32 {
		t.ref.s.setIndexRange(int64(int32(v)), int64(int32(v)), true)
	}
	return t
}

// allocatedFor, deferred, names op in the out-of-memory *Error of an
// allocation that op made.
func allocatedFor(op string) {
	if r := recover(); r != nil {
		if e, ok := r.(*Error); ok && e.Op == "alloc" {
			e.Op = op
		}
		panic(r)
	}
}

// Full returns a tensor of the given shape filled with v. It panics with
// ErrArgument when v does not fit the dtype (an Int32 value outside
// int32's range, NaN or ±Inf; a finite Float32 value beyond float32's
// range), as torch.full does.
func Full(shape []int, v float64, opts ...Option) *Tensor {
	o := makeOptions("Full", opts)
	checkScalar("Full", v, o.dtype)
	return filled("Full", shape, v, o)
}

// filled is Full after its checks: v converts to o's dtype as a cast
// does (a Float32 beyond range becomes ±Inf).
func filled(op string, shape []int, v float64, o options) *Tensor {
	if t := pendingFull(op, shape, v, o); t != nil {
		return t
	}
	t := empty(op, shape, o)
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
func ZerosLike(t *Tensor, opts ...Option) *Tensor {
	argsNonNil("ZerosLike", 1, t)
	return Zeros(t.shape, like(t, opts)...)
}

// OnesLike returns ones with t's shape, dtype and device.
func OnesLike(t *Tensor, opts ...Option) *Tensor {
	argsNonNil("OnesLike", 1, t)
	return Ones(t.shape, like(t, opts)...)
}

// FullLike returns v everywhere, with t's shape, dtype and device.
func FullLike(t *Tensor, v float64, opts ...Option) *Tensor {
	argsNonNil("FullLike", 1, t)
	return Full(t.shape, v, like(t, opts)...)
}

// generate builds the 1-D tensor of n values f(0), f(1), ... of o's
// dtype: device memory first, then the one host slice, each checked
// against its budget before it is made.
func generate(op string, n int, o options, f func(i int) float64) *Tensor {
	t := empty(op, []int{n}, o)
	host := o.dtype.Size()
	if o.device.Kind == KindGPU {
		host += 4 // the upload's encoding
	}
	checkHostAlloc(op, n, host)
	var src any
	switch o.dtype {
	case Float32:
		src = hostValues(n, f, func(v float64) float32 { return float32(v) })
	case Float64:
		src = hostValues(n, f, func(v float64) float64 { return v })
	case Int32:
		src = hostValues(n, f, func(v float64) int32 { return int32(v) })
	case Bool:
		src = hostValues(n, f, func(v float64) bool { return v != 0 })
	}
	backendOf(t.Device()).write(t, src)
	return t
}

func hostValues[T Element](n int, f func(int) float64, conv func(float64) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = conv(f(i))
	}
	return out
}

// Arange returns the 1-D tensor [start, start+step, ...) stopping before
// end, as torch.arange. Its dtype is Int32 when start, end and step are
// whole numbers (PyTorch gives int64) and Float32 otherwise, unless Of
// says. It panics with ErrArgument for a zero step, a step whose sign
// points away from end, or Int32 values that do not fit.
func Arange(start, end, step float64, opts ...Option) *Tensor {
	o := makeOptions("Arange", opts)
	if !o.dtypeSet && start == math.Trunc(start) && end == math.Trunc(end) && step == math.Trunc(step) {
		o.dtype = Int32
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	// Each bound on its own: start+end+step overflows for finite bounds
	// near ±MaxFloat64 (Arange(-1.7e308, -1.7e308, -3) was refused).
	if step == 0 || !finite(start) || !finite(end) || !finite(step) || (end-start)/step > 1<<31 {
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
	return generate("Arange", n, o, func(i int) float64 { return start + float64(i)*step })
}

// Linspace returns steps evenly spaced values from start to end
// inclusive, as torch.linspace. It panics with ErrArgument for negative
// steps and for ends that do not fit an integer dtype.
func Linspace(start, end float64, steps int, opts ...Option) *Tensor {
	o := makeOptions("Linspace", opts)
	if steps < 0 {
		failf("Linspace", ErrArgument, nil, "number of steps must be non-negative, got %d", steps)
	}
	if steps > 0 {
		checkScalar("Linspace", start, o.dtype)
		checkScalar("Linspace", end, o.dtype)
	}
	// Like PyTorch, fill the first half from start and the second from
	// end, so both ends are exact; integer dtypes truncate toward zero.
	step := (end - start) / float64(max(steps-1, 1))
	return generate("Linspace", steps, o, func(i int) float64 {
		switch {
		case steps == 1:
			return start
		case i < steps/2:
			return start + step*float64(i)
		}
		return end - step*float64(steps-1-i)
	})
}

// Eye returns the n×n identity matrix.
func Eye(n int, opts ...Option) *Tensor {
	o := makeOptions("Eye", opts)
	if n < 0 {
		failf("Eye", ErrArgument, nil, "n must be at least 0, got %d", n)
	}
	nn := shapeNumel("Eye", []int{n, n})
	return generate("Eye", nn, o, func(i int) float64 {
		if i%(n+1) == 0 {
			return 1
		}
		return 0
	}).View(n, n)
}
