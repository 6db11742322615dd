package tensor_test

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

var allDTypes = []tensor.DType{tensor.Bool, tensor.Int32, tensor.Float32, tensor.Float64}

// torchPromote is torch.promote_types over {bool, int32, float32,
// float64}², printed by PyTorch 1.13 (python3-torch 1.13.1+dfsg-4):
//
//	for a in ts: for b in ts: print(a, b, torch.promote_types(a, b))
var torchPromote = map[[2]tensor.DType]tensor.DType{
	{tensor.Bool, tensor.Bool}:       tensor.Bool,
	{tensor.Bool, tensor.Int32}:      tensor.Int32,
	{tensor.Bool, tensor.Float32}:    tensor.Float32,
	{tensor.Bool, tensor.Float64}:    tensor.Float64,
	{tensor.Int32, tensor.Bool}:      tensor.Int32,
	{tensor.Int32, tensor.Int32}:     tensor.Int32,
	{tensor.Int32, tensor.Float32}:   tensor.Float32,
	{tensor.Int32, tensor.Float64}:   tensor.Float64,
	{tensor.Float32, tensor.Bool}:    tensor.Float32,
	{tensor.Float32, tensor.Int32}:   tensor.Float32,
	{tensor.Float32, tensor.Float32}: tensor.Float32,
	{tensor.Float32, tensor.Float64}: tensor.Float64,
	{tensor.Float64, tensor.Bool}:    tensor.Float64,
	{tensor.Float64, tensor.Int32}:   tensor.Float64,
	{tensor.Float64, tensor.Float32}: tensor.Float64,
	{tensor.Float64, tensor.Float64}: tensor.Float64,
}

func TestPromoteTypesMatchesTorch(t *testing.T) {
	for _, a := range allDTypes {
		for _, b := range allDTypes {
			want := torchPromote[[2]tensor.DType{a, b}]
			if got := tensor.PromoteTypes(a, b); got != want {
				t.Errorf("PromoteTypes(%v, %v) = %v, torch.promote_types gives %v", a, b, got, want)
			}
		}
	}
}

// Binary ops compute in the promoted type; true division of integers
// gives Float32 and comparisons give Bool. (Arithmetic on two bools is
// left out: PyTorch gives bool for Mul and refuses Sub.)
func TestBinaryOpResultDTypes(t *testing.T) {
	for _, a := range allDTypes {
		for _, b := range allDTypes {
			x := tensor.Ones([]int{2}, tensor.Of(a))
			y := tensor.Ones([]int{2}, tensor.Of(b))
			p := tensor.PromoteTypes(a, b)
			arith := p
			if p == tensor.Bool {
				continue
			}
			div := p
			if !p.IsFloat() {
				div = tensor.Float32
			}
			for name, c := range map[string]struct {
				got  *tensor.Tensor
				want tensor.DType
			}{
				"Mul": {x.Mul(y), arith},
				"Sub": {x.Sub(y), arith},
				"Div": {x.Div(y), div},
				"Lt":  {x.Lt(y), tensor.Bool},
			} {
				if c.got.DType() != c.want {
					t.Errorf("%v %s %v gives %v, want %v", a, name, b, c.got.DType(), c.want)
				}
			}
		}
	}
}

// torch.result_type(tensor, scalar) with a Python scalar, from PyTorch
// 1.13: a float scalar lifts bool and integer tensors to the default
// float type; an integer scalar lifts bool to the integer type (int64 in
// PyTorch, Int32 here); otherwise the tensor's type wins. Go cannot tell
// 2 from 2.0, so Tessera treats a whole-number float64 as an integer.
func TestDTypeScalarPromotion(t *testing.T) {
	cases := []struct {
		dt        tensor.DType
		intResult tensor.DType // tensor + 2
		fltResult tensor.DType // tensor + 2.5
	}{
		{tensor.Bool, tensor.Int32, tensor.Float32},
		{tensor.Int32, tensor.Int32, tensor.Float32},
		{tensor.Float32, tensor.Float32, tensor.Float32},
		{tensor.Float64, tensor.Float64, tensor.Float64},
	}
	for _, c := range cases {
		x := tensor.Ones([]int{3}, tensor.Of(c.dt))
		if got := x.AddScalar(2).DType(); got != c.intResult {
			t.Errorf("%v + 2 gives %v, want %v", c.dt, got, c.intResult)
		}
		if got := x.MulScalar(2).DType(); got != c.intResult {
			t.Errorf("%v * 2 gives %v, want %v", c.dt, got, c.intResult)
		}
		if got := x.AddScalar(2.5).DType(); got != c.fltResult {
			t.Errorf("%v + 2.5 gives %v, want %v", c.dt, got, c.fltResult)
		}
		if got := x.MulScalar(0.5).DType(); got != c.fltResult {
			t.Errorf("%v * 0.5 gives %v, want %v", c.dt, got, c.fltResult)
		}
		if got := x.EqScalar(2.5).DType(); got != tensor.Bool {
			t.Errorf("%v == 2.5 gives %v, want bool", c.dt, got)
		}
	}
	// The comparison itself happens in the promoted type: 1 < 1.5 on an
	// integer tensor, not 1 < int32(1.5).
	if !tensor.Ones([]int{1}, tensor.Of(tensor.Int32)).LtScalar(1.5).Bools()[0] {
		t.Error("int32 1 < 1.5 is false: the scalar was truncated")
	}
	if got := tensor.Ones([]int{2}, tensor.Of(tensor.Int32)).MulScalar(0.5).Float64s(); got[0] != 0.5 {
		t.Errorf("int32 1 * 0.5 = %v, want 0.5", got[0])
	}
}

func TestDTypeProperties(t *testing.T) {
	for _, c := range []struct {
		dt    tensor.DType
		name  string
		size  int
		float bool
	}{
		{tensor.Float32, "float32", 4, true},
		{tensor.Float64, "float64", 8, true},
		{tensor.Int32, "int32", 4, false},
		{tensor.Bool, "bool", 1, false},
	} {
		if c.dt.String() != c.name || c.dt.Size() != c.size || c.dt.IsFloat() != c.float {
			t.Errorf("%v: String %q Size %d IsFloat %v, want %q %d %v", c.name, c.dt.String(), c.dt.Size(), c.dt.IsFloat(), c.name, c.size, c.float)
		}
	}
	if s := tensor.DType(200).String(); s != "dtype(?)" {
		t.Errorf("an unknown dtype prints %q", s)
	}
}
