package tensor_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestNilTensorArguments: a nil *Tensor anywhere (receiver, argument,
// list element) is ErrArgument naming the op and the position, checked
// on entry; never a nil-pointer panic.
func TestNilTensorArguments(t *testing.T) {
	type T = tensor.Tensor
	var null *T
	x := tensor.Ones([]int{2, 3})
	idx := tensor.New([]int32{0, 1})
	pos1, pos2, pos3, recv := "argument 1 is a nil", "argument 2 is a nil", "argument 3 is a nil", "the receiver is a nil"
	cases := []struct {
		op, want string
		f        func()
	}{
		{"Add", pos1, func() { x.Add(nil) }},
		{"Add", recv, func() { null.Add(x) }},
		{"Mul", pos1, func() { x.Mul(nil) }},
		{"Eq", pos1, func() { x.Eq(nil) }},
		{"AddScaled", pos1, func() { x.AddScaled(nil, 2) }},
		{"Exp", recv, func() { null.Exp() }},
		{"Clamp", recv, func() { null.Clamp(0, 1) }},
		{"MulScalar", recv, func() { null.MulScalar(2) }},
		{"DivScalar", recv, func() { null.DivScalar(2) }},
		{"GtScalar", recv, func() { null.GtScalar(2) }},
		{"Cast", recv, func() { null.Cast(tensor.Int32) }},
		{"Where", pos1, func() { tensor.Where(nil, x, x) }},
		{"Where", pos3, func() { tensor.Where(x.GtScalar(0), x, nil) }},
		{"Addcmul", pos2, func() { tensor.Addcmul(x, nil, x, 1) }},
		{"MaskedFill", pos1, func() { x.MaskedFill(nil, 0) }},
		{"MatMul", pos1, func() { x.MatMul(nil) }},
		{"MatMul", recv, func() { null.MatMul(x) }},
		{"Outer", pos1, func() { x.Outer(nil) }},
		{"Cat", "tensor 1 of the list is a nil", func() { tensor.Cat([]*T{x, nil}, 0) }},
		{"Stack", "tensor 0 of the list is a nil", func() { tensor.Stack([]*T{nil, x}, 0) }},
		{"IndexSelect", pos2, func() { x.IndexSelect(0, nil) }},
		{"IndexSelect", recv, func() { null.IndexSelect(0, idx) }},
		{"Gather", pos2, func() { x.Gather(0, nil) }},
		{"ScatterAdd", pos3, func() { x.ScatterAdd(0, idx.Reshape(2, 1), nil) }},
		{"IndexAdd", pos3, func() { x.IndexAdd(0, idx, nil) }},
		{"IndexAmax", pos3, func() { x.IndexAmax(0, idx, nil) }},
		{"IndexAmax", pos2, func() { x.IndexAmax(0, nil, x) }},
		{"SliceScatter", pos1, func() { tensor.SliceScatter(nil, []int{3}, 0, 0, 1, 1) }},
		{"OneHot", pos1, func() { tensor.OneHot(nil, 3) }},
		{"Sum", recv, func() { null.Sum() }},
		{"Mean", recv, func() { null.Mean() }},
		{"MaxDim", recv, func() { null.MaxDim(0, false) }},
		{"ArgMax", recv, func() { null.ArgMax() }},
		{"Var", recv, func() { null.Var(nil, 1, false) }},
		{"LogSumExp", recv, func() { null.LogSumExp(nil, false) }},
		{"Norm", recv, func() { null.Norm(2, nil, false) }},
		{"Softmax", recv, func() { null.Softmax(0) }},
		{"CumSum", recv, func() { null.CumSum(0) }},
		{"View", recv, func() { null.View(6) }},
		{"Reshape", recv, func() { null.Reshape(6) }},
		{"Transpose", recv, func() { null.Transpose(0, 1) }},
		{"Expand", recv, func() { null.Expand(2, 3) }},
		{"Slice", recv, func() { null.Slice(0, 0, 1, 1) }},
		{"Select", recv, func() { null.Select(0, 0) }},
		{"Clone", recv, func() { null.Clone() }},
		{"Split", recv, func() { null.Split(1, 0) }},
		{"AddInPlace", pos1, func() { x.Clone().AddInPlace(nil, 1) }},
		{"AddcmulInPlace", pos2, func() { x.Clone().AddcmulInPlace(x, nil, 1) }},
		{"CopyFrom", pos1, func() { x.Clone().CopyFrom(nil) }},
		{"Fill", recv, func() { null.Fill(1) }},
		{"ZerosLike", pos1, func() { tensor.ZerosLike(nil) }},
		{"RandLike", pos1, func() { tensor.RandLike(nil) }},
		{"Bernoulli", pos1, func() { tensor.Bernoulli(nil) }},
		{"Multinomial", pos1, func() { tensor.Multinomial(nil, 1, true) }},
		{"Float32s", recv, func() { null.Float32s() }},
		{"Item", recv, func() { null.Item() }},
		{"To", recv, func() { null.To(tensor.CPU) }},
		{"SetGrad", recv, func() { null.SetGrad(x) }},
	}
	for _, c := range cases {
		expectBad(t, "", []badCase{{c.op + " " + c.want, tensor.ErrArgument, c.f, []string{"tensor." + c.op, c.want}}})
	}
}

// TestInvalidDTypesAndDevices: a DType or Device built from a bad
// integer is rejected where it enters (ErrDType, ErrDevice), and
// ParseDevice rejects malformed strings with an ErrDevice *Error.
func TestInvalidDTypesAndDevices(t *testing.T) {
	bad := tensor.DType(42)
	expectBad(t, "", []badCase{
		{"Zeros of dtype 42", tensor.ErrDType, func() { tensor.Zeros([]int{2}, tensor.Of(bad)) }, []string{"tensor.Full", "unknown dtype 42"}},
		{"Rand of dtype 42", tensor.ErrDType, func() { tensor.Rand([]int{2}, tensor.Of(bad)) }, []string{"tensor.Rand"}},
		{"Arange of dtype 42", tensor.ErrDType, func() { tensor.Arange(0, 3, 1, tensor.Of(bad)) }, []string{"tensor.Arange"}},
		{"Eye of dtype 42", tensor.ErrDType, func() { tensor.Eye(2, tensor.Of(bad)) }, []string{"tensor.Eye"}},
		{"Cast to dtype 42", tensor.ErrDType, func() { tensor.Ones([]int{2}).Cast(bad) }, []string{"tensor.Cast"}},
		{"ZerosLike of dtype 42", tensor.ErrDType, func() { tensor.ZerosLike(tensor.Ones([]int{2}), tensor.Of(bad)) }, nil},
		{"Zeros on GPU(-1)", tensor.ErrDevice, func() { tensor.Zeros([]int{2}, tensor.On(tensor.GPU(-1))) }, []string{"tensor.Full", "gpu:-1"}},
		{"Zeros on a device of kind 9", tensor.ErrDevice, func() { tensor.Zeros([]int{2}, tensor.On(tensor.Device{Kind: 9})) }, []string{"unknown device kind 9"}},
		{"To(GPU(-1))", tensor.ErrDevice, func() { tensor.Ones([]int{2}).To(tensor.GPU(-1)) }, []string{"tensor.To"}},
		{"a nil Option", tensor.ErrArgument, func() { tensor.Zeros([]int{2}, nil) }, []string{"nil Option"}},
	})
	if err := tensor.Available(tensor.GPU(-1)); err == nil {
		t.Error("Available(GPU(-1)) = nil")
	}
	if _, err := tensor.GPUDevice(tensor.GPU(-2)); err == nil {
		t.Error("GPUDevice(GPU(-2)) opened a device")
	}
	var syncErr error
	if err := tensor.Catch(func() { syncErr = tensor.Sync(tensor.GPU(-1)) }); err == nil && syncErr == nil {
		t.Error("Sync(GPU(-1)) succeeded")
	}
	for _, s := range []string{"gpu:-1", "gpu:+1", "gpu: 1", "gpu:01", "gpu:", "gpu:1x", "gpu:99999999999999999999", "cuda", "", "cpu:1", "gpu1"} {
		d, err := tensor.ParseDevice(s)
		var te *tensor.Error
		if err == nil || !errors.As(err, &te) || te.Err != tensor.ErrDevice {
			t.Errorf("ParseDevice(%q) = %v, %v; want an ErrDevice *Error", s, d, err)
		}
	}
	for s, want := range map[string]tensor.Device{"cpu": tensor.CPU, " GPU ": tensor.GPU(0), "gpu:0": tensor.GPU(0), "gpu:12": tensor.GPU(12)} {
		if d, err := tensor.ParseDevice(s); err != nil || d != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
}

// TestSetGradChecksTheGradient: SetGrad takes only a gradient of the
// tensor's shape, dtype and device (PyTorch: "assigned grad has data of
// a different size/type/device").
func TestSetGradChecksTheGradient(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		p := tensor.Zeros([]int{2, 3}, tensor.On(dev)).SetRequiresGrad(true)
		cases := []badCase{
			{"another shape", tensor.ErrShape, func() { p.SetGrad(tensor.Zeros([]int{3, 2}, tensor.On(dev))) }, []string{"tensor.SetGrad"}},
			{"Int32", tensor.ErrDType, func() { p.SetGrad(tensor.Zeros([]int{2, 3}, tensor.On(dev), tensor.Of(tensor.Int32))) }, []string{"tensor.SetGrad", "int32"}},
		}
		if dev == tensor.CPU {
			cases = append(cases, badCase{"Float64", tensor.ErrDType, func() { p.SetGrad(tensor.Zeros([]int{2, 3}, tensor.Of(tensor.Float64))) }, nil})
		} else {
			cases = append(cases, badCase{"on the CPU", tensor.ErrDevice, func() { p.SetGrad(tensor.Zeros([]int{2, 3})) }, []string{"device"}})
		}
		expectBad(t, dev.String()+": SetGrad of ", cases)
		if p.Grad() != nil {
			t.Errorf("%v: a refused gradient was stored", dev)
		}
		g := tensor.Ones([]int{2, 3}, tensor.On(dev))
		p.SetGrad(g)
		if p.Grad() != g {
			t.Errorf("%v: a valid gradient was not stored", dev)
		}
	}
}

// TestIndexOpsOnZeroDimTensors: as in PyTorch, Gather, ScatterAdd and
// IndexAdd treat a 0-d operand as 1-D when the others are at most 1-D;
// Select, Narrow, Split and Chunk of a 0-d tensor are ErrIndex.
func TestIndexOpsOnZeroDimTensors(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		on := tensor.On(dev)
		s := func(v float64) *tensor.Tensor { return tensor.Full(nil, v, on) }
		i := func(v ...int32) *tensor.Tensor {
			if len(v) == 1 {
				return tensor.Full(nil, float64(v[0]), on, tensor.Of(tensor.Int32))
			}
			return tensor.New(v).To(dev)
		}
		vec := tensor.New([]float32{5, 6}).To(dev)
		for _, c := range []struct {
			name  string
			f     func() *tensor.Tensor
			shape []int
			want  []float64
		}{
			{"gather(tensor(5.), 0, tensor(0))", func() *tensor.Tensor { return s(5).Gather(0, i(0)) }, []int{}, []float64{5}},
			{"gather(tensor(5.), -1, tensor(0))", func() *tensor.Tensor { return s(5).Gather(-1, i(0)) }, []int{}, []float64{5}},
			{"gather(tensor(5.), 0, tensor([0, 0]))", func() *tensor.Tensor { return s(5).Gather(0, i(0, 0)) }, []int{2}, []float64{5, 5}},
			{"gather(tensor([5., 6.]), 0, tensor(1))", func() *tensor.Tensor { return vec.Gather(0, i(1)) }, []int{}, []float64{6}},
			{"tensor(5.).scatter_add(0, tensor(0), tensor(2.))", func() *tensor.Tensor { return s(5).ScatterAdd(0, i(0), s(2)) }, []int{}, []float64{7}},
			{"tensor(5.).scatter_add(0, tensor([0, 0]), tensor([2., 3.]))", func() *tensor.Tensor {
				return s(5).ScatterAdd(0, i(0, 0), tensor.New([]float32{2, 3}).To(dev))
			}, []int{}, []float64{10}},
			{"tensor([5., 6.]).scatter_add(0, tensor(1), tensor(2.))", func() *tensor.Tensor { return vec.ScatterAdd(0, i(1), s(2)) }, []int{2}, []float64{5, 8}},
			{"tensor(5.).index_add(0, tensor(0), tensor(2.))", func() *tensor.Tensor { return s(5).IndexAdd(0, i(0), s(2)) }, []int{}, []float64{7}},
			{"tensor(5.).index_add(0, tensor([0, 0]), tensor([2., 3.]))", func() *tensor.Tensor {
				return s(5).IndexAdd(0, i(0, 0), tensor.New([]float32{2, 3}).To(dev))
			}, []int{}, []float64{10}},
			{"tensor([5., 6.]).index_add(0, tensor(1), tensor(2.))", func() *tensor.Tensor { return vec.IndexAdd(0, i(1), s(2)) }, []int{2}, []float64{5, 8}},
		} {
			var got *tensor.Tensor
			err, bug := catchAny(func() { got = c.f() })
			if err != nil || bug != nil {
				t.Errorf("%v: %s: %v %v", dev, c.name, err, bug)
				continue
			}
			if !slices.Equal(got.Shape(), c.shape) || !slices.Equal(got.Float64s(), c.want) {
				t.Errorf("%v: %s = %v %v, want %v %v (torch)", dev, c.name, got.Shape(), got.Float64s(), c.shape, c.want)
			}
		}
		expectBad(t, dev.String()+": ", []badCase{
			{"Select of a 0-d tensor", tensor.ErrIndex, func() { s(5).Select(0, 0) }, []string{"tensor.Select", "0-d"}},
			{"Select(-1) of a 0-d tensor", tensor.ErrIndex, func() { s(5).Select(-1, 0) }, []string{"tensor.Select"}},
			{"Narrow of a 0-d tensor", tensor.ErrIndex, func() { s(5).Narrow(0, 0, 1) }, []string{"tensor.Narrow"}},
			{"Split of a 0-d tensor", tensor.ErrIndex, func() { s(5).Split(1, 0) }, []string{"tensor.Split"}},
			{"Chunk of a 0-d tensor", tensor.ErrIndex, func() { s(5).Chunk(1, 0) }, []string{"tensor.Chunk"}},
			{"SplitSizes of a 0-d tensor", tensor.ErrIndex, func() { s(5).SplitSizes([]int{1}, 0) }, []string{"tensor.SplitSizes"}},
			{"Slice of a 0-d tensor", tensor.ErrIndex, func() { s(5).Slice(0, 0, 1, 1) }, []string{"tensor.Slice"}},
			{"gather(tensor(5.), 0, tensor(1))", tensor.ErrIndex, func() { s(5).Gather(0, i(1)).Float64s() }, []string{"tensor.Gather"}},
			{"gather(tensor(5.), 1, tensor(0))", tensor.ErrIndex, func() { s(5).Gather(1, i(0)) }, []string{"tensor.Gather"}},
			{"gather(tensor(5.), 0, tensor([[0]]))", tensor.ErrShape, func() { s(5).Gather(0, tensor.New([]int32{0}, 1, 1).To(dev)) }, []string{"tensor.Gather"}},
			{"tensor(5.).index_add(0, tensor([1]), tensor(2.))", tensor.ErrIndex, func() { s(5).IndexAdd(0, i(1, 1).Narrow(0, 0, 1), s(2)).Float64s() }, []string{"tensor.IndexAdd"}},
			{"SplitSizes with a negative size", tensor.ErrArgument, func() { vec.SplitSizes([]int{-1, 3}, 0) }, []string{"tensor.SplitSizes"}},
			{"SplitSizes that overflow", tensor.ErrShape, func() { vec.SplitSizes([]int{math.MaxInt, math.MaxInt, 4}, 0) }, []string{"tensor.SplitSizes"}},
		})
	}
}

