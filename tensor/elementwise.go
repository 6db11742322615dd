package tensor

import (
	"math"
	"slices"
)

// unary runs a one-input elementwise op on every device.
func (x *Tensor) unary(op Op, p ...float64) *Tensor {
	defer allocatedFor(op.String())
	x.nonNil(op.String(), 0)
	x.storage(op.String())
	dt := op.info().computeType(x.dtype, allInt32(p))
	x = x.Cast(dt)
	var params [2]float64
	copy(params[:], p)
	if dt == Float32 { // PyTorch rounds scalars to the tensor's type first, as the GPU must
		params[0], params[1] = float64(float32(params[0])), float64(float32(params[1]))
	}
	ins := []*Tensor{x}
	out := fuse(op, params, dt, dt, x.shape, x)
	if out == nil {
		out = newResult(dt, x.shape, x.Device(), ins)
		backendOf(x.Device()).unary(op, params, out, x)
	}
	return record(out, op, Attrs{Scalars: slices.Clone(p)}, ins...)
}

// allInt32 reports whether every scalar is an int32 value (isInt32), so
// that an integer tensor can stay integer (see opInfo.computeType).
func allInt32(p []float64) bool {
	return !slices.ContainsFunc(p, func(v float64) bool { return !isInt32(v) })
}

// Neg returns -x.
func (x *Tensor) Neg() *Tensor { return x.unary(OpNeg) }

// Abs returns |x|.
func (x *Tensor) Abs() *Tensor { return x.unary(OpAbs) }

// Sign returns -1, 0 or 1 by the sign of each element.
func (x *Tensor) Sign() *Tensor { return x.unary(OpSign) }

// Exp returns eˣ.
func (x *Tensor) Exp() *Tensor { return x.unary(OpExp) }

// Expm1 returns eˣ − 1, accurate for small x (torch.expm1).
func (x *Tensor) Expm1() *Tensor { return x.unary(OpExpm1) }

// Log returns the natural logarithm.
func (x *Tensor) Log() *Tensor { return x.unary(OpLog) }

// Log1p returns log(1+x), accurate for small x.
func (x *Tensor) Log1p() *Tensor { return x.unary(OpLog1p) }

// Sqrt returns √x.
func (x *Tensor) Sqrt() *Tensor { return x.unary(OpSqrt) }

// Rsqrt returns 1/√x.
func (x *Tensor) Rsqrt() *Tensor { return x.unary(OpRsqrt) }

// Square returns x².
func (x *Tensor) Square() *Tensor { return x.unary(OpSquare) }

// Sin returns sin x.
func (x *Tensor) Sin() *Tensor { return x.unary(OpSin) }

// Cos returns cos x.
func (x *Tensor) Cos() *Tensor { return x.unary(OpCos) }

// Tanh returns tanh x.
func (x *Tensor) Tanh() *Tensor { return x.unary(OpTanh) }

// Sigmoid returns 1/(1+e⁻ˣ).
func (x *Tensor) Sigmoid() *Tensor { return x.unary(OpSigmoid) }

// ReLU returns max(x, 0); NaN stays NaN.
func (x *Tensor) ReLU() *Tensor { return x.unary(OpReLU) }

// GELU returns x·Φ(x) with Φ the standard normal CDF (PyTorch's default,
// exact form).
func (x *Tensor) GELU() *Tensor { return x.unary(OpGELU) }

// GELUTanh returns GELU's tanh approximation,
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as
// torch.nn.functional.gelu(x, approximate="tanh"). It is composed of
// primitive ops, so its gradient comes from theirs.
func (x *Tensor) GELUTanh() *Tensor {
	x.nonNil("GELUTanh", 0)
	x = x.Cast(floatType(x.dtype))
	inner := x.Add(x.Square().Mul(x).MulScalar(0.044715)).MulScalar(math.Sqrt(2 / math.Pi))
	return x.MulScalar(0.5).Mul(inner.Tanh().AddScalar(1))
}

// SiLU returns x·sigmoid(x).
func (x *Tensor) SiLU() *Tensor { return x.unary(OpSiLU) }

// Softplus returns log(1+e^(βx))/β, or x where βx > threshold, as
// torch.nn.functional.softplus (defaults β=1, threshold=20).
func (x *Tensor) Softplus(beta, threshold float64) *Tensor {
	return x.unary(OpSoftplus, beta, threshold)
}

// Erf returns the error function.
func (x *Tensor) Erf() *Tensor { return x.unary(OpErf) }

