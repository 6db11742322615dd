package tensor_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// check fails t unless x has the shape, dtype and values given.
func check(t *testing.T, what string, x *tensor.Tensor, shape []int, dt tensor.DType, want []float64) {
	t.Helper()
	if !slices.Equal(x.Shape(), shape) || x.DType() != dt || x.Device() != tensor.CPU {
		t.Errorf("%s: %v %v on %v, want %v %v on cpu", what, x.Shape(), x.DType(), x.Device(), shape, dt)
		return
	}
	if got := x.Float64s(); !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestCreateFilled(t *testing.T) {
	check(t, "Zeros", tensor.Zeros([]int{2, 3}), []int{2, 3}, tensor.Float32, []float64{0, 0, 0, 0, 0, 0})
	check(t, "Ones float64", tensor.Ones([]int{3}, tensor.Of(tensor.Float64)), []int{3}, tensor.Float64, []float64{1, 1, 1})
	check(t, "Full", tensor.Full([]int{2, 1}, -2.5), []int{2, 1}, tensor.Float32, []float64{-2.5, -2.5})
	check(t, "Full int32", tensor.Full([]int{2}, 7, tensor.Of(tensor.Int32)), []int{2}, tensor.Int32, []float64{7, 7})
	check(t, "Full bool", tensor.Full([]int{2}, 2, tensor.Of(tensor.Bool)), []int{2}, tensor.Bool, []float64{1, 1})
	check(t, "Zeros 0-d", tensor.Zeros(nil), []int{}, tensor.Float32, []float64{0})
	check(t, "Ones with a zero dim", tensor.Ones([]int{3, 0}), []int{3, 0}, tensor.Float32, []float64{})
	check(t, "Scalar", tensor.Scalar(4, tensor.Int32, tensor.CPU), []int{}, tensor.Int32, []float64{4})

	// The shape is copied, not aliased.
	shape := []int{2, 2}
	x := tensor.Zeros(shape)
	shape[0] = 5
	if !slices.Equal(x.Shape(), []int{2, 2}) {
		t.Errorf("changing the caller's shape slice changed the tensor: %v", x.Shape())
	}
	if x.IsContiguous() != true || x.Offset() != 0 || !slices.Equal(x.Strides(), []int{2, 1}) {
		t.Errorf("a new tensor is not contiguous: strides %v offset %d", x.Strides(), x.Offset())
	}
}

func TestCreateLike(t *testing.T) {
	base := tensor.Arange(0, 6, 1).Reshape(2, 3) // Int32
	check(t, "ZerosLike", tensor.ZerosLike(base), []int{2, 3}, tensor.Int32, []float64{0, 0, 0, 0, 0, 0})
	check(t, "OnesLike", tensor.OnesLike(base), []int{2, 3}, tensor.Int32, []float64{1, 1, 1, 1, 1, 1})
	check(t, "FullLike", tensor.FullLike(base, 3), []int{2, 3}, tensor.Int32, []float64{3, 3, 3, 3, 3, 3})
	check(t, "ZerosLike Of(Float64)", tensor.ZerosLike(base, tensor.Of(tensor.Float64)), []int{2, 3}, tensor.Float64, []float64{0, 0, 0, 0, 0, 0})
	f := tensor.Zeros([]int{4, 1}, tensor.Of(tensor.Float64))
	for name, x := range map[string]*tensor.Tensor{"RandLike": tensor.RandLike(f), "RandnLike": tensor.RandnLike(f)} {
		if !slices.Equal(x.Shape(), []int{4, 1}) || x.DType() != tensor.Float64 {
			t.Errorf("%s: %v %v, want [4 1] float64", name, x.Shape(), x.DType())
		}
	}
	// *Like of a view: the view's shape, a fresh contiguous tensor.
	v := tensor.ZerosLike(base.T())
	if !slices.Equal(v.Shape(), []int{3, 2}) || !v.IsContiguous() || v.SharesStorage(base) {
		t.Errorf("ZerosLike of a transposed view: shape %v contiguous %v shares %v", v.Shape(), v.IsContiguous(), v.SharesStorage(base))
	}
}

func TestCreateFromData(t *testing.T) {
	check(t, "New 1-D", tensor.New([]float32{1, 2, 3}), []int{3}, tensor.Float32, []float64{1, 2, 3})
	check(t, "New 2-D int32", tensor.New([]int32{1, 2, 3, 4, 5, 6}, 3, 2), []int{3, 2}, tensor.Int32, []float64{1, 2, 3, 4, 5, 6})
	check(t, "New bool", tensor.New([]bool{true, false}), []int{2}, tensor.Bool, []float64{1, 0})
	check(t, "New 0-d", tensor.New([]float64{7}, []int{}...), []int{}, tensor.Float64, []float64{7})
	check(t, "FromInts", tensor.FromInts([]int{-1, 2}), []int{2}, tensor.Int32, []float64{-1, 2})
	check(t, "FromInt64s", tensor.FromInt64s([]int64{math.MaxInt32, math.MinInt32}, 2, 1), []int{2, 1}, tensor.Int32, []float64{math.MaxInt32, math.MinInt32})
	data := []float32{1, 2}
	x := tensor.New(data)
	data[0] = 9
	if x.Float32s()[0] != 1 {
		t.Error("New aliases the caller's slice")
	}
}

// Arange's dtype: Int32 for whole-number arguments (PyTorch: int64),
// Float32 otherwise, unless Of says. Values as torch.arange gives them.
func TestCreateArange(t *testing.T) {
	check(t, "Arange(0, 5, 1)", tensor.Arange(0, 5, 1), []int{5}, tensor.Int32, []float64{0, 1, 2, 3, 4})
	check(t, "Arange(0, 10, 3)", tensor.Arange(0, 10, 3), []int{4}, tensor.Int32, []float64{0, 3, 6, 9})
	check(t, "Arange(5, 0, -1)", tensor.Arange(5, 0, -1), []int{5}, tensor.Int32, []float64{5, 4, 3, 2, 1})
	check(t, "Arange(0, 0, 1)", tensor.Arange(0, 0, 1), []int{0}, tensor.Int32, []float64{})
	check(t, "Arange(0, 1, 0.25)", tensor.Arange(0, 1, 0.25), []int{4}, tensor.Float32, []float64{0, 0.25, 0.5, 0.75})
	check(t, "Arange(1, 2.5, 0.5)", tensor.Arange(1, 2.5, 0.5), []int{3}, tensor.Float32, []float64{1, 1.5, 2})
	check(t, "Arange(0, 5, 1, Of(Float64))", tensor.Arange(0, 5, 1, tensor.Of(tensor.Float64)), []int{5}, tensor.Float64, []float64{0, 1, 2, 3, 4})
	// torch.arange(0, 0.3, 0.1): three elements, computed as start + i·step.
	a := tensor.Arange(0, 0.3, 0.1)
	if got, want := a.Float32s(), []float32{0, 0.1, 0.2}; !slices.Equal(got, want) {
		t.Errorf("Arange(0, 0.3, 0.1) = %v, want %v", got, want)
	}
	big := tensor.Arange(math.MaxInt32-2, math.MaxInt32+1, 1)
	if got := big.Int32s(); !slices.Equal(got, []int32{math.MaxInt32 - 2, math.MaxInt32 - 1, math.MaxInt32}) {
		t.Errorf("Arange up to MaxInt32 = %v", got)
	}
}

// torchLinspace32 holds torch.linspace(start, end, steps) in float32 as
// bit patterns, printed by PyTorch 1.13 (python3-torch 1.13.1+dfsg-4).
// PyTorch computes in float32; Tessera computes in float64 and rounds
// once, so values agree within one float32 ulp and both ends exactly.
var torchLinspace32 = []struct {
	start, end float64
	steps      int
	bits       []uint32
}{
	{0, 1, 7, []uint32{0, 1042983595, 1051372203, 1056964608, 1059760810, 1062557013, 1065353216}},
	{-1, 1, 5, []uint32{3212836864, 3204448256, 0, 1056964608, 1065353216}},
	{0, 10, 11, []uint32{0, 1065353216, 1073741824, 1077936128, 1082130432, 1084227584, 1086324736, 1088421888, 1090519040, 1091567616, 1092616192}},
	{1, 0, 6, []uint32{1065353216, 1061997773, 1058642330, 1053609165, 1045220557, 0}},
	{-3.5, 7.25, 33, []uint32{3227516928, 3226107904, 3224698880, 3223289856, 3221880832, 3219718144, 3216900096,
		3214082048, 3209691136, 3203661824, 3188719616, 1044905984, 1057488896, 1063124992, 1067057152, 1069875200,
		1072693248, 1074626560, 1076035584, 1077444608, 1078853632, 1080262656, 1081671680, 1082605568, 1083310080,
		1084014592, 1084719104, 1085423616, 1086128128, 1086832640, 1087537152, 1088241664, 1088946176}},
	{5, 5, 4, []uint32{1084227584, 1084227584, 1084227584, 1084227584}},
	{0, 1, 2, []uint32{0, 1065353216}},
	{0, 1, 1, []uint32{0}},
	{0, 1, 0, []uint32{}},
}

func TestCreateLinspaceMatchesTorch(t *testing.T) {
	for _, c := range torchLinspace32 {
		got := tensor.Linspace(c.start, c.end, c.steps).Float32s()
		if len(got) != len(c.bits) {
			t.Errorf("Linspace(%g, %g, %d) has %d elements, want %d", c.start, c.end, c.steps, len(got), len(c.bits))
			continue
		}
		for i, b := range c.bits {
			want := math.Float32frombits(b)
			ulp := math.Nextafter32(float32(math.Abs(float64(want))), float32(math.Inf(1))) - float32(math.Abs(float64(want)))
			if d := math.Abs(float64(got[i] - want)); d > float64(ulp) || ((i == 0 || i == len(got)-1) && got[i] != want) {
				t.Errorf("Linspace(%g, %g, %d)[%d] = %v, torch.linspace gives %v", c.start, c.end, c.steps, i, got[i], want)
			}
		}
	}
	// float64 computes like PyTorch's scalar loop: start + step·i for the
	// first half, end - step·(steps-1-i) for the second.
	got := tensor.Linspace(0, 1, 7, tensor.Of(tensor.Float64)).Float64s()
	want := []float64{0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666667, 0.8333333333333334, 1.0}
	if !slices.Equal(got, want) {
		t.Errorf("Linspace(0, 1, 7) in float64 = %v, torch gives %v", got, want)
	}
	// Integer dtypes truncate toward zero, as torch.linspace(-3, 4, 6,
	// dtype=torch.int32) = [-3, -1, 0, 1, 2, 4].
	check(t, "Linspace int32", tensor.Linspace(-3, 4, 6, tensor.Of(tensor.Int32)), []int{6}, tensor.Int32, []float64{-3, -1, 0, 1, 2, 4})
	check(t, "Linspace int32 (0, 10, 5)", tensor.Linspace(0, 10, 5, tensor.Of(tensor.Int32)), []int{5}, tensor.Int32, []float64{0, 2, 5, 7, 10})
}

func TestCreateEye(t *testing.T) {
	check(t, "Eye(3)", tensor.Eye(3), []int{3, 3}, tensor.Float32, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1})
	check(t, "Eye(2) int32", tensor.Eye(2, tensor.Of(tensor.Int32)), []int{2, 2}, tensor.Int32, []float64{1, 0, 0, 1})
	check(t, "Eye(2) bool", tensor.Eye(2, tensor.Of(tensor.Bool)), []int{2, 2}, tensor.Bool, []float64{1, 0, 0, 1})
	check(t, "Eye(0)", tensor.Eye(0), []int{0, 0}, tensor.Float32, []float64{})
}