// TestSliceScatterChecksItsArguments: SliceScatter follows Slice's
// rules (torch.slice_scatter of zeros) and never writes outside the
// result.
func TestSliceScatterChecksItsArguments(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		one := func(n int) *tensor.Tensor { return tensor.Ones([]int{n}, tensor.On(dev)) }
		for _, c := range []struct {
			name                   string
			src                    *tensor.Tensor
			start, end, step, want int
			vals                   []float64
		}{
			// torch.zeros(3).slice_scatter(torch.ones(1), 0, -1, None) = [0, 0, 1]
			{"negative start", one(1), -1, math.MaxInt, 1, 0, []float64{0, 0, 1}},
			// torch.zeros(3).slice_scatter(torch.ones(2), 0, 0, None, 2) = [1, 0, 1]
			{"step 2", one(2), 0, math.MaxInt, 2, 0, []float64{1, 0, 1}},
			// torch.zeros(3).slice_scatter(torch.ones(1), 0, -10, 1, 1) = [1, 0, 0]
			{"start before the beginning", one(1), -10, 1, 1, 0, []float64{1, 0, 0}},
			// torch.zeros(3).slice_scatter(torch.zeros(0), 0, 5, 6) = [0, 0, 0]
			{"empty slice past the end", one(0), 5, 6, 1, 0, []float64{0, 0, 0}},
		} {
			var got []float64
			err, bug := catchAny(func() { got = tensor.SliceScatter(c.src, []int{3}, 0, c.start, c.end, c.step).Float64s() })
			if err != nil || bug != nil || !slices.Equal(got, c.vals) {
				t.Errorf("%v: SliceScatter %s = %v (%v %v), want %v", dev, c.name, got, err, bug, c.vals)
			}
		}
		expectBad(t, dev.String()+": SliceScatter ", []badCase{
			{"with a start past the end", tensor.ErrShape, func() { tensor.SliceScatter(one(1), []int{3}, 0, 5, 6, 1) }, []string{"tensor.SliceScatter", "[0]"}},
			{"with end before start", tensor.ErrShape, func() { tensor.SliceScatter(one(2), []int{3}, 0, 2, 0, 1) }, nil},
			{"with step 0", tensor.ErrArgument, func() { tensor.SliceScatter(one(2), []int{3}, 0, 0, 3, 0) }, []string{"step"}},
			{"with step -1", tensor.ErrArgument, func() { tensor.SliceScatter(one(2), []int{3}, 0, 0, 3, -1) }, nil},
			{"along dim 3", tensor.ErrIndex, func() { tensor.SliceScatter(one(2), []int{3}, 3, 0, 2, 1) }, nil},
			{"into a 0-d shape", tensor.ErrIndex, func() { tensor.SliceScatter(one(1), nil, 0, 0, 1, 1) }, nil},
			{"into a negative shape", tensor.ErrShape, func() { tensor.SliceScatter(one(1), []int{-3}, 0, 0, 1, 1) }, nil},
			{"with a huge step", tensor.ErrShape, func() { tensor.SliceScatter(one(2), []int{3}, 0, 0, 3, math.MaxInt) }, nil},
		})
	}
}

