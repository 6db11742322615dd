package tensor

import (
	"math"

	"github.com/tessera-ml/tessera/internal/approx"
)

// binarySpecs are the specs of the binary elementwise ops, and ternarySpecs
// those of the ternary ones. WGSL's division is 2.5 ulp, pow_ a few.
var binarySpecs = append([]OpSpec{
	{Op: OpAdd, Call: call2((*Tensor).Add), Ref: ref2(func(x, y float64) float64 { return x + y }), Torch: torch("add")},
	{Op: OpSub, Call: call2((*Tensor).Sub), Ref: ref2(func(x, y float64) float64 { return x - y }), Torch: torch("sub")},
	{Op: OpMul, Call: call2((*Tensor).Mul), Ref: ref2(func(x, y float64) float64 { return x * y }), Torch: torch("mul")},
	{Op: OpDiv, Call: call2((*Tensor).Div), Ref: ref2(func(x, y float64) float64 { return x / y }), Tol: approx.AbsRel(0, 3e-7), Torch: torch("div", "div_scalar")},
	{Op: OpPow, Call: call2((*Tensor).Pow), Ref: ref2(math.Pow), Domain: [][2]float64{{0.1, 3}, {-2, 2}}, Tol: approx.AbsRel(0, 5e-6), Torch: torch("pow")},
	{Op: OpMaximum, Call: call2((*Tensor).Maximum), Ref: ref2(nanOr(math.Max)), NaN: true, Torch: torch("maximum")},
	{Op: OpMinimum, Call: call2((*Tensor).Minimum), Ref: ref2(nanOr(math.Min)), NaN: true, Torch: torch("minimum")},
	{Op: OpEq, Call: call2((*Tensor).Eq), Ref: ref2(func(x, y float64) float64 { return b2f(x == y) }), Whole: true, NaN: true, Torch: torch("eq")},
	{Op: OpNe, Call: call2((*Tensor).Ne), Ref: ref2(func(x, y float64) float64 { return b2f(x != y) }), Whole: true, NaN: true, Torch: torch("ne")},
	{Op: OpLt, Call: call2((*Tensor).Lt), Ref: ref2(func(x, y float64) float64 { return b2f(x < y) }), Whole: true, NaN: true, Torch: torch("lt")},
	{Op: OpLe, Call: call2((*Tensor).Le), Ref: ref2(func(x, y float64) float64 { return b2f(x <= y) }), Whole: true, NaN: true, Torch: torch("le")},
	{Op: OpGt, Call: call2((*Tensor).Gt), Ref: ref2(func(x, y float64) float64 { return b2f(x > y) }), Whole: true, NaN: true, Torch: torch("gt")},
	{Op: OpGe, Call: call2((*Tensor).Ge), Ref: ref2(func(x, y float64) float64 { return b2f(x >= y) }), Whole: true, NaN: true, Torch: torch("ge")},
	// LogicalAnd builds Clamp's gradient mask (lo <= x && x <= hi).
	{Op: OpLogicalAnd, Call: call2((*Tensor).LogicalAnd), Ref: ref2(func(x, y float64) float64 { return b2f(x != 0 && y != 0) }),
		Via: &RefExemption{Via: torch("clamp"), Note: "clamp gradients"}},
	// LogicalOr builds the tie mask of Maximum's and Minimum's gradients.
	{Op: OpLogicalOr, Call: call2((*Tensor).LogicalOr), Ref: ref2(func(x, y float64) float64 { return b2f(x != 0 || y != 0) }),
		Via: &RefExemption{Via: torch("maximum", "minimum"), Note: "maximum/minimum gradients"}},
}, ternarySpecs...)

// The optimizers' updates run Addcmul and Addcdiv (AddcmulInPlace,
// AddcdivInPlace, and Addcmul in centered RMSprop); optim.json checks
// them against torch.optim.
var (
	ternaryDomain = [][2]float64{{-3, 3}, {-3, 3}, {0.5, 2}}
	optimizerRefs = &RefExemption{Via: torch("adam", "adagrad", "rmsprop"), Note: "optimizer steps"}
	ternarySpecs  = []OpSpec{
		{Op: OpAddcmul, Family: "ternary", Cover: func(x, y *Tensor) *Tensor { return Addcmul(x, y, x, 0.5) },
			Call: func(p [2]float64, in ...*Tensor) *Tensor { return Addcmul(in[0], in[1], in[2], p[0]) },
			Ref:  func(p [2]float64, x ...float64) float64 { return x[0] + p[0]*x[1]*x[2] }, Domain: ternaryDomain, Tol: approx.AbsRel(1e-6, 1e-6), Via: optimizerRefs},
		{Op: OpAddcdiv, Family: "ternary", Cover: func(x, y *Tensor) *Tensor { return Addcdiv(x, x, y, 0.5) },
			Call: func(p [2]float64, in ...*Tensor) *Tensor { return Addcdiv(in[0], in[1], in[2], p[0]) },
			Ref:  func(p [2]float64, x ...float64) float64 { return x[0] + p[0]*x[1]/x[2] }, Domain: ternaryDomain, Tol: approx.AbsRel(1e-6, 1e-6), Via: optimizerRefs},
	}
)