func TestCreateMisuse(t *testing.T) {
	cases := []struct {
		name string
		kind error
		f    func()
	}{
		{"Zeros of a negative shape", tensor.ErrShape, func() { tensor.Zeros([]int{2, -1}) }},
		{"Arange with step 0", tensor.ErrArgument, func() { tensor.Arange(0, 5, 0) }},
		{"Arange with NaN", tensor.ErrArgument, func() { tensor.Arange(0, math.NaN(), 1) }},
		{"Arange with Inf", tensor.ErrArgument, func() { tensor.Arange(0, math.Inf(1), 1) }},
		{"Arange against the step's sign", tensor.ErrArgument, func() { tensor.Arange(5, 0, 1) }},
		{"Arange of too many elements", tensor.ErrArgument, func() { tensor.Arange(0, 3e9, 1) }},
		{"Arange beyond int32", tensor.ErrArgument, func() { tensor.Arange(math.MaxInt32, math.MaxInt32+2, 1) }},
		{"Linspace with negative steps", tensor.ErrArgument, func() { tensor.Linspace(0, 1, -1) }},
		{"Eye(-1)", tensor.ErrArgument, func() { tensor.Eye(-1) }},
		{"New with a negative shape", tensor.ErrShape, func() { tensor.New([]float32{}, 0, -1) }},
	}
	for _, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want an *Error wrapping %v", c.name, err, c.kind)
		}
	}
}

