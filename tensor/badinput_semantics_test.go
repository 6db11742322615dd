package tensor_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

var nan, inf = math.NaN(), math.Inf(1)

// A semCase is an op whose result PyTorch computed (the comment of each
// case is the torch call): shape, dtype and values on every device.
type semCase struct {
	torch string
	f     func(dev tensor.Device) *tensor.Tensor
	shape []int
	dt    tensor.DType
	want  []float64
}

func runSemCases(t *testing.T, cases []semCase) {
	t.Helper()
	for _, dev := range devtest.Devices(t) {
		for _, c := range cases {
			var got *tensor.Tensor
			var vals []float64
			err, bug := catchAny(func() { got = c.f(dev); vals = got.Float64s() })
			switch {
			case err != nil || bug != nil:
				t.Errorf("%v: %s: %v %v", dev, c.torch, err, bug)
			case !slices.Equal(got.Shape(), c.shape) || got.DType() != c.dt || !(approx.Mismatch(vals, c.want, approx.AbsRel(0, 1e-6)) < 0):
				t.Errorf("%v: %s = %v %v %v, want %v %v %v (torch)", dev, c.torch, got.Shape(), got.DType(), vals, c.shape, c.dt, c.want)
			}
		}
	}
}

func vals32(dev tensor.Device, v ...float32) *tensor.Tensor { return tensor.New(v).To(dev) }
func ints32(dev tensor.Device, v ...int32) *tensor.Tensor   { return tensor.New(v).To(dev) }