// PowScalar returns x raised to the power p. As in PyTorch, p = 0.5 is
// Sqrt and p = -0.5 is Rsqrt (so (-Inf)^0.5 is NaN, not +Inf as in
// math.Pow).
func (x *Tensor) PowScalar(p float64) *Tensor {
	switch p {
	case 0.5:
		return x.Sqrt()
	case -0.5:
		return x.Rsqrt()
	}
	return x.unary(OpPowScalar, p)
}

// Clamp limits x to [lo, hi]; use math.Inf for a missing bound. NaN
// stays NaN, and a NaN bound makes every element NaN, as in PyTorch. An
// integer x stays integer when each bound is missing or an int32 value.
// It panics with ErrArgument when lo > hi or when a finite bound does
// not fit a Float32 result.
func (x *Tensor) Clamp(lo, hi float64) *Tensor {
	x.nonNil("Clamp", 0)
	if lo > hi {
		failf("Clamp", ErrArgument, []*Tensor{x}, "min %g is greater than max %g", lo, hi)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return x.MulScalar(0).AddScalar(math.NaN()) // NaN, with clamp's zero gradient
	}
	bounds := clampBounds(lo, hi)
	dt := OpClamp.info().computeType(x.dtype, allInt32(bounds))
	if dt == Int32 {
		lo, hi = bounds[0], bounds[1]
	}
	for _, b := range []float64{lo, hi} {
		checkScalar("Clamp", b, dt, x)
	}
	return x.unary(OpClamp, lo, hi)
}

// clampBounds returns Clamp's bounds with a missing one (±Inf) replaced
// by int32's extreme, which clamps no int32 value.
func clampBounds(lo, hi float64) []float64 {
	b := []float64{lo, hi}
	for i, v := range b {
		switch {
		case math.IsInf(v, 1):
			b[i] = math.MaxInt32
		case math.IsInf(v, -1):
			b[i] = math.MinInt32
		}
	}
	return b
}

// ClampMin limits x from below.
func (x *Tensor) ClampMin(lo float64) *Tensor { return x.Clamp(lo, math.Inf(1)) }

// ClampMax limits x from above.
func (x *Tensor) ClampMax(hi float64) *Tensor { return x.Clamp(math.Inf(-1), hi) }

// AddScalar returns x + s. An integer tensor stays integer when s is an
// int32 value (Go cannot tell 2 from 2.0; PyTorch would promote for 2.0)
// and becomes Float32 otherwise (0.5, 3e9, NaN), as for the other
// scalar ops.
func (x *Tensor) AddScalar(s float64) *Tensor { return x.unary(OpAddScalar, s) }

// SubScalar returns x - s.
func (x *Tensor) SubScalar(s float64) *Tensor { return x.unary(OpAddScalar, -s) }

// MulScalar returns x · s.
func (x *Tensor) MulScalar(s float64) *Tensor { return x.unary(OpMulScalar, s) }

// DivScalar returns x / s with a true division, as PyTorch computes it
// (s is first rounded to x's dtype; x · (1/s) would differ in the last
// bit); integer tensors give Float32.
func (x *Tensor) DivScalar(s float64) *Tensor {
	x.nonNil("DivScalar", 0)
	if !x.dtype.IsFloat() {
		x = x.Cast(Float32)
	}
	return x.Div(filled("DivScalar", nil, s, options{dtype: x.dtype, device: x.Device(), ctx: x.Context()}))
}

// RSub returns s - x.
func (x *Tensor) RSub(s float64) *Tensor { return x.Neg().AddScalar(s) }

// binary runs a two-input elementwise op with broadcasting and type
// promotion, on every device.
func (x *Tensor) binary(op Op, y *Tensor) *Tensor {
	name := op.String()
	defer allocatedFor(name)
	x.nonNil(name, 1, y)
	x.storage(name)
	y.storage(name)
	if x.Device() != y.Device() {
		fail(name, ErrDevice, "operands are on different devices", x, y)
	}
	row := op.info()
	dt := row.computeType(PromoteTypes(x.dtype, y.dtype), true)
	outDT := row.outType(dt)
	shape := broadcastShapes(name, []*Tensor{x, y})
	x, y = x.Cast(dt), y.Cast(dt)
	ins := []*Tensor{x, y}
	xb, yb := x.broadcastView(shape), y.broadcastView(shape)
	out := fuse(op, [2]float64{}, dt, outDT, shape, xb, yb)
	if out == nil {
		out = newResult(outDT, shape, x.Device(), ins)
		backendOf(x.Device()).binary(op, out, xb, yb)
	}
	return record(out, op, Attrs{}, ins...)
}

// Add returns x + y with broadcasting.
func (x *Tensor) Add(y *Tensor) *Tensor { return x.binary(OpAdd, y) }

