package tensor

import (
	"math"
	"slices"
)

// In-place ops write into t's own storage and bump its version counter,
// so autograd notices if a tensor it saved was changed. They are meant
// for optimizer updates under NoGrad: with grad mode on they refuse
// tensors that require grad, as PyTorch refuses leaves.

// checkInPlace validates t as the target of an in-place op and returns
// the operands, cast to t's dtype, broadcast to t's shape, and copied
// first when they overlap t with another layout; and src, the view the
// op reads t's values through (t, or its old memory when pending results
// read t: see detachReaders), with done to call once the op is recorded.
func (t *Tensor) checkInPlace(op string, operands ...*Tensor) (src *Tensor, ys []*Tensor, done func()) {
	t.nonNil(op, 1, operands...)
	t.storage(op)
	if t.requiresGrad && t.Context().gradOn(op) {
		fail(op, ErrInPlace, "a tensor that requires grad cannot be modified in place while grad mode is on; "+
			"wrap the update in tensor.NoGrad or use the out-of-place op", t)
	}
	for i, s := range t.strides {
		if s == 0 && t.shape[i] > 1 && t.Numel() > 0 {
			fail(op, ErrInPlace, "more than one element of the written-to tensor refers to a single memory location "+
				"(an expanded view); call Clone first", t)
		}
	}
	out := make([]*Tensor, len(operands))
	for i, y := range operands {
		y.storage(op)
		if y.Device() != t.Device() {
			fail(op, ErrDevice, "operands are on different devices", t, y)
		}
		if !broadcastsTo(y.shape, t.shape) {
			fail(op, ErrShape, "the operand must broadcast to the target's shape", t, y)
		}
		if y.dtype != t.dtype { // a cast of its own, recorded by nothing
			y = y.Detach().Cast(t.dtype)
		}
		if y.SharesStorage(t) && (y.offset != t.offset || !slices.Equal(y.strides, t.strides) || !slices.Equal(y.shape, t.shape)) {
			y = y.Clone()
		}
		out[i] = y.broadcastView(t.shape)
	}
	src, done = t.detachReaders(out) // pending results that read t see it as it is now
	return src, out, done
}

// inPlaceNames holds each op's name with "InPlace", made once rather
// than by a concatenation per call (backward sums gradients in place).
var inPlaceNames = func() (names [numOps]string) {
	for op := range names {
		names[op] = Op(op).String() + "InPlace"
	}
	return names
}()

// broadcastsTo reports whether shape broadcasts to target, NumPy
// style, as broadcastShapes of the two giving target would, without
// allocating.
func broadcastsTo(shape, target []int) bool {
	lead := len(target) - len(shape)
	if lead < 0 {
		return false
	}
	for i, d := range shape {
		if d != target[lead+i] && d != 1 {
			return false
		}
	}
	return true
}

// checkResultType panics with ErrDType for the in-place op name when op
// would compute t's dtype (with scalars p) in another dtype, which t
// cannot hold: PyTorch's "result type Float can't be cast to the desired
// output type Int" (an integer tensor divided, or given a float scalar;
// a bool tensor added to).
func (t *Tensor) checkResultType(name string, op Op, p ...float64) {
	ct := op.info().computeType(t.dtype, allInt32(p))
	if ct == t.dtype {
		return
	}
	if !allInt32(p) {
		failf(name, ErrDType, []*Tensor{t}, "result type %v (of the scalar %g) can't be cast to the tensor's %v", ct, p[0], t.dtype)
	}
	failf(name, ErrDType, []*Tensor{t}, "result type %v can't be cast to the tensor's %v", ct, t.dtype)
}

func (t *Tensor) binaryInPlace(op Op, y *Tensor) *Tensor {
	name := inPlaceNames[op]
	t.nonNil(name, 1, y)
	t.checkResultType(name, op)
	src, ys, done := t.checkInPlace(name, y)
	defer done()
	if !extendPending(op, [2]float64{}, t, src, ys[0]) && !deferInPlace(op, [2]float64{}, t, src, ys[0]) &&
		!fuseInPlace(op, [2]float64{}, t, src, ys[0]) {
		backendOf(t.Device()).binary(op, t, src, ys[0])
	}
	t.bumpVersion()
	return t
}

func (t *Tensor) unaryInPlace(name string, op Op, p0, p1 float64) *Tensor {
	t.nonNil(name, 0)
	t.checkResultType(name, op, p0, p1)
	src, _, done := t.checkInPlace(name)
	defer done()
	if !extendPending(op, [2]float64{p0, p1}, t, src) {
		backendOf(t.Device()).unary(op, [2]float64{p0, p1}, t, src)
	}
	t.bumpVersion()
	return t
}

