package tensor

// Element is the constraint of the Go types a tensor can be built from.
type Element interface {
	float32 | float64 | int32 | bool
}

// dtypeOf returns the DType of T.
func dtypeOf[T Element]() DType {
	switch any(*new(T)).(type) {
	case float64:
		return Float64
	case int32:
		return Int32
	case bool:
		return Bool
	}
	return Float32
}

// New returns a CPU tensor of the given shape holding a copy of data in
// row-major order. With no shape, the tensor is 1-D. It panics with
// ErrShape when len(data) does not match the shape.
//
//	x := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
func New[T Element](data []T, shape ...int) *Tensor {
	if shape == nil {
		shape = []int{len(data)}
	}
	if shapeNumel("New", shape) != len(data) {
		failf("New", ErrShape, nil, "%d elements do not fill shape %v", len(data), shape)
	}
	t := empty("New", shape, options{dtype: dtypeOf[T](), device: CPU, ctx: defaultContext})
	backendOf(CPU).write(t, data)
	return t
}

// From returns a tensor of the given shape holding a copy of data in
// row-major order, made as the options say: on the device of On (default
// the CPU), in the context of In (see Context), cast to the dtype of Of
// (default data's own). It panics with ErrShape when len(data) does not
// match the shape.
//
//	x := tensor.From(pixels, []int{batch, 784}, tensor.On(gpu), tensor.In(c))
func From[T Element](data []T, shape []int, opts ...Option) *Tensor {
	o := makeOptions("From", opts)
	want, dev := o.dtype, o.device
	if !o.dtypeSet {
		want = dtypeOf[T]()
	}
	if shapeNumel("From", shape) != len(data) {
		failf("From", ErrShape, nil, "%d elements do not fill shape %v", len(data), shape)
	}
	// Upload the data as they are, then cast; float64 data are cast on
	// the CPU, since the GPU has no f64.
	o.dtype = dtypeOf[T]()
	if !dev.Holds(o.dtype) {
		o.device = CPU
	}
	t := empty("From", shape, o)
	backendOf(o.device).write(t, data)
	if want != o.dtype {
		t = t.Cast(want)
	}
	return t.To(dev)
}

// FromInt64s returns an Int32 CPU tensor from int64 data (PyTorch's index
// type), panicking with ErrArgument when a value does not fit in int32.
func FromInt64s(data []int64, shape ...int) *Tensor { return fromInts("FromInt64s", data, shape) }

// FromInts is FromInt64s for []int.
func FromInts(data []int, shape ...int) *Tensor { return fromInts("FromInts", data, shape) }

func fromInts[I int | int64](op string, data []I, shape []int) *Tensor {
	if shape != nil && shapeNumel(op, shape) != len(data) {
		failf(op, ErrShape, nil, "%d elements do not fill shape %v", len(data), shape)
	}
	checkHostAlloc(op, len(data), 4)
	d := make([]int32, len(data))
	for i, v := range data {
		if int64(v) != int64(int32(v)) {
			failf(op, ErrArgument, nil, "value %d at %d does not fit in int32, Tessera's index type", v, i)
		}
		d[i] = int32(v)
	}
	return New(d, shape...)
}

// Scalar returns a 0-d tensor holding v, of dtype dt on dev.
func Scalar(v float64, dt DType, dev Device) *Tensor {
	return Full(nil, v, Of(dt), On(dev))
}

// hostData returns t's elements in row-major order, as a host slice of
// t's dtype, for op, which converts them to want. It waits for the
// device. The host slices are checked against the CPU budget first: a
// read of a huge (say expanded) view is an out-of-memory *Error, never
// Go's fatal one.
func (t *Tensor) hostData(op string, want DType) any {
	t.nonNil(op, 0)
	t.storage(op)
	size := t.dtype.Size()
	if t.Device().Kind == KindGPU {
		size += 4 // the readback's bytes
	}
	if want != t.dtype {
		size += want.Size()
	}
	checkHostAlloc(op, t.Numel(), size, t)
	return backendOf(t.Device()).read(t)
}

// Float32s returns a copy of t's elements in row-major order, converted
// to float32 when t has another dtype.
func (t *Tensor) Float32s() []float32 {
	return convertHost[float32](t.hostData("Float32s", Float32))
}

// Float64s returns a copy of t's elements as float64.
func (t *Tensor) Float64s() []float64 {
	return convertHost[float64](t.hostData("Float64s", Float64))
}

// Int32s returns a copy of t's elements as int32 (floats truncate).
func (t *Tensor) Int32s() []int32 { return convertHost[int32](t.hostData("Int32s", Int32)) }

// Bools returns a copy of t's elements as bool (x != 0).
func (t *Tensor) Bools() []bool { return convertHost[bool](t.hostData("Bools", Bool)) }

// Item returns the only element of a one-element tensor as float64.
func (t *Tensor) Item() float64 {
	t.nonNil("Item", 0)
	if t.Numel() != 1 {
		fail("Item", ErrShape, "Item needs a tensor with exactly one element", t)
	}
	return t.Float64s()[0]
}

func convertHost[D Element](src any) []D {
	if d, ok := src.([]D); ok {
		return d
	}
	var out []D
	switch s := src.(type) {
	case []float32:
		out = make([]D, len(s))
		for i, v := range s {
			out[i] = fromF64[D](float64(v))
		}
	case []float64:
		out = make([]D, len(s))
		for i, v := range s {
			out[i] = fromF64[D](v)
		}
	case []int32:
		out = make([]D, len(s))
		for i, v := range s {
			out[i] = fromF64[D](float64(v))
		}
	case []bool:
		out = make([]D, len(s))
		for i, v := range s {
			if v {
				out[i] = fromF64[D](1)
			}
		}
	}
	return out
}

func fromF64[D Element](v float64) D {
	var r any
	switch any(*new(D)).(type) {
	case float32:
		r = float32(v)
	case float64:
		r = v
	case int32:
		r = int32(v)
	case bool:
		r = v != 0
	}
	return r.(D)
}

// To returns t on dev: t itself when it is already there, else a copy.
// Float64 tensors cannot move to the GPU (WGSL has no f64): cast first.
// The copy is a leaf cut from the graph unless t requires grad, in which
// case gradients flow back to t.
func (t *Tensor) To(dev Device) *Tensor {
	t.nonNil("To", 0)
	src := t.ref.s
	if src.device == dev {
		return t
	}
	checkHoldsDType("To", dev, t.dtype, "; cast to Float32 first", t)
	if err := Available(dev); err != nil {
		fail("To", ErrDevice, err.Error(), t)
	}
	shapeNumel("To", t.shape, t)
	host := t.hostData("To", t.dtype)
	out := newTensor(t.dtype, t.shape, dev)
	backendOf(dev).write(out, host)
	return record(out, OpCopy, Attrs{}, t)
}