// AddScaled returns x + alpha·y, as torch.add(x, y, alpha=alpha).
func (x *Tensor) AddScaled(y *Tensor, alpha float64) *Tensor {
	x.nonNil("AddScaled", 1, y)
	if alpha == 1 {
		return x.Add(y)
	}
	return x.Add(y.MulScalar(alpha))
}

// Sub returns x - y with broadcasting.
func (x *Tensor) Sub(y *Tensor) *Tensor { return x.binary(OpSub, y) }

// SubScaled returns x - alpha·y, as torch.sub(x, y, alpha=alpha).
func (x *Tensor) SubScaled(y *Tensor, alpha float64) *Tensor {
	x.nonNil("SubScaled", 1, y)
	if alpha == 1 {
		return x.Sub(y)
	}
	return x.Sub(y.MulScalar(alpha))
}

// Mul returns x · y with broadcasting.
func (x *Tensor) Mul(y *Tensor) *Tensor { return x.binary(OpMul, y) }

// Div returns x / y with broadcasting (true division: integers give Float32).
func (x *Tensor) Div(y *Tensor) *Tensor { return x.binary(OpDiv, y) }

// Pow returns x raised to y, elementwise with broadcasting.
func (x *Tensor) Pow(y *Tensor) *Tensor { return x.binary(OpPow, y) }

// ReLUBackward returns grad where y > 0 or y is NaN, and 0 where y <= 0,
// with broadcasting: the gradient of ReLU at its output y, in one pass
// (PyTorch's threshold_backward(grad, y, 0)). Integer operands compute
// in Float32.
func ReLUBackward(grad, y *Tensor) *Tensor {
	argsNonNil("ReLUBackward", 1, grad, y)
	return grad.binary(OpReLUBackward, y)
}

// Maximum returns the elementwise maximum; NaN if either is NaN.
func (x *Tensor) Maximum(y *Tensor) *Tensor { return x.binary(OpMaximum, y) }

// Minimum returns the elementwise minimum; NaN if either is NaN.
func (x *Tensor) Minimum(y *Tensor) *Tensor { return x.binary(OpMinimum, y) }

// Eq returns x == y as a Bool tensor.
func (x *Tensor) Eq(y *Tensor) *Tensor { return x.binary(OpEq, y) }

// Ne returns x != y as a Bool tensor.
func (x *Tensor) Ne(y *Tensor) *Tensor { return x.binary(OpNe, y) }

// Lt returns x < y as a Bool tensor.
func (x *Tensor) Lt(y *Tensor) *Tensor { return x.binary(OpLt, y) }

// Le returns x <= y as a Bool tensor.
func (x *Tensor) Le(y *Tensor) *Tensor { return x.binary(OpLe, y) }

// Gt returns x > y as a Bool tensor.
func (x *Tensor) Gt(y *Tensor) *Tensor { return x.binary(OpGt, y) }

// Ge returns x >= y as a Bool tensor.
func (x *Tensor) Ge(y *Tensor) *Tensor { return x.binary(OpGe, y) }

// LogicalAnd returns x AND y (inputs read as bool: non-zero is true).
func (x *Tensor) LogicalAnd(y *Tensor) *Tensor { return x.binary(OpLogicalAnd, y) }

// LogicalOr returns x OR y.
func (x *Tensor) LogicalOr(y *Tensor) *Tensor { return x.binary(OpLogicalOr, y) }

// LogicalNot returns NOT x (x == 0).
func (x *Tensor) LogicalNot() *Tensor { return x.EqScalar(0) }

// scalarLike returns the 0-d tensor v with x's dtype (or Float32 for an
// integer x and a v that is no int32 value) on x's device, for a
// comparison, in x's context: a v beyond float32's range becomes ±Inf,
// which compares as v does with every finite float32.
func (x *Tensor) scalarLike(op string, v float64) *Tensor {
	x.nonNil(op, 0)
	return filled(op, nil, v, options{dtype: promoteScalar(x.dtype, !isInt32(v)), device: x.Device(), ctx: x.Context()})
}

// EqScalar returns x == v as a Bool tensor; the other comparisons with a
// scalar follow.
func (x *Tensor) EqScalar(v float64) *Tensor { return x.Eq(x.scalarLike("EqScalar", v)) }

// NeScalar returns x != v.
func (x *Tensor) NeScalar(v float64) *Tensor { return x.Ne(x.scalarLike("NeScalar", v)) }

// LtScalar returns x < v.
func (x *Tensor) LtScalar(v float64) *Tensor { return x.Lt(x.scalarLike("LtScalar", v)) }

// LeScalar returns x <= v.
func (x *Tensor) LeScalar(v float64) *Tensor { return x.Le(x.scalarLike("LeScalar", v)) }

// GtScalar returns x > v.
func (x *Tensor) GtScalar(v float64) *Tensor { return x.Gt(x.scalarLike("GtScalar", v)) }