func (t *Tensor) ternaryInPlace(name string, op Op, b, c *Tensor, value float64) *Tensor {
	t.nonNil(name, 1, b, c)
	t.checkResultType(name, op)
	src, ys, done := t.checkInPlace(name, b, c)
	defer done()
	if !extendPending(op, [2]float64{value}, t, src, ys[0], ys[1]) && !deferInPlace(op, [2]float64{value}, t, src, ys[0], ys[1]) &&
		!fuseInPlace(op, [2]float64{value}, t, src, ys[0], ys[1]) {
		backendOf(t.Device()).ternary(op, value, t, src, ys[0], ys[1])
	}
	t.bumpVersion()
	return t
}

// AddInPlace adds alpha·y to t in place (torch's t.add_(y, alpha=alpha))
// and returns t. A float t with alpha ≠ 1 takes one pass, t + alpha·y·1
// (Addcmul with a broadcast one, alpha rounded to t's dtype as PyTorch
// rounds it), with no temporary: an optimizer's update of a parameter.
func (t *Tensor) AddInPlace(y *Tensor, alpha float64) *Tensor {
	t.nonNil("AddInPlace", 1, y)
	if alpha != 1 && t.dtype.IsFloat() {
		t.storage("AddInPlace")
		one := filled("AddInPlace", nil, 1, options{dtype: t.dtype, device: t.Device(), ctx: t.Context()})
		defer one.Release()
		return t.ternaryInPlace("AddInPlace", OpAddcmul, y, one, alpha)
	}
	if alpha != 1 {
		y = y.Detach().MulScalar(alpha)
	}
	return t.binaryInPlace(OpAdd, y)
}

// SubInPlace subtracts y from t in place.
func (t *Tensor) SubInPlace(y *Tensor) *Tensor { return t.binaryInPlace(OpSub, y) }

// MulInPlace multiplies t by y in place.
func (t *Tensor) MulInPlace(y *Tensor) *Tensor { return t.binaryInPlace(OpMul, y) }

// DivInPlace divides t by y in place.
func (t *Tensor) DivInPlace(y *Tensor) *Tensor { return t.binaryInPlace(OpDiv, y) }

// AddScalarInPlace adds s to t in place.
func (t *Tensor) AddScalarInPlace(s float64) *Tensor {
	return t.unaryInPlace("AddScalarInPlace", OpAddScalar, s, 0)
}

// MulScalarInPlace multiplies t by s in place.
func (t *Tensor) MulScalarInPlace(s float64) *Tensor {
	return t.unaryInPlace("MulScalarInPlace", OpMulScalar, s, 0)
}

// ClampInPlace limits t to [lo, hi] in place, with Clamp's rules: ±Inf
// is a missing bound, a NaN bound makes every element NaN; an integer t
// takes only int32 bounds (ErrDType otherwise, as PyTorch's clamp_).
func (t *Tensor) ClampInPlace(lo, hi float64) *Tensor {
	t.nonNil("ClampInPlace", 0)
	if lo > hi {
		failf("ClampInPlace", ErrArgument, []*Tensor{t}, "min %g is greater than max %g", lo, hi)
	}
	if t.dtype.IsFloat() && (math.IsNaN(lo) || math.IsNaN(hi)) {
		return t.Fill(math.NaN())
	}
	if !t.dtype.IsFloat() && !math.IsNaN(lo) && !math.IsNaN(hi) {
		b := clampBounds(lo, hi)
		lo, hi = b[0], b[1]
	}
	return t.unaryInPlace("ClampInPlace", OpClamp, lo, hi)
}

// CopyFrom copies src (broadcast to t's shape, cast to t's dtype) into t.
// A pending src (an optimizer's state update, m.CopyFrom(m·β + g·(1-β)),
// say) is computed straight into t, one fused kernel, reading t's old
// values (copy on write, detachReaders).
func (t *Tensor) CopyFrom(src *Tensor) *Tensor {
	_, ys, done := t.checkInPlace("CopyFrom", src)
	defer done()
	copyInto(backendOf(t.Device()), t, ys[0])
	t.bumpVersion()
	return t
}

// Fill sets every element of t to v. It panics with ErrArgument when v
// does not fit t's dtype (see Full).
func (t *Tensor) Fill(v float64) *Tensor {
	t.nonNil("Fill", 0)
	checkScalar("Fill", v, t.dtype, t)
	_, _, done := t.checkInPlace("Fill")
	defer done()
	backendOf(t.Device()).fill(t, v)
	t.bumpVersion()
	return t
}

// Zero sets t to zeros in place.
func (t *Tensor) Zero() *Tensor { return t.Fill(0) }

// AddcmulInPlace adds value·b·c to t (torch's addcmul_).
func (t *Tensor) AddcmulInPlace(b, c *Tensor, value float64) *Tensor {
	return t.ternaryInPlace("AddcmulInPlace", OpAddcmul, b, c, value)
}

// AddcdivInPlace adds value·b/c to t (torch's addcdiv_).
func (t *Tensor) AddcdivInPlace(b, c *Tensor, value float64) *Tensor {
	return t.ternaryInPlace("AddcdivInPlace", OpAddcdiv, b, c, value)
}
