package opspec

import (
	"math"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// unarySpecs are the specs of the unary elementwise ops. Tolerances are
// of float32 results against the float64 reference: WGSL's built-ins and
// the prelude's helpers are a few ulps off (exp, log, sin, tanh, erf_,
// log1p, pow_); integer arithmetic and selections are exact.
var unarySpecs = []Spec{
	{Op: tensor.OpNeg, Call: call1((*tensor.Tensor).Neg), Ref: ref1(func(x float64) float64 { return -x }), Domain: [][2]float64{{-10, 10}}, Torch: torch("neg")},
	{Op: tensor.OpAbs, Call: call1((*tensor.Tensor).Abs), Ref: ref1(math.Abs), Domain: [][2]float64{{-10, 10}}, Torch: torch("abs")},
	// sign(NaN) = 0.
	{Op: tensor.OpSign, Call: call1((*tensor.Tensor).Sign), Ref: ref1(func(x float64) float64 { return b2f(x > 0) - b2f(x < 0) }), Domain: [][2]float64{{-10, 10}}, NaN: true, Torch: torch("sign")},
	{Op: tensor.OpExp, Call: call1((*tensor.Tensor).Exp), Ref: ref1(math.Exp), Domain: [][2]float64{{-20, 20}}, Tol: approx.AbsRel(1e-30, 4e-6), Torch: torch("exp")},
	{Op: tensor.OpExpm1, Call: call1((*tensor.Tensor).Expm1), Ref: ref1(math.Expm1), Domain: [][2]float64{{-3, 3}}, Tiny: true, Tol: approx.AbsRel(1e-30, 2e-6), Torch: torch("expm1")},
	{Op: tensor.OpLog, Call: call1((*tensor.Tensor).Log), Ref: ref1(math.Log), Domain: [][2]float64{{1e-3, 1e3}}, Tol: approx.AbsRel(1e-6, 1e-6), Torch: torch("log")},
	{Op: tensor.OpLog1p, Call: call1((*tensor.Tensor).Log1p), Ref: ref1(math.Log1p), Domain: [][2]float64{{-0.999, 5}}, Tiny: true, Tol: approx.AbsRel(1e-7, 1e-6), Torch: torch("log1p")},
	{Op: tensor.OpSqrt, Call: call1((*tensor.Tensor).Sqrt), Ref: ref1(math.Sqrt), Domain: [][2]float64{{0, 1e3}}, Tol: approx.AbsRel(0, 1e-6), Torch: torch("sqrt")},
	{Op: tensor.OpRsqrt, Call: call1((*tensor.Tensor).Rsqrt), Ref: ref1(func(x float64) float64 { return 1 / math.Sqrt(x) }), Domain: [][2]float64{{1e-3, 1e3}}, Tol: approx.AbsRel(0, 1e-6), Torch: torch("rsqrt")},
	{Op: tensor.OpSquare, Call: call1((*tensor.Tensor).Square), Ref: ref1(func(x float64) float64 { return x * x }), Domain: [][2]float64{{-10, 10}}, Torch: torch("square")},
	{Op: tensor.OpSin, Call: call1((*tensor.Tensor).Sin), Ref: ref1(math.Sin), Domain: [][2]float64{{-10, 10}}, Tol: approx.AbsRel(2e-6, 0), Torch: torch("sin")},
	{Op: tensor.OpCos, Call: call1((*tensor.Tensor).Cos), Ref: ref1(math.Cos), Domain: [][2]float64{{-10, 10}}, Tol: approx.AbsRel(2e-6, 0), Torch: torch("cos")},
	{Op: tensor.OpTanh, Call: call1((*tensor.Tensor).Tanh), Ref: ref1(math.Tanh), Domain: [][2]float64{{-20, 20}}, Tol: approx.AbsRel(2e-6, 2e-6), Torch: torch("tanh")},
	{Op: tensor.OpSigmoid, Call: call1((*tensor.Tensor).Sigmoid), Ref: ref1(func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }), Domain: [][2]float64{{-30, 30}}, Tol: approx.AbsRel(1e-7, 4e-6), Torch: torch("sigmoid")},
	{Op: tensor.OpReLU, Call: call1((*tensor.Tensor).ReLU), Ref: ref1(func(x float64) float64 { return math.Max(x, 0) }), Domain: [][2]float64{{-10, 10}}, NaN: true, Torch: torch("relu")},
	// "tanh" is GELUTanh, a composite.
	{Op: tensor.OpGELU, Call: call1((*tensor.Tensor).GELU), Ref: ref1(func(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }), Domain: [][2]float64{{-8, 8}}, Tol: approx.AbsRel(1e-6, 1e-6),
		Torch: []TorchRef{{Op: "gelu", Attr: "approximate=none"}}},
	{Op: tensor.OpSiLU, Call: call1((*tensor.Tensor).SiLU), Ref: ref1(func(x float64) float64 { return x / (1 + math.Exp(-x)) }), Domain: [][2]float64{{-30, 30}}, Tol: approx.AbsRel(1e-6, 4e-6), Torch: torch("silu")},
	{Op: tensor.OpSoftplus, Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return in[0].Softplus(p[0], p[1]) }, Ref: refSoftplus, CoverP: [2]float64{1, 20},
		Domain: [][2]float64{{-30, 30}}, Params: [][2]float64{{0.75, 1.5}, {2, 20}}, Tol: approx.AbsRel(1e-6, 4e-6), Torch: torch("softplus")},
	// Erf has no vectors of its own; GELU's derivative computes Φ(x) with
	// Erf, so the gradients of the exact gelu cases go through it.
	{Op: tensor.OpErf, Call: call1((*tensor.Tensor).Erf), Ref: ref1(math.Erf), Domain: [][2]float64{{-5, 5}}, Tol: approx.AbsRel(3e-7, 0),
		Via: &RefExemption{Via: []TorchRef{{Op: "gelu", Attr: "approximate=none"}}, Note: "gelu gradients"}},
	// pow_ takes the sign of a negative base to an integer power; other
	// powers of a negative base are NaN.
	{Op: tensor.OpPowScalar, Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return in[0].PowScalar(p[0]) }, Ref: func(p [2]float64, x ...float64) float64 { return math.Pow(x[0], p[0]) }, CoverP: [2]float64{3},
		Domain: [][2]float64{{-2, 10}}, Params: [][2]float64{{0.75, 1.5}, {2, 0}, {3, 0}, {-1.5, 0}}, Tol: approx.AbsRel(0, 5e-6), Torch: torch("pow_scalar")},
	// Clamp tests for NaN with the prelude's isnan_ (lavapipe folds x != x).
	{Op: tensor.OpClamp, Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return in[0].Clamp(p[0], p[1]) }, Ref: func(p [2]float64, x ...float64) float64 { return math.Min(math.Max(x[0], p[0]), p[1]) }, CoverP: [2]float64{1, 2},
		Domain: [][2]float64{{-3, 3}}, Params: [][2]float64{{0.75, 1.5}, {-0.5, 0.25}}, NaN: true, Torch: torch("clamp")},
	{Op: tensor.OpAddScalar, Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return in[0].AddScalar(p[0]) }, Ref: func(p [2]float64, x ...float64) float64 { return x[0] + p[0] }, CoverP: [2]float64{2},
		Domain: [][2]float64{{-10, 10}}, Params: [][2]float64{{0.75, 0}, {0.5, 0}}, Torch: torch("add_scalar", "sub_scalar", "rsub_scalar")},
	{Op: tensor.OpMulScalar, Call: func(p [2]float64, in ...*tensor.Tensor) *tensor.Tensor { return in[0].MulScalar(p[0]) }, Ref: func(p [2]float64, x ...float64) float64 { return x[0] * p[0] }, CoverP: [2]float64{3},
		Domain: [][2]float64{{-10, 10}}, Params: [][2]float64{{0.75, 0}, {-3, 0}}, Torch: torch("mul_scalar")},
}

func refSoftplus(p [2]float64, x ...float64) float64 {
	if p[0]*x[0] > p[1] {
		return x[0]
	}
	return math.Log(1+math.Exp(p[0]*x[0])) / p[0]
}
