package autograd_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

type T = tensor.Tensor

// A ruleCase is one finite-difference check of a derivative rule: the
// inputs (leaves that require grad; index tensors, masks and other
// constants ride along) and the function of them to differentiate.
type ruleCase struct {
	name string
	xs   func() []*T
	f    func(xs []*T) *T
	opt  autograd.CheckOptions // zero: the float64 defaults
}

func un(f func(x *T) *T) func([]*T) *T { return func(xs []*T) *T { return f(xs[0]) } }

func bin(f func(x, y *T) *T) func([]*T) *T { return func(xs []*T) *T { return f(xs[0], xs[1]) } }

func addmm(xs []*T) *T { return tensor.Addmm(xs[0], xs[1], xs[2]) }

func addmmReLU(xs []*T) *T { return tensor.AddmmReLU(xs[0], xs[1], xs[2]) }

// f32 are the options for cases that round through float32.
var f32 = autograd.CheckOptions{Eps: 1e-2, Atol: 1e-4, Rtol: 1e-3}

// ruleCases holds at least one case per differentiable op: odd shapes,
// broadcasting for the binary ops, non-contiguous inputs (transposed,
// sliced with a step, expanded leaves, and views taken inside f), and
// inputs kept away from kinks. Each case must record its op.
var ruleCases = map[tensor.Op][]ruleCase{
	tensor.OpNeg: {
		{"3x5", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un((*T).Neg), zero},
		{"transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} }, un((*T).Neg), zero},
	},
	tensor.OpAbs: {
		{"7 away from 0", func() []*T { return []*T{away(0.2, 2, 7)} }, un((*T).Abs), zero},
		{"strided", func() []*T { return []*T{strided(away(0.2, 2, 3, 5))} }, un((*T).Abs), zero},
	},
	tensor.OpSign: {
		{"3x5 away from 0", func() []*T { return []*T{away(0.2, 2, 3, 5)} }, func(xs []*T) *T { return xs[0].Sign().Mul(xs[0]) }, zero},
	},
	tensor.OpExp: {
		{"3x5", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un((*T).Exp), zero},
		{"strided", func() []*T { return []*T{strided(leaf(-2, 2, 3, 5))} }, un((*T).Exp), zero},
		{"transpose in f", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.T().Exp() }), zero},
	},
	tensor.OpLog: {
		{"3x5", func() []*T { return []*T{leaf(0.5, 3, 3, 5)} }, un((*T).Log), zero},
		{"transposed", func() []*T { return []*T{transposed(leaf(0.5, 3, 3, 5))} }, un((*T).Log), zero},
	},
	tensor.OpLog1p: {
		{"7", func() []*T { return []*T{leaf(-0.5, 2, 7)} }, un((*T).Log1p), zero},
	},
	tensor.OpSqrt: {
		{"3x5", func() []*T { return []*T{leaf(0.5, 3, 3, 5)} }, un((*T).Sqrt), zero},
	},
	tensor.OpRsqrt: {
		{"7", func() []*T { return []*T{leaf(0.5, 3, 7)} }, un((*T).Rsqrt), zero},
		{"strided", func() []*T { return []*T{strided(leaf(0.5, 3, 3, 5))} }, un((*T).Rsqrt), zero},
	},
	tensor.OpSquare: {
		{"3x5", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un((*T).Square), zero},
		{"expanded leaf", func() []*T { return []*T{expanded(-2, 2, 0, 3, 5)} }, un((*T).Square), zero},
	},
	tensor.OpSin: {
		{"3x5", func() []*T { return []*T{leaf(-3, 3, 3, 5)} }, un((*T).Sin), zero},
	},
	tensor.OpCos: {
		{"3x5", func() []*T { return []*T{leaf(-3, 3, 3, 5)} }, un((*T).Cos), zero},
	},
	tensor.OpTanh: {
		{"3x5", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un((*T).Tanh), zero},
		{"transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} }, un((*T).Tanh), zero},
	},
	tensor.OpSigmoid: {
		{"7", func() []*T { return []*T{leaf(-3, 3, 7)} }, un((*T).Sigmoid), zero},
	},
	tensor.OpReLU: {
		{"3x5 away from 0", func() []*T { return []*T{away(0.1, 2, 3, 5)} }, un((*T).ReLU), zero},
		{"strided", func() []*T { return []*T{strided(away(0.1, 2, 3, 5))} }, un((*T).ReLU), zero},
	},
	tensor.OpReLUBackward: {
		{"3x5 at y away from 0", func() []*T { return []*T{leaf(-2, 2, 3, 5), away(0.1, 2, 3, 5)} }, bin(tensor.ReLUBackward), zero},
		{"y broadcast (5)", func() []*T { return []*T{leaf(-2, 2, 3, 5), away(0.1, 2, 5)} }, bin(tensor.ReLUBackward), zero},
		{"twice: relu's second derivative", func() []*T { return []*T{away(0.1, 2, 3, 5)} },
			un(func(x *T) *T {
				y := x.ReLU()
				return tensor.ReLUBackward(y.Square(), y)
			}), zero},
	},
	tensor.OpGELU: {
		{"3x5", func() []*T { return []*T{leaf(-3, 3, 3, 5)} }, un((*T).GELU), zero},
	},
	tensor.OpSiLU: {
		{"3x5", func() []*T { return []*T{leaf(-3, 3, 3, 5)} }, un((*T).SiLU), zero},
	},
	tensor.OpSoftplus: {
		{"beta 1 threshold 20", func() []*T { return []*T{leaf(-3, 3, 3, 5)} }, un(func(x *T) *T { return x.Softplus(1, 20) }), zero},
		// βx crosses the threshold 1 at x = 0.5: both branches.
		{"beta 2 threshold 1", func() []*T { return []*T{avoid([]float64{0.5}, 0.05, -2, 2, 3, 5)} }, un(func(x *T) *T { return x.Softplus(2, 1) }), zero},
	},
	tensor.OpErf: {
		{"7", func() []*T { return []*T{leaf(-2, 2, 7)} }, un((*T).Erf), zero},
	},
	tensor.OpPowScalar: {
		{"cube", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.PowScalar(3) }), zero},
		{"2.5", func() []*T { return []*T{leaf(0.5, 3, 7)} }, un(func(x *T) *T { return x.PowScalar(2.5) }), zero},
		{"-1.5 transposed", func() []*T { return []*T{transposed(leaf(0.5, 2, 3, 5))} }, un(func(x *T) *T { return x.PowScalar(-1.5) }), zero},
		{"0", func() []*T { return []*T{leaf(0.5, 2, 7)} }, un(func(x *T) *T { return x.PowScalar(0).Mul(x) }), zero},
	},
	tensor.OpClamp: {
		{"both bounds", func() []*T { return []*T{avoid([]float64{-0.5, 0.5}, 0.05, -2, 2, 3, 5)} }, un(func(x *T) *T { return x.Clamp(-0.5, 0.5) }), zero},
		{"min only", func() []*T { return []*T{avoid([]float64{0.3}, 0.05, -2, 2, 7)} }, un(func(x *T) *T { return x.ClampMin(0.3) }), zero},
	},
	tensor.OpAddScalar: {
		{"add", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.AddScalar(2.5) }), zero},
		{"sub", func() []*T { return []*T{leaf(-2, 2, 7)} }, un(func(x *T) *T { return x.SubScalar(1).Square() }), zero},
	},
	tensor.OpMulScalar: {
		{"mul", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.MulScalar(-1.5) }), zero},
	},

	tensor.OpAdd: {
		{"3x5 + 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5)} }, bin((*T).Add), zero},
		{"3x1 + 1x5", func() []*T { return []*T{leaf(-2, 2, 3, 1), leaf(-2, 2, 1, 5)} }, bin((*T).Add), zero},
		{"7 + 0-d", func() []*T { return []*T{leaf(-2, 2, 7), leaf(-2, 2)} }, bin((*T).Add), zero},
		{"transposed + strided", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5)), strided(leaf(-2, 2, 3, 5))} }, bin((*T).Add), zero},
		{"x + x", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Add(x) }), zero},
	},
	tensor.OpSub: {
		{"3x5 - 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5)} }, bin((*T).Sub), zero},
		{"1x5 - 3x1", func() []*T { return []*T{leaf(-2, 2, 1, 5), leaf(-2, 2, 3, 1)} }, bin((*T).Sub), zero},
	},
	tensor.OpMul: {
		{"3x5 * 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5)} }, bin((*T).Mul), zero},
		{"3x1 * 1x5", func() []*T { return []*T{leaf(-2, 2, 3, 1), leaf(-2, 2, 1, 5)} }, bin((*T).Mul), zero},
		{"x * x", func() []*T { return []*T{leaf(-2, 2, 7)} }, un(func(x *T) *T { return x.Mul(x) }), zero},
		{"expanded * transposed", func() []*T { return []*T{expanded(-2, 2, 1, 3, 5), transposed(leaf(-2, 2, 3, 5))} }, bin((*T).Mul), zero},
	},
	tensor.OpDiv: {
		{"3x5 / 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), away(0.5, 2, 5)} }, bin((*T).Div), zero},
		{"0-d / 7", func() []*T { return []*T{leaf(-2, 2), away(0.5, 2, 7)} }, bin((*T).Div), zero},
		{"DivScalar", func() []*T { return []*T{leaf(-2, 2, 7)} }, un(func(x *T) *T { return x.DivScalar(4).Exp() }), zero},
		{"x / x", func() []*T { return []*T{away(0.5, 2, 7)} }, un(func(x *T) *T { return x.Div(x.Exp()) }), zero},
	},
	tensor.OpPow: {
		{"3x5 ^ 5", func() []*T { return []*T{leaf(0.5, 2, 3, 5), leaf(-2, 2, 5)} }, bin((*T).Pow), zero},
		{"3x1 ^ 1x5", func() []*T { return []*T{leaf(0.5, 2, 3, 1), leaf(-2, 2, 1, 5)} }, bin((*T).Pow), zero},
	},
	tensor.OpMaximum: {
		{"3x5 vs 5", func() []*T { a, b := separated([]int{3, 5}, []int{5}); return []*T{a, b} }, bin((*T).Maximum), zero},
		{"3x1 vs 1x5", func() []*T { a, b := separated([]int{3, 1}, []int{1, 5}); return []*T{b, a} }, bin((*T).Maximum), zero},
	},
	tensor.OpMinimum: {
		{"3x5 vs 5", func() []*T { a, b := separated([]int{3, 5}, []int{5}); return []*T{a, b} }, bin((*T).Minimum), zero},
		{"7 vs 0-d", func() []*T { a, b := separated([]int{7}, nil); return []*T{b, a} }, bin((*T).Minimum), zero},
	},
	tensor.OpWhere: {
		{"3x5 mask, 3x5 and 5", func() []*T { return []*T{mask(3, 5), leaf(-2, 2, 3, 5), leaf(-2, 2, 5)} },
			func(xs []*T) *T { return tensor.Where(xs[0], xs[1], xs[2]) }, zero},
		{"3x1 mask, 1x5 and 0-d", func() []*T { return []*T{mask(3, 1), leaf(-2, 2, 1, 5), leaf(-2, 2)} },
			func(xs []*T) *T { return tensor.Where(xs[0], xs[1], xs[2]) }, zero},
	},
	tensor.OpAddcmul: {
		{"3x5, 5, 3x1", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5), leaf(-2, 2, 3, 1)} },
			func(xs []*T) *T { return tensor.Addcmul(xs[0], xs[1], xs[2], 0.7) }, zero},
	},
	tensor.OpAddcdiv: {
		{"3x5, transposed 3x5, 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), transposed(leaf(-2, 2, 3, 5)), away(0.5, 2, 5)} },
			func(xs []*T) *T { return tensor.Addcdiv(xs[0], xs[1], xs[2], -1.3) }, zero},
	},
	tensor.OpCast: {
		{"through float32", func() []*T { return []*T{leaf(-2, 2, 3, 5)} },
			un(func(x *T) *T { return x.Cast(tensor.Float32).MulScalar(3).Cast(tensor.Float64) }), f32},
		{"float32 + float64 promotes", func() []*T {
			return []*T{tensor.New(uniform(5, -2, 2), 5).Cast(tensor.Float32).SetRequiresGrad(true), leaf(-2, 2, 3, 5)}
		}, bin(func(a, b *T) *T { return a.Mul(b) }), f32},
	},
	tensor.OpCopy: {
		{"Clone", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Clone().Square() }), zero},
		{"Contiguous of a transpose", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.T().Contiguous() }), zero},
	},

	tensor.OpReshape: {
		{"3x5 to 5x3", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Reshape(5, 3).Square() }), zero},
		{"of a transpose (copies)", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.T().Reshape(15) }), zero},
		{"Unsqueeze Squeeze Flatten", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4)} },
			un(func(x *T) *T { return x.Unsqueeze(1).Flatten(2, 3).Squeeze(1).Mul(x.View(2, 12)) }), zero},
	},
	tensor.OpPermute: {
		{"2x3x4 to 4x2x3", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4)} }, un(func(x *T) *T { return x.Permute(2, 0, 1).Exp() }), zero},
		{"T of transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} }, un(func(x *T) *T { return x.T() }), zero},
	},
	tensor.OpSlice: {
		{"step 2", func() []*T { return []*T{leaf(-2, 2, 3, 7)} }, un(func(x *T) *T { return x.Slice(1, 0, 7, 2) }), zero},
		{"negative start, Narrow, Select", func() []*T { return []*T{leaf(-2, 2, 5, 3)} },
			un(func(x *T) *T { return x.Slice(0, -3, 5, 1).Narrow(1, 1, 2).Select(0, 1).Exp() }), zero},
		{"step 3 of strided", func() []*T { return []*T{strided(leaf(-2, 2, 3, 7))} }, un(func(x *T) *T { return x.Slice(1, 1, 7, 3).Square() }), zero},
	},
	tensor.OpExpand: {
		{"3x1 to 2x3x5", func() []*T { return []*T{leaf(-2, 2, 3, 1)} }, un(func(x *T) *T { return x.Expand(2, 3, 5) }), zero},
		{"0-d to 7", func() []*T { return []*T{leaf(-2, 2)} }, un(func(x *T) *T { return x.Expand(7).Square() }), zero},
	},
	tensor.OpSliceScatter: {
		{"3x3 into 3x7 step 2", func() []*T { return []*T{leaf(-2, 2, 3, 3)} },
			un(func(x *T) *T { return tensor.SliceScatter(x, []int{3, 7}, 1, 1, 7, 2).Exp() }), zero},
	},

	tensor.OpSum: {
		{"all", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Square().Sum() }), zero},
		{"dim 1", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Sum(1) }), zero},
		{"dim 0 keepdim of transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} },
			un(func(x *T) *T { return x.SumDims([]int{0}, true).Square() }), zero},
		{"Mean of 2x3x4 over 0, 2", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4)} }, un(func(x *T) *T { return x.Mean(0, 2) }), zero},
	},
	tensor.OpAmax: {
		{"dim 1", func() []*T { return []*T{distinct(3, 5)} }, un(func(x *T) *T { return x.Amax([]int{1}, false) }), zero},
		{"Max of transposed", func() []*T { return []*T{transposed(distinct(3, 5))} }, un(func(x *T) *T { return x.Max() }), zero},
	},
	tensor.OpAmin: {
		{"dim 0 keepdim", func() []*T { return []*T{distinct(3, 5)} }, un(func(x *T) *T { return x.Amin([]int{0}, true) }), zero},
		{"Min of 7", func() []*T { return []*T{distinct(7)} }, un(func(x *T) *T { return x.Min() }), zero},
	},
	tensor.OpMaxDim: {
		{"dim 1", func() []*T { return []*T{distinct(3, 5)} }, un(func(x *T) *T { v, _ := x.MaxDim(1, false); return v }), zero},
		{"dim 0 keepdim of strided", func() []*T { return []*T{strided(distinct(3, 5))} }, un(func(x *T) *T { v, _ := x.MaxDim(0, true); return v }), zero},
	},
	tensor.OpMinDim: {
		{"dim 0 keepdim", func() []*T { return []*T{distinct(3, 5)} }, un(func(x *T) *T { v, _ := x.MinDim(0, true); return v }), zero},
		{"dim -1 of 7", func() []*T { return []*T{distinct(7)} }, un(func(x *T) *T { v, _ := x.MinDim(-1, false); return v }), zero},
	},
	tensor.OpCumSum: {
		{"dim 1", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.CumSum(1) }), zero},
		{"dim 0 of transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} }, un(func(x *T) *T { return x.CumSum(0).Square() }), zero},
	},
	tensor.OpSoftmax: {
		{"dim 1", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.Softmax(1) }), zero},
		{"dim 0 of transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5))} }, un(func(x *T) *T { return x.Softmax(0) }), zero},
		{"dim 1 of 2x3x4", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4)} }, un(func(x *T) *T { return x.Softmax(1) }), zero},
	},
	tensor.OpLogSoftmax: {
		{"dim 1", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.LogSoftmax(1) }), zero},
		{"dim 0 of strided", func() []*T { return []*T{strided(leaf(-2, 2, 3, 5))} }, un(func(x *T) *T { return x.LogSoftmax(0) }), zero},
		{"dim -1 of 2x3x4", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4)} }, un(func(x *T) *T { return x.LogSoftmax(-1) }), zero},
	},
	tensor.OpMatMul: {
		{"3x5 · 5x4", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5, 4)} }, bin((*T).MatMul), zero},
		{"2x3x4 · 4x5 broadcast", func() []*T { return []*T{leaf(-2, 2, 2, 3, 4), leaf(-2, 2, 4, 5)} }, bin((*T).MatMul), zero},
		{"5 · 5x3", func() []*T { return []*T{leaf(-2, 2, 5), leaf(-2, 2, 5, 3)} }, bin((*T).MatMul), zero},
		{"3x5 · 5", func() []*T { return []*T{leaf(-2, 2, 3, 5), leaf(-2, 2, 5)} }, bin((*T).MatMul), zero},
		{"7 · 7", func() []*T { return []*T{leaf(-2, 2, 7), leaf(-2, 2, 7)} }, bin((*T).MatMul), zero},
		{"transposed operands", func() []*T { return []*T{transposed(leaf(-2, 2, 5, 3)), leaf(-2, 2, 4, 5)} },
			bin(func(a, b *T) *T { return a.T().MatMul(b.T()) }), zero},
		{"x · xᵀ", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return x.MatMul(x.T()) }), zero},
	},
	tensor.OpAddmm: {
		{"bias (4) + 3x5 · 5x4", func() []*T { return []*T{leaf(-2, 2, 4), leaf(-2, 2, 3, 5), leaf(-2, 2, 5, 4)} }, addmm, zero},
		{"input (3, 1) + 3x5 · transposed 5x4", func() []*T {
			return []*T{leaf(-2, 2, 3, 1), leaf(-2, 2, 3, 5), transposed(leaf(-2, 2, 5, 4))}
		}, addmm, zero},
		{"input 3x3 + x · xᵀ", func() []*T { return []*T{leaf(-2, 2, 3, 3), leaf(-2, 2, 3, 5)} },
			func(xs []*T) *T { return tensor.Addmm(xs[0], xs[1], xs[1].T()) }, zero},
		// In Float32 a bias row goes through the GEMM's epilogue on the CPU.
		{"float32 bias (20) + 7x9 · 9x20", func() []*T { return []*T{leaf(-2, 2, 20), leaf(-2, 2, 7, 9), leaf(-2, 2, 9, 20)} },
			func(xs []*T) *T {
				f := func(x *T) *T { return x.Cast(tensor.Float32) }
				return tensor.Addmm(f(xs[0]), f(xs[1]), f(xs[2])).Cast(tensor.Float64)
			}, f32},
	},
	tensor.OpAddmmReLU: {
		{"bias (4) + 3x5 · 5x4", func() []*T { return []*T{leaf(-2, 2, 4), leaf(-2, 2, 3, 5), leaf(-2, 2, 5, 4)} }, addmmReLU, zero},
		{"input (3, 1) + 3x5 · transposed 5x4", func() []*T {
			return []*T{leaf(-2, 2, 3, 1), leaf(-2, 2, 3, 5), transposed(leaf(-2, 2, 5, 4))}
		}, addmmReLU, zero},
		// In Float32 a bias row goes through the GEMM's epilogue on the
		// CPU. |bias| >= 4 > |a·b| keeps every element 1.75 from ReLU's
		// kink, which float32's finite differences would otherwise cross.
		{"float32 bias (20) + 7x9 · 9x20", func() []*T {
			return []*T{away(4, 6, 20), leaf(-0.5, 0.5, 7, 9), leaf(-0.5, 0.5, 9, 20)}
		},
			func(xs []*T) *T {
				f := func(x *T) *T { return x.Cast(tensor.Float32) }
				return tensor.AddmmReLU(f(xs[0]), f(xs[1]), f(xs[2])).Cast(tensor.Float64)
			}, f32},
	},
	tensor.OpCat: {
		{"3x2 and 3x5 along 1", func() []*T { return []*T{leaf(-2, 2, 3, 2), transposed(leaf(-2, 2, 3, 5))} },
			func(xs []*T) *T { return tensor.Cat(xs, 1) }, zero},
		{"Stack", func() []*T { return []*T{leaf(-2, 2, 7), leaf(-2, 2, 7), leaf(-2, 2, 7)} },
			func(xs []*T) *T { return tensor.Stack(xs, 0).Square() }, zero},
		{"x twice", func() []*T { return []*T{leaf(-2, 2, 3, 5)} }, un(func(x *T) *T { return tensor.Cat([]*T{x, x.Exp()}, 0) }), zero},
	},
	tensor.OpIndexSelect: {
		{"dim 0 with repeats", func() []*T { return []*T{leaf(-2, 2, 5, 3), index([]int{4, 0, 4, 2}, 4)} },
			func(xs []*T) *T { return xs[0].IndexSelect(0, xs[1]) }, zero},
		{"dim 1 of transposed", func() []*T { return []*T{transposed(leaf(-2, 2, 3, 5)), index([]int{1, 1, 3}, 3)} },
			func(xs []*T) *T { return xs[0].IndexSelect(1, xs[1]).Square() }, zero},
	},
	tensor.OpIndexAdd: {
		{"dim 0 with repeats", func() []*T { return []*T{leaf(-2, 2, 5, 3), index([]int{1, 3, 1, 0}, 4), leaf(-2, 2, 4, 3)} },
			func(xs []*T) *T { return xs[0].IndexAdd(0, xs[1], xs[2]).Square() }, zero},
	},
	tensor.OpIndexAmax: {
		{"dim 0 with repeats", func() []*T { return []*T{leaf(-2, 2, 5, 3), index([]int{1, 3, 1, 0}, 4), leaf(-2, 2, 4, 3)} },
			func(xs []*T) *T { return xs[0].IndexAmax(0, xs[1], xs[2]).Square() }, zero},
		{"segment max along 1 of transposed", func() []*T { return []*T{index([]int{2, 0, 2, 2, 1}, 5), transposed(leaf(-2, 2, 3, 5))} },
			func(xs []*T) *T {
				return tensor.Full([]int{3, 3}, math.Inf(-1), tensor.Like(xs[1])).IndexAmax(1, xs[0], xs[1])
			}, zero},
	},
	tensor.OpGather: {
		{"dim 1 with repeats", func() []*T {
			return []*T{leaf(-2, 2, 3, 5), index([]int{0, 4, 4, 1, 2, 2, 3, 0, 1, 1, 1, 4}, 3, 4)}
		}, func(xs []*T) *T { return xs[0].Gather(1, xs[1]) }, zero},
		{"dim 0, smaller index", func() []*T { return []*T{leaf(-2, 2, 3, 5), index([]int{2, 0, 1, 2}, 1, 4)} },
			func(xs []*T) *T { return xs[0].Gather(0, xs[1]).Exp() }, zero},
	},
	tensor.OpScatterAdd: {
		{"dim 1 with repeats", func() []*T {
			return []*T{leaf(-2, 2, 3, 5), index([]int{0, 4, 4, 1, 2, 2, 3, 0, 1, 1, 1, 4}, 3, 4), leaf(-2, 2, 3, 4)}
		}, func(xs []*T) *T { return xs[0].ScatterAdd(1, xs[1], xs[2]).Square() }, zero},
	},
}