// TestNonFiniteArguments: NaN, ±Inf and out-of-range parameters of
// random ops and Norm are ErrArgument, as PyTorch rejects them.
func TestNonFiniteArguments(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, dev := range devtest.Devices(t) {
		p := func(v ...float32) *tensor.Tensor { return tensor.New(v).To(dev) }
		expectBad(t, dev.String()+": ", []badCase{
			// torch.multinomial: "probability tensor contains either `inf`, `nan` or element < 0"
			{"Multinomial with NaN", tensor.ErrArgument, func() { tensor.Multinomial(p(float32(nan), 1), 1, true) }, []string{"tensor.Multinomial", "nan"}},
			{"Multinomial with Inf", tensor.ErrArgument, func() { tensor.Multinomial(p(float32(inf), 1), 1, false) }, nil},
			{"Multinomial with a negative weight", tensor.ErrArgument, func() { tensor.Multinomial(p(-1, 1), 1, true) }, nil},
			// "invalid multinomial distribution (sum of probabilities <= 0)"
			{"Multinomial of an all-zero row", tensor.ErrArgument, func() { tensor.Multinomial(tensor.New([]float32{1, 1, 0, 0}, 2, 2).To(dev), 1, true) }, []string{"sum"}},
			{"Multinomial of no categories", tensor.ErrArgument, func() { tensor.Multinomial(p(), 1, true) }, nil},
			// torch.bernoulli: "Expected p_in >= 0 && p_in <= 1"
			{"Bernoulli(NaN)", tensor.ErrArgument, func() { tensor.Bernoulli(p(0.5, float32(nan))) }, []string{"tensor.Bernoulli"}},
			{"Bernoulli(Inf)", tensor.ErrArgument, func() { tensor.Bernoulli(p(float32(inf))) }, nil},
			{"Norm with p = NaN", tensor.ErrArgument, func() { p(1, 2).Norm(nan, nil, false) }, []string{"tensor.Norm"}},
			{"Uniform(-Inf, -Inf)", tensor.ErrArgument, func() { tensor.Uniform([]int{2}, math.Inf(-1), math.Inf(-1), tensor.On(dev)) }, nil},
			{"Uniform(NaN, 1)", tensor.ErrArgument, func() { tensor.Uniform([]int{2}, nan, 1, tensor.On(dev)) }, nil},
			{"Normal with std NaN", tensor.ErrArgument, func() { tensor.Normal([]int{2}, 0, nan, tensor.On(dev)) }, nil},
		})
	}
}

// TestPromoteTypesRejectsUnknownDTypes: PromoteTypes of a DType that is
// none of the four is ErrDType, not a made-up answer.
func TestPromoteTypesRejectsUnknownDTypes(t *testing.T) {
	expectBad(t, "", []badCase{
		{"PromoteTypes(42, Float32)", tensor.ErrDType, func() { tensor.PromoteTypes(42, tensor.Float32) }, []string{"unknown dtype 42"}},
		{"PromoteTypes(Int32, 200)", tensor.ErrDType, func() { tensor.PromoteTypes(tensor.Int32, 200) }, nil},
	})
}