// TestSemanticsMatchTorch: results PyTorch 1.13 gives, on every device.
func TestSemanticsMatchTorch(t *testing.T) {
	f32, i32 := tensor.Float32, tensor.Int32
	zeros := func(dev tensor.Device, shape ...int) *tensor.Tensor { return tensor.Zeros(shape, tensor.On(dev)) }
	runSemCases(t, []semCase{
		// Var: the divisor is max(N - correction, 0).
		{"torch.var(torch.tensor([1.,2.,3.]), dim=0, correction=5)", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Var(nil, 5, false) }, []int{}, f32, []float64{inf}},
		{"torch.var(torch.tensor([1.,2.,3.]), dim=0, correction=3)", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Var(nil, 3, false) }, []int{}, f32, []float64{inf}},
		{"torch.var(torch.zeros(3), dim=0, correction=5)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3).Var(nil, 5, false) }, []int{}, f32, []float64{nan}},
		{"torch.var(torch.tensor([1.,2.,3.]), dim=0, correction=-1)", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Var(nil, -1, false) }, []int{}, f32, []float64{0.5}},
		{"torch.zeros(0).var()", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0).Var(nil, 1, false) }, []int{}, f32, []float64{nan}},
		{"torch.var(torch.zeros(0), dim=0, correction=0)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0).Var(nil, 0, false) }, []int{}, f32, []float64{nan}},
		{"torch.zeros(2,0).var(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 2, 0).Var([]int{1}, 1, false) }, []int{2}, f32, []float64{nan, nan}},
		{"torch.zeros(0).std()", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0).Std(nil, 1, false) }, []int{}, f32, []float64{nan}},
		{"torch.std(torch.tensor([1.,2.,3.]), dim=0, correction=5)", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Std(nil, 5, false) }, []int{}, f32, []float64{inf}},
		// Clamp: a NaN bound gives NaN (the same on every device).
		{"torch.tensor([1.,2.,3.]).clamp(float('nan'), 2)", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Clamp(nan, 2) }, []int{3}, f32, []float64{nan, nan, nan}},
		{"torch.tensor([1.,2.,3.]).clamp(0, float('nan'))", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2, 3).Clamp(0, nan) }, []int{3}, f32, []float64{nan, nan, nan}},
		{"torch.tensor([1,2],dtype=torch.int32).clamp(float('nan'), 3)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).Clamp(nan, 3) }, []int{2}, f32, []float64{nan, nan}},
		{"torch.tensor([1,2],dtype=torch.int32).clamp(0, 1e10)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).Clamp(0, 1e10) }, []int{2}, f32, []float64{1, 2}},
		{"torch.tensor([1,2],dtype=torch.int32).clamp(min=-1e10)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).ClampMin(-1e10) }, []int{2}, f32, []float64{1, 2}},
		{"torch.tensor([1,2],dtype=torch.int32).clamp(min=0) (Inf is Tessera's missing bound)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).ClampMin(0) }, []int{2}, i32, []float64{1, 2}},
		{"torch.tensor([-5,7],dtype=torch.int32).clamp(max=3)", func(d tensor.Device) *tensor.Tensor { return ints32(d, -5, 7).ClampMax(3) }, []int{2}, i32, []float64{-5, 3}},
		// An int32 tensor and a scalar that is no int32 value (a Python float) compute in float32.
		{"torch.tensor([1,2,3], dtype=torch.int32) * 3e9", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2, 3).MulScalar(3e9) }, []int{3}, f32, []float64{3e9, 6e9, 9e9}},
		{"torch.tensor([1,2,3], dtype=torch.int32) * 0.5", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2, 3).MulScalar(0.5) }, []int{3}, f32, []float64{0.5, 1, 1.5}},
		{"torch.tensor([1,2],dtype=torch.int32).add(float('inf'))", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).AddScalar(inf) }, []int{2}, f32, []float64{inf, inf}},
		{"torch.tensor([1,2],dtype=torch.int32).add(float('nan'))", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).AddScalar(nan) }, []int{2}, f32, []float64{nan, nan}},
		{"torch.tensor([1,2],dtype=torch.int32).sub(-3e9)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).SubScalar(-3e9) }, []int{2}, f32, []float64{3000000001, 3000000002}},
		{"torch.tensor([1,2],dtype=torch.int32) + 2 (an int32 value keeps int32)", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).AddScalar(2) }, []int{2}, i32, []float64{3, 4}},
		{"torch.tensor([1,2],dtype=torch.int32) < 1e10", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).LtScalar(1e10) }, []int{2}, tensor.Bool, []float64{1, 1}},
		{"torch.tensor([1,2],dtype=torch.int32) == 3e9", func(d tensor.Device) *tensor.Tensor { return ints32(d, 1, 2).EqScalar(3e9) }, []int{2}, tensor.Bool, []float64{0, 0}},
		{"torch.tensor([1.,2.]) < 1e40", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2).LtScalar(1e40) }, []int{2}, tensor.Bool, []float64{1, 1}},
		{"torch.tensor([1.,2.]) / 1e40", func(d tensor.Device) *tensor.Tensor { return vals32(d, 1, 2).DivScalar(1e40) }, []int{2}, f32, []float64{0, 0}},
		{"torch.full((2,), -2147483648, dtype=torch.int32)", func(d tensor.Device) *tensor.Tensor {
			return tensor.Full([]int{2}, math.MinInt32, tensor.On(d), tensor.Of(i32))
		}, []int{2}, i32, []float64{math.MinInt32, math.MinInt32}},
		{"torch.full((2,), 1.5, dtype=torch.int32)", func(d tensor.Device) *tensor.Tensor { return tensor.Full([]int{2}, 1.5, tensor.On(d), tensor.Of(i32)) }, []int{2}, i32, []float64{1, 1}},
		{"torch.full((2,), float('nan'), dtype=torch.bool)", func(d tensor.Device) *tensor.Tensor {
			return tensor.Full([]int{2}, nan, tensor.On(d), tensor.Of(tensor.Bool))
		}, []int{2}, tensor.Bool, []float64{1, 1}},
		{"torch.full((2,), float('inf'))", func(d tensor.Device) *tensor.Tensor { return tensor.Full([]int{2}, inf, tensor.On(d)) }, []int{2}, f32, []float64{inf, inf}},
		// Reductions over a dim of size 0 that is not reduced give an empty result.
		{"torch.zeros(0,3).amax(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).Amax([]int{1}, false) }, []int{0}, f32, []float64{}},
		{"torch.zeros(3,0).amax(0)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0).Amax([]int{0}, false) }, []int{0}, f32, []float64{}},
		{"torch.zeros(3,0,2).amax((0,2))", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0, 2).Amax([]int{0, 2}, false) }, []int{0}, f32, []float64{}},
		{"torch.zeros(0,3).amin(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).Amin([]int{1}, true) }, []int{0, 1}, f32, []float64{}},
		{"torch.zeros(0,3).max(1).values", func(d tensor.Device) *tensor.Tensor { v, _ := zeros(d, 0, 3).MaxDim(1, false); return v }, []int{0}, f32, []float64{}},
		{"torch.zeros(0,3).argmax(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).ArgMaxDim(1, false) }, []int{0}, i32, []float64{}},
		{"torch.zeros(0,3).logsumexp(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).LogSumExp([]int{1}, false) }, []int{0}, f32, []float64{}},
		{"torch.zeros(0,3).logsumexp(0)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).LogSumExp([]int{0}, false) }, []int{3}, f32, []float64{-inf, -inf, -inf}},
		{"torch.zeros(0).logsumexp(0)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0).LogSumExp(nil, false) }, []int{}, f32, []float64{-inf}},
		{"torch.zeros(3,0).logsumexp(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0).LogSumExp([]int{1}, true) }, []int{3, 1}, f32, []float64{-inf, -inf, -inf}},
		{"torch.zeros(0,3).logsumexp(dim=(0,1))", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).LogSumExp(nil, false) }, []int{}, f32, []float64{-inf}},
		{"torch.zeros(3,0).sum(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0).Sum(1) }, []int{3}, f32, []float64{0, 0, 0}},
		{"torch.zeros(3,0).mean(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0).Mean(1) }, []int{3}, f32, []float64{nan, nan, nan}},
		{"torch.zeros(0,3).std(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).Std([]int{1}, 1, false) }, []int{0}, f32, []float64{}},
		{"torch.linalg.vector_norm(torch.zeros(0,3), ord=inf, dim=1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).Norm(inf, []int{1}, false) }, []int{0}, f32, []float64{}},
		{"torch.zeros(0,3).softmax(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 0, 3).Softmax(1) }, []int{0, 3}, f32, []float64{}},
		{"torch.zeros(3,0).cumsum(1)", func(d tensor.Device) *tensor.Tensor { return zeros(d, 3, 0).CumSum(1) }, []int{3, 0}, f32, []float64{}},
	})
}

// TestScalarsThatDoNotFit: a scalar that must be stored in a tensor's
// dtype and does not fit is ErrArgument ("value cannot be converted to
// type int32 without overflow"), the same on every device; an in-place
// op whose scalar would make an integer tensor float is ErrDType
// ("result type Float can't be cast to the desired output type Int").
func TestScalarsThatDoNotFit(t *testing.T) {
	i32 := tensor.Of(tensor.Int32)
	for _, dev := range devtest.Devices(t) {
		on := tensor.On(dev)
		ints := func() *tensor.Tensor { return ints32(dev, 1, 2) }
		expectBad(t, dev.String()+": ", []badCase{
			{"torch.full((2,), 1e10, dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Full([]int{2}, 1e10, on, i32) }, []string{"tensor.Full", "1e+10", "int32", "overflow"}},
			{"torch.full((2,), 2147483648, dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Full([]int{2}, 1<<31, on, i32) }, nil},
			{"torch.full((2,), float('nan'), dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Full([]int{2}, nan, on, i32) }, nil},
			{"torch.full((2,), float('inf'), dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Full([]int{2}, inf, on, i32) }, nil},
			{"torch.full((2,), 1e40, dtype=torch.float32)", tensor.ErrArgument, func() { tensor.Full([]int{2}, 1e40, on) }, []string{"float32"}},
			{"torch.scalar_tensor(1e10, dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Scalar(1e10, tensor.Int32, dev) }, nil},
			{"ZerosLike ok, FullLike(1e10) of int32", tensor.ErrArgument, func() { tensor.FullLike(ints(), 1e10) }, nil},
			{"int32 fill_(1e10)", tensor.ErrArgument, func() { ints().Fill(1e10) }, []string{"tensor.Fill"}},
			{"int32 fill_(nan)", tensor.ErrArgument, func() { ints().Fill(nan) }, nil},
			{"float32 fill_(1e40)", tensor.ErrArgument, func() { vals32(dev, 1).Fill(1e40) }, nil},
			{"int32 masked_fill(mask, 1e10)", tensor.ErrArgument, func() { ints().MaskedFill(tensor.New([]bool{true, false}).To(dev), 1e10) }, []string{"tensor.MaskedFill"}},
			{"float32 masked_fill(mask, 1e40)", tensor.ErrArgument, func() { vals32(dev, 1, 2).MaskedFill(tensor.New([]bool{true, false}).To(dev), 1e40) }, nil},
			{"float32 clamp(min=-1e40)", tensor.ErrArgument, func() { vals32(dev, 1, 2).ClampMin(-1e40) }, []string{"tensor.Clamp"}},
			{"torch.linspace(0, 3e9, 3, dtype=torch.int32)", tensor.ErrArgument, func() { tensor.Linspace(0, 3e9, 3, on, i32) }, []string{"tensor.Linspace"}},
			{"int32 add_(1e10)", tensor.ErrDType, func() { ints().AddScalarInPlace(1e10) }, []string{"tensor.AddScalarInPlace"}},
			{"int32 mul_(0.5)", tensor.ErrDType, func() { ints().MulScalarInPlace(0.5) }, nil},
			{"int32 add_(nan)", tensor.ErrDType, func() { ints().AddScalarInPlace(nan) }, nil},
			{"int32 clamp_(0, 1e10)", tensor.ErrDType, func() { ints().ClampInPlace(0, 1e10) }, []string{"tensor.ClampInPlace"}},
			{"int32 clamp_(0, nan)", tensor.ErrDType, func() { ints().ClampInPlace(0, nan) }, nil},
			{"torch.zeros(0,3).amax(0)", tensor.ErrShape, func() { tensor.Zeros([]int{0, 3}, on).Amax([]int{0}, false) }, []string{"tensor.Amax", "dimension 0"}},
			{"torch.zeros(0).max()", tensor.ErrShape, func() { tensor.Zeros([]int{0}, on).Max() }, nil},
			{"torch.zeros(0,3).max(0)", tensor.ErrShape, func() { tensor.Zeros([]int{0, 3}, on).MaxDim(0, false) }, nil},
		})
		// In place, ±Inf stays a missing bound and a NaN bound gives NaN.
		if got := ints().ClampInPlace(math.Inf(-1), 1).Float64s(); !slices.Equal(got, []float64{1, 1}) {
			t.Errorf("%v: int32 clamp_(-Inf, 1) = %v, want [1 1]", dev, got)
		}
		if got := vals32(dev, 1, 2).ClampInPlace(nan, 1).Float64s(); !(approx.Mismatch(got, []float64{nan, nan}, approx.AbsRel(0, 1e-6)) < 0) {
			t.Errorf("%v: float32 clamp_(nan, 1) = %v, want NaN", dev, got)
		}
	}
}

// TestInPlaceOnEmptyTensors: empty tensors have PyTorch's strides (a
// size-0 dim counts as 1) and pass through every in-place op, as
// torch.zeros(3, 0).add_(1) does; an expanded non-empty view is still
// refused.
func TestInPlaceOnEmptyTensors(t *testing.T) {
	// torch.zeros(3,0).stride() == (1, 1); torch.zeros(3,0,2).stride() == (2, 2, 1)
	for shape, want := range map[string][]int{"3x0": {1, 1}, "3x0x2": {2, 2, 1}, "0x3": {3, 1}} {
		var dims []int
		for _, f := range strings.Split(shape, "x") {
			dims = append(dims, map[string]int{"0": 0, "2": 2, "3": 3}[f])
		}
		if got := tensor.Zeros(dims).Strides(); !slices.Equal(got, want) {
			t.Errorf("strides of zeros %s = %v, want %v (torch)", shape, got, want)
		}
	}
	for _, dev := range devtest.Devices(t) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 2, 5}} {
			mk := func() *tensor.Tensor { return tensor.Zeros(shape, tensor.On(dev)) }
			for name, f := range map[string]func(x *tensor.Tensor){
				"AddInPlace":       func(x *tensor.Tensor) { x.AddInPlace(mk(), 2) },
				"SubInPlace":       func(x *tensor.Tensor) { x.SubInPlace(mk()) },
				"MulInPlace":       func(x *tensor.Tensor) { x.MulInPlace(mk()) },
				"DivInPlace":       func(x *tensor.Tensor) { x.DivInPlace(mk()) },
				"AddScalarInPlace": func(x *tensor.Tensor) { x.AddScalarInPlace(1) },
				"MulScalarInPlace": func(x *tensor.Tensor) { x.MulScalarInPlace(0.5) },
				"ClampInPlace":     func(x *tensor.Tensor) { x.ClampInPlace(-1, 1) },
				"CopyFrom":         func(x *tensor.Tensor) { x.CopyFrom(mk()) },
				"Fill":             func(x *tensor.Tensor) { x.Fill(3) },
				"Zero":             func(x *tensor.Tensor) { x.Zero() },
				"AddcmulInPlace":   func(x *tensor.Tensor) { x.AddcmulInPlace(mk(), mk(), 2) },
				"AddcdivInPlace":   func(x *tensor.Tensor) { x.AddcdivInPlace(mk(), mk(), 2) },
				"expanded view":    func(x *tensor.Tensor) { x.Unsqueeze(0).Expand(append([]int{4}, shape...)...).AddScalarInPlace(1) },
			} {
				x := mk()
				if err, bug := catchAny(func() { f(x); x.Float32s() }); err != nil || bug != nil {
					t.Errorf("%v: %s on %v: %v %v", dev, name, shape, err, bug)
				}
			}
		}
		err := tensor.Catch(func() { tensor.Ones([]int{1}, tensor.On(dev)).Expand(3).AddScalarInPlace(1) })
		if !errors.Is(err, tensor.ErrInPlace) {
			t.Errorf("%v: in place into an expanded [3] view: %v, want ErrInPlace", dev, err)
		}
	}
}

// TestDeferredGPUIndexErrorNamesTheFirstOp: of several bad indices
// computed on the GPU, the error at the next read names the first op,
// as documented.
func TestDeferredGPUIndexErrorNamesTheFirstOp(t *testing.T) {
	dev, ok := devtest.GPU(t)
	if !ok {
		return
	}
	x := tensor.Arange(0, 12, 1, tensor.Of(tensor.Float32), tensor.On(dev)).Reshape(3, 4)
	bad := tensor.New([]int32{0, 1}).To(dev).MulScalar(7) // 0, 7: computed on the device
	x.IndexSelect(0, bad)                                 // first: a bad index
	x.Gather(1, bad.Reshape(1, 2))                        // second: another
	x.IndexSelect(1, bad)                                 // third
	err := tensor.Catch(func() { x.Sum().Item() })
	var te *tensor.Error
	if !errors.As(err, &te) || te.Op != "IndexSelect" || !errors.Is(err, tensor.ErrIndex) || !strings.Contains(err.Error(), "[0, 3)") {
		t.Errorf("deferred error = %v, want the first op's (IndexSelect along dim 0, [0, 3))", err)
	}
	if err := tensor.Catch(func() { x.Sum().Item() }); err != nil {
		t.Errorf("the next read failed too: %v", err)
	}
}