// zero is the zero CheckOptions: the float64 defaults.
var zero = autograd.CheckOptions{}

// sortedOps returns the ops of ruleCases in op order.
func sortedOps() []tensor.Op {
	var ops []tensor.Op
	for op := range ruleCases {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}

// TestRules checks every derivative rule against central finite
// differences in float64 on the CPU, and fails if a differentiable op
// has no case or a case does not record its op.
func TestRules(t *testing.T) {
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				xs := c.xs()
				if ops := opsOf(c.f(xs)); !ops[op] {
					t.Fatalf("the case does not record %v (it records %v)", op, ops)
				}
				if err := autograd.Check(c.f, xs, c.opt); err != nil {
					t.Error(err)
				}
			})
		}
	}
	for _, op := range tensor.Ops() {
		if op.Differentiable() && len(ruleCases[op]) == 0 {
			t.Errorf("%v is differentiable but has no case in TestRules", op)
		}
		if !op.Differentiable() && len(ruleCases[op]) > 0 {
			t.Errorf("%v is not differentiable but has a case in TestRules", op)
		}
	}
}

// secondOrder lists the ops whose rules TestSecondOrder differentiates
// again: their first-order case 0 runs through CheckSecondOrder.
var secondOrder = []tensor.Op{
	tensor.OpMul, tensor.OpExp, tensor.OpTanh, tensor.OpSigmoid, tensor.OpMatMul,
	tensor.OpSoftmax, tensor.OpLogSoftmax, tensor.OpDiv, tensor.OpSum, tensor.OpPow,
}

// TestSecondOrder checks second derivatives (the rules differentiated
// through CreateGraph) against finite differences of first derivatives.
func TestSecondOrder(t *testing.T) {
	for _, op := range secondOrder {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				if err := autograd.CheckSecondOrder(c.f, c.xs(), c.opt); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestSecondOrderAllRules runs every case of TestRules through
// CheckSecondOrder, so every rule is shown to be built from
// differentiable ops that record under CreateGraph.
func TestSecondOrderAllRules(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, op := range sortedOps() {
		for k, c := range ruleCases[op] {
			t.Run(op.String()+"/"+c.name, func(t *testing.T) {
				seed(uint64(op), uint64(k))
				if err := autograd.CheckSecondOrder(c.f, c.xs(), c.opt); err != nil {
					t.Error(err)
				}
			})
		}
	}
}
