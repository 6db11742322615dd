package opspec

import (
	"math"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// binarySpecs are the specs of the binary elementwise ops, and ternarySpecs
// those of the ternary ones. WGSL's division is 2.5 ulp, pow_ a few.
var binarySpecs = []Spec{
	{Op: tensor.OpAdd, Call: call2((*tensor.Tensor).Add), Ref: ref2(func(x, y float64) float64 { return x + y }), Torch: torch("add")},
	{Op: tensor.OpSub, Call: call2((*tensor.Tensor).Sub), Ref: ref2(func(x, y float64) float64 { return x - y }), Torch: torch("sub")},
	{Op: tensor.OpMul, Call: call2((*tensor.Tensor).Mul), Ref: ref2(func(x, y float64) float64 { return x * y }), Torch: torch("mul")},
	{Op: tensor.OpDiv, Call: call2((*tensor.Tensor).Div), Ref: ref2(func(x, y float64) float64 { return x / y }), Tol: approx.AbsRel(0, 3e-7), Torch: torch("div", "div_scalar")},
	{Op: tensor.OpPow, Call: call2((*tensor.Tensor).Pow), Ref: ref2(math.Pow), Domain: [][2]float64{{0.1, 3}, {-2, 2}}, Tol: approx.AbsRel(0, 5e-6), Torch: torch("pow")},
	{Op: tensor.OpMaximum, Call: call2((*tensor.Tensor).Maximum), Ref: ref2(nanOr(math.Max)), NaN: true, Torch: torch("maximum")},
	{Op: tensor.OpMinimum, Call: call2((*tensor.Tensor).Minimum), Ref: ref2(nanOr(math.Min)), NaN: true, Torch: torch("minimum")},
	// ReLUBackward is ReLU's gradient rule: the relu cases' gradients,
	// their NaN and kink cases included, check it against PyTorch's.
	{Op: tensor.OpReLUBackward, Call: call2(tensor.ReLUBackward), Ref: ref2(func(g, y float64) float64 {
		if y <= 0 {
			return 0
		}
		return g
	}), NaN: true, Via: &RefExemption{Via: torch("relu"), Note: "relu gradients"}},
	{Op: tensor.OpEq, Call: call2((*tensor.Tensor).Eq), Ref: ref2(func(x, y float64) float64 { return b2f(x == y) }), Whole: true, NaN: true, Torch: torch("eq")},
	{Op: tensor.OpNe, Call: call2((*tensor.Tensor).Ne), Ref: ref2(func(x, y float64) float64 { return b2f(x != y) }), Whole: true, NaN: true, Torch: torch("ne")},
	{Op: tensor.OpLt, Call: call2((*tensor.Tensor).Lt), Ref: ref2(func(x, y float64) float64 { return b2f(x < y) }), Whole: true, NaN: true, Torch: torch("lt")},
	{Op: tensor.OpLe, Call: call2((*tensor.Tensor).Le), Ref: ref2(func(x, y float64) float64 { return b2f(x <= y) }), Whole: true, NaN: true, Torch: torch("le")},
	{Op: tensor.OpGt, Call: call2((*tensor.Tensor).Gt), Ref: ref2(func(x, y float64) float64 { return b2f(x > y) }), Whole: true, NaN: true, Torch: torch("gt")},
	{Op: tensor.OpGe, Call: call2((*tensor.Tensor).Ge), Ref: ref2(func(x, y float64) float64 { return b2f(x >= y) }), Whole: true, NaN: true, Torch: torch("ge")},
	// LogicalAnd builds Clamp's gradient mask (lo <= x && x <= hi).
	{Op: tensor.OpLogicalAnd, Call: call2((*tensor.Tensor).LogicalAnd), Ref: ref2(func(x, y float64) float64 { return b2f(x != 0 && y != 0) }),
		Via: &RefExemption{Via: torch("clamp"), Note: "clamp gradients"}},
	// LogicalOr builds the tie mask of Maximum's and Minimum's gradients.
	{Op: tensor.OpLogicalOr, Call: call2((*tensor.Tensor).LogicalOr), Ref: ref2(func(x, y float64) float64 { return b2f(x != 0 || y != 0) }),
		Via: &RefExemption{Via: torch("maximum", "minimum"), Note: "maximum/minimum gradients"}},
}

// The optimizers' updates run tensor.Addcmul and tensor.Addcdiv (AddcmulInPlace,
// AddcdivInPlace, and tensor.Addcmul in centered RMSprop); optim.json checks
// them against torch.optim.
var (
	ternaryDomain = [][2]float64{{-3, 3}, {-3, 3}, {0.5, 2}}
	optimizerRefs = &RefExemption{Via: torch("adam", "adagrad", "rmsprop"), Note: "optimizer steps"}
	ternarySpecs  = []Spec{
		{Op: tensor.OpAddcmul, Family: "ternary", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return tensor.Addcmul(x, y, x, 0.5) },
			Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Addcmul(in[0], in[1], in[2], p[0])
			},
			Ref: func(p [2]float64, x ...float64) float64 { return x[0] + p[0]*x[1]*x[2] }, Domain: ternaryDomain, Tol: approx.AbsRel(1e-6, 1e-6), Via: optimizerRefs},
		{Op: tensor.OpAddcdiv, Family: "ternary", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return tensor.Addcdiv(x, x, y, 0.5) },
			Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Addcdiv(in[0], in[1], in[2], p[0])
			},
			Ref: func(p [2]float64, x ...float64) float64 { return x[0] + p[0]*x[1]/x[2] }, Domain: ternaryDomain, Tol: approx.AbsRel(1e-6, 1e-6), Via: optimizerRefs},
	}
)