func TestDefaultDeviceParse(t *testing.T) {
	for s, want := range map[string]tensor.Device{
		"cpu": tensor.CPU, " CPU ": tensor.CPU, "gpu": tensor.GPU(0), "gpu:0": tensor.GPU(0), "GPU:3": tensor.GPU(3),
	} {
		d, err := tensor.ParseDevice(s)
		if err != nil || d != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
	for _, s := range []string{"", "tpu", "gpu:", "gpu:-1", "gpu:x", "cuda:0"} {
		if _, err := tensor.ParseDevice(s); err == nil {
			t.Errorf("ParseDevice(%q) succeeded", s)
		}
	}
	for _, d := range []tensor.Device{tensor.CPU, tensor.GPU(0), tensor.GPU(12)} {
		if back, err := tensor.ParseDevice(d.String()); err != nil || back != d {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", d, back, err, d)
		}
	}
}

func TestDefaultDeviceAvailable(t *testing.T) {
	if err := tensor.Available(tensor.CPU); err != nil {
		t.Errorf("Available(cpu) = %v", err)
	}
	if err := tensor.Available(unavailable); err == nil {
		t.Errorf("Available(%v) = nil", unavailable)
	}
	if err := tensor.Available(tensor.Device{Kind: 9}); err == nil {
		t.Error("Available of an unknown device kind = nil")
	}
}

func TestDefaultDevice(t *testing.T) {
	t.Run("cpu", func(t *testing.T) {
		t.Setenv("TESSERA_DEVICE", "cpu")
		d, info, err := tensor.DefaultDevice()
		if err != nil || d != tensor.CPU || !strings.Contains(info, "cpu") {
			t.Fatalf("TESSERA_DEVICE=cpu: %v %q %v", d, info, err)
		}
	})
	for _, v := range []string{"auto", "", " AUTO "} {
		t.Run("auto="+v, func(t *testing.T) {
			t.Setenv("TESSERA_DEVICE", v)
			d, info, err := tensor.DefaultDevice()
			if err != nil {
				t.Fatalf("TESSERA_DEVICE=%q: %v", v, err)
			}
			// Auto picks a real GPU when one opens, else the CPU, and says why.
			if !strings.Contains(info, d.String()) {
				t.Errorf("TESSERA_DEVICE=%q chose %v but says %q", v, d, info)
			}
			if d.Kind == tensor.KindGPU && tensor.Available(d) != nil {
				t.Errorf("auto chose %v, which is not available", d)
			}
		})
	}
	for _, v := range []string{"bad", "gpu:x", "cuda"} {
		t.Run("bad="+v, func(t *testing.T) {
			t.Setenv("TESSERA_DEVICE", v)
			if d, info, err := tensor.DefaultDevice(); err == nil {
				t.Fatalf("TESSERA_DEVICE=%q gave %v %q and no error", v, d, info)
			}
		})
	}
	t.Run("gpu", func(t *testing.T) {
		t.Setenv("TESSERA_DEVICE", "gpu")
		d, _, err := tensor.DefaultDevice()
		if avail := tensor.Available(tensor.GPU(0)); (avail == nil) != (err == nil) || (err == nil && d != tensor.GPU(0)) {
			t.Fatalf("TESSERA_DEVICE=gpu: got %v, %v; gpu:0 available: %v", d, err, avail)
		}
	})
	t.Run("unavailable", func(t *testing.T) {
		t.Setenv("TESSERA_DEVICE", unavailable.String())
		if d, _, err := tensor.DefaultDevice(); err == nil {
			t.Fatalf("TESSERA_DEVICE=%v chose %v without error", unavailable, d)
		}
	})
}