// GeScalar returns x >= v.
func (x *Tensor) GeScalar(v float64) *Tensor { return x.Ge(x.scalarLike("GeScalar", v)) }

// Where returns x where cond is true and y elsewhere, broadcasting all
// three (torch.where). cond must be Bool.
func Where(cond, x, y *Tensor) *Tensor {
	operands("Where", cond, x, y)
	if cond.dtype != Bool {
		fail("Where", ErrDType, "the condition must be a Bool tensor", cond, x, y)
	}
	dt := PromoteTypes(x.dtype, y.dtype)
	x, y = x.Cast(dt), y.Cast(dt)
	shape := broadcastShapes("Where", []*Tensor{cond, x, y})
	cb, xb, yb := cond.broadcastView(shape), x.broadcastView(shape), y.broadcastView(shape)
	out := fuse(OpWhere, [2]float64{}, dt, dt, shape, cb, xb, yb)
	if out == nil {
		out = newTensor(dt, shape, x.Device())
		backendOf(x.Device()).where(out, cb, xb, yb)
	}
	if dt == Int32 { // indices picked from two known ranges stay in their union
		if xl, xh, _, ok := x.ref.s.knownIndexRange(); ok {
			if yl, yh, _, ok := y.ref.s.knownIndexRange(); ok {
				out.ref.s.setIndexRange(min(xl, yl), max(xh, yh), false)
			}
		}
	}
	return record(out, OpWhere, Attrs{}, cond, x, y)
}

// MaskedFill returns x with value wherever mask (Bool, broadcastable to
// x) is true. It panics with ErrArgument when value does not fit x's
// dtype (see Full).
func (x *Tensor) MaskedFill(mask *Tensor, value float64) *Tensor {
	x.nonNil("MaskedFill", 1, mask)
	x.storage("MaskedFill")
	checkScalar("MaskedFill", value, x.dtype, x)
	out := Where(mask, filled("MaskedFill", nil, value, options{dtype: x.dtype, device: x.Device(), ctx: x.Context()}), x)
	if !slices.Equal(out.shape, x.shape) {
		fail("MaskedFill", ErrShape, "the mask must broadcast to the tensor's shape", x, mask)
	}
	return out
}

// Addcmul returns a + value·b·c with broadcasting (torch.addcmul).
func Addcmul(a, b, c *Tensor, value float64) *Tensor { return ternary(OpAddcmul, a, b, c, value) }

// Addcdiv returns a + value·b/c with broadcasting (torch.addcdiv).
func Addcdiv(a, b, c *Tensor, value float64) *Tensor { return ternary(OpAddcdiv, a, b, c, value) }

func ternary(op Op, a, b, c *Tensor, value float64) *Tensor {
	name := op.String()
	defer allocatedFor(name)
	operands(name, a, b, c)
	dt := op.info().computeType(PromoteTypes(PromoteTypes(a.dtype, b.dtype), c.dtype), true)
	a, b, c = a.Cast(dt), b.Cast(dt), c.Cast(dt)
	shape := broadcastShapes(name, []*Tensor{a, b, c})
	ins := []*Tensor{a, b, c}
	ab, bb, cb := a.broadcastView(shape), b.broadcastView(shape), c.broadcastView(shape)
	out := fuse(op, [2]float64{value}, dt, dt, shape, ab, bb, cb)
	if out == nil {
		out = newResult(dt, shape, a.Device(), ins)
		backendOf(a.Device()).ternary(op, value, out, ab, bb, cb)
	}
	return record(out, op, Attrs{Scalars: []float64{value}}, ins...)
}

// Cast returns x converted to dt (x itself when it already has dt).
// Floats to Int32 truncate toward zero; anything to Bool is x != 0.
// Gradients flow through casts between float types.
func (x *Tensor) Cast(dt DType) *Tensor {
	x.nonNil("Cast", 0)
	if x.dtype == dt {
		return x
	}
	checkDType("Cast", dt, x)
	x.storage("Cast")
	checkHoldsDType("Cast", x.Device(), dt, "", x)
	out := fuseCast(x, dt)
	if out == nil {
		out = newTensor(dt, x.shape, x.Device())
		backendOf(x.Device()).cast(out, x)
	}
	if !dt.IsFloat() || !x.dtype.IsFloat() {
		settle(out, []*Tensor{x}, nil)
		return out
	}
	return record(out, OpCast, Attrs{DType: dt}, x)
}

// Float returns x as Float32.
func (x *Tensor) Float() *Tensor { return x.Cast(Float32) }

// Double returns x as Float64 (CPU only).
func (x *Tensor) Double() *Tensor { return x.Cast(Float64) }
