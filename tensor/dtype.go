package tensor

import "math"

// A DType is the element type of a tensor.
type DType uint8

// The element types. Float64 lives on the CPU only (WGSL has no f64).
// Int32 is Tessera's integer and index type: where PyTorch returns int64
// (ArgMax, integer Sum, Arange of integers), Tessera returns Int32.
const (
	Float32 DType = iota
	Float64
	Int32
	Bool
	numDTypes
)

var dtypeNames = [...]string{Float32: "float32", Float64: "float64", Int32: "int32", Bool: "bool"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "dtype(?)"
}

// valid reports whether d is one of the four dtypes.
func (d DType) valid() bool { return d < numDTypes }

// checkDType panics with ErrDType for op when d is none of the dtypes
// (a DType converted from a bad integer).
func checkDType(op string, d DType, ts ...*Tensor) {
	if !d.valid() {
		failf(op, ErrDType, ts, "unknown dtype %d: want Float32, Float64, Int32 or Bool", uint8(d))
	}
}

// isInt32 reports whether v is a whole number in int32's range: the
// scalars an integer tensor can take without becoming a float tensor.
// Go cannot tell 2 from 2.0, so a whole float64 counts as an integer;
// fractions, NaN, ±Inf and whole numbers beyond int32 count as floats,
// as PyTorch's Python floats do.
func isInt32(v float64) bool {
	return v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32
}

// checkScalar panics with ErrArgument for op when v cannot be converted
// to dt without overflow, as PyTorch's "value cannot be converted to type
// int32 without overflow": for Int32, NaN, ±Inf and values whose
// integer part lies outside int32 (fractions truncate toward zero); for
// Float32, finite values beyond float32's range. Every value fits
// Float64 and Bool.
func checkScalar(op string, v float64, dt DType, ts ...*Tensor) {
	ok := true
	switch dt {
	case Int32:
		ok = isInt32(math.Trunc(v))
	case Float32:
		ok = math.IsInf(v, 0) || !math.IsInf(float64(float32(v)), 0)
	}
	if !ok {
		failf(op, ErrArgument, ts, "value %g cannot be converted to type %v without overflow", v, dt)
	}
}

// Size returns the bytes one element takes on the device (bool is stored
// as one byte on the CPU and four on the GPU; Size reports the CPU size).
func (d DType) Size() int {
	switch d {
	case Float64:
		return 8
	case Bool:
		return 1
	}
	return 4
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// category orders dtypes as PyTorch's promotion does: bool < integer < float.
func (d DType) category() int {
	switch d {
	case Bool:
		return 0
	case Int32:
		return 1
	}
	return 2
}

// PromoteTypes returns the type two tensor operands are computed in,
// following torch.promote_types: bool < int32 < float32 < float64. It
// panics with ErrDType for a value that is none of the dtypes.
func PromoteTypes(a, b DType) DType {
	checkDType("PromoteTypes", a)
	checkDType("PromoteTypes", b)
	if a == b {
		return a
	}
	if a.category() != b.category() {
		if a.category() > b.category() {
			return a
		}
		return b
	}
	if a == Float64 || b == Float64 {
		return Float64
	}
	return a
}

// promoteScalar returns the type of an op between a tensor of type d and
// a Go scalar: a float scalar lifts bool and integer tensors to the
// default float type (Float32), as PyTorch's wrapped numbers do; otherwise
// the tensor's type wins.
func promoteScalar(d DType, scalarIsFloat bool) DType {
	if scalarIsFloat && !d.IsFloat() {
		return Float32
	}
	if d == Bool && !scalarIsFloat {
		return Int32
	}
	return d
}

// floatType returns d if it is a float type, else Float32: the type that
// float-valued ops (Exp, Mean, Div) compute integer inputs in.
func floatType(d DType) DType {
	if d.IsFloat() {
		return d
	}
	return Float32
}
