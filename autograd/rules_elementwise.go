package autograd

import (
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// unary is the entry of a one-input elementwise op with partial ∂(n).
func unary(d func(n *tensor.Node) partial) entry {
	return elementwise(func(n *tensor.Node, _ int) partial { return d(n) })
}

// binary is the entry of a two-input elementwise op with partials dx
// and dy.
func binary(dx, dy func(n *tensor.Node) partial) entry {
	return elementwise(func(n *tensor.Node, i int) partial {
		if i == 0 {
			return dx(n)
		}
		return dy(n)
	})
}

// constant returns a partial function that is c everywhere.
func constant(c float64) func(*tensor.Node) partial {
	return func(*tensor.Node) partial { return scaled(c) }
}

// input0 returns input 0 of n, for partials.
func input0(n *tensor.Node) *tensor.Tensor { return n.Input(0) }

var elementwiseRules = map[tensor.Op]entry{
	tensor.OpNeg: unary(constant(-1)),
	// d|x| = sign(x)
	tensor.OpAbs: unary(func(n *tensor.Node) partial { return times(input0(n).Sign()) }),
	// sign is flat almost everywhere.
	tensor.OpSign: unary(constant(0)),
	// d eˣ = eˣ, the output.
	tensor.OpExp: unary(func(n *tensor.Node) partial { return times(n.Output()) }),
	// d (eˣ − 1) = eˣ, the output plus 1.
	tensor.OpExpm1: unary(func(n *tensor.Node) partial { return times(n.Output().AddScalar(1)) }),
	// d log x = 1/x
	tensor.OpLog: unary(func(n *tensor.Node) partial { return over(input0(n)) }),
	// d log(1+x) = 1/(1+x)
	tensor.OpLog1p: unary(func(n *tensor.Node) partial { return over(input0(n).AddScalar(1)) }),
	// d √x = 1/(2√x)
	tensor.OpSqrt: unary(func(n *tensor.Node) partial { return partial{c: 0.5, div: n.Output()} }),
	// d x^(-1/2) = -½ x^(-3/2) = -½ y³
	tensor.OpRsqrt:  unary(func(n *tensor.Node) partial { return partial{c: -0.5, mul: n.Output().PowScalar(3)} }),
	tensor.OpSquare: unary(func(n *tensor.Node) partial { return partial{c: 2, mul: input0(n)} }),
	tensor.OpSin:    unary(func(n *tensor.Node) partial { return times(input0(n).Cos()) }),
	tensor.OpCos:    unary(func(n *tensor.Node) partial { return partial{c: -1, mul: input0(n).Sin()} }),
	// d tanh = 1 - tanh²
	tensor.OpTanh: unary(func(n *tensor.Node) partial { return times(n.Output().Square().RSub(1)) }),
	// dσ = σ(1-σ)
	tensor.OpSigmoid: unary(func(n *tensor.Node) partial {
		y := n.Output()
		return times(y.Mul(y.RSub(1)))
	}),
	// d relu = 1 where the output is positive (or NaN, as in PyTorch), 0
	// elsewhere: applied in one pass by ReLUBackward.
	tensor.OpReLU: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(tensor.ReLUBackward(g, n.Output()))
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return tensor.ReLUBackward(ts[0], n.Output())
		}),
	// ReLUBackward is linear in the gradient for a fixed y, and flat in y.
	tensor.OpReLUBackward: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			out := make([]*tensor.Tensor, 2)
			if needs(n, 0) {
				out[0] = tensor.ReLUBackward(g, n.Input(1))
			}
			return out
		},
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			return tensor.ReLUBackward(tangentOr(ts, 0, n), n.Input(1))
		}),
	// d xΦ(x) = Φ(x) + xφ(x)
	tensor.OpGELU: unary(func(n *tensor.Node) partial {
		x := input0(n)
		cdf := x.MulScalar(1 / math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5)
		pdf := x.Square().MulScalar(-0.5).Exp().MulScalar(1 / math.Sqrt(2*math.Pi))
		return times(cdf.Add(x.Mul(pdf)))
	}),
	// d xσ(x) = σ(x)(1 + x(1-σ(x)))
	tensor.OpSiLU: unary(func(n *tensor.Node) partial {
		x := input0(n)
		s := x.Sigmoid()
		return times(s.Mul(x.Mul(s.RSub(1)).AddScalar(1)))
	}),
	// d softplus = σ(βx), or 1 above the threshold.
	tensor.OpSoftplus: unary(func(n *tensor.Node) partial {
		x, beta, threshold := input0(n), n.Attrs.Scalars[0], n.Attrs.Scalars[1]
		bx := x.MulScalar(beta)
		return times(tensor.Where(bx.GtScalar(threshold), tensor.Ones(nil, tensor.Like(x)), bx.Sigmoid()))
	}),
	// d erf = 2/√π e^(-x²)
	tensor.OpErf: unary(func(n *tensor.Node) partial {
		return times(input0(n).Square().Neg().Exp().MulScalar(2 / math.Sqrt(math.Pi)))
	}),
	// d xᵖ = p x^(p-1)
	tensor.OpPowScalar: unary(func(n *tensor.Node) partial {
		p := n.Attrs.Scalars[0]
		if p == 0 {
			return none
		}
		return partial{c: p, mul: input0(n).PowScalar(p - 1)}
	}),
	// The derivative is 1 where lo <= x <= hi, as in PyTorch.
	tensor.OpClamp: unary(func(n *tensor.Node) partial {
		x, lo, hi := input0(n), n.Attrs.Scalars[0], n.Attrs.Scalars[1]
		return times(x.GeScalar(lo).LogicalAnd(x.LeScalar(hi)))
	}),
	tensor.OpAddScalar: unary(constant(1)),
	tensor.OpMulScalar: unary(func(n *tensor.Node) partial { return scaled(n.Attrs.Scalars[0]) }),

	tensor.OpAdd: binary(constant(1), constant(1)),
	tensor.OpSub: binary(constant(1), constant(-1)),
	tensor.OpMul: binary(
		func(n *tensor.Node) partial { return times(n.Input(1)) },
		func(n *tensor.Node) partial { return times(n.Input(0)) }),
	// d(x/y) = 1/y dx - x/y² dy
	tensor.OpDiv: binary(
		func(n *tensor.Node) partial { return over(n.Input(1)) },
		func(n *tensor.Node) partial {
			x, y := n.Input(0), n.Input(1)
			return partial{c: -1, mul: x.Div(y), div: y}
		}),
	// d xʸ = y x^(y-1) dx + xʸ log x dy (0 where x = 0, as in PyTorch)
	tensor.OpPow: binary(
		func(n *tensor.Node) partial {
			x, y := n.Input(0), n.Input(1)
			return times(y.Mul(x.Pow(y.AddScalar(-1))))
		},
		func(n *tensor.Node) partial {
			x := n.Input(0)
			return times(mask(x.NeScalar(0), n.Output().Mul(x.Log())))
		}),
	// Ties split the derivative evenly, as in PyTorch.
	tensor.OpMaximum: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return extremumGrads(g, n, true) },
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor { return extremumTangent(ts, n, true) }),
	tensor.OpMinimum: explicit(
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return extremumGrads(g, n, false) },
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor { return extremumTangent(ts, n, false) }),

	// a + v·b·c
	tensor.OpAddcmul: elementwise(func(n *tensor.Node, i int) partial {
		v := n.Attrs.Scalars[0]
		switch i {
		case 0:
			return one
		case 1:
			return partial{c: v, mul: n.Input(2)}
		}
		return partial{c: v, mul: n.Input(1)}
	}),
	// a + v·b/c
	tensor.OpAddcdiv: elementwise(func(n *tensor.Node, i int) partial {
		v := n.Attrs.Scalars[0]
		switch i {
		case 0:
			return one
		case 1:
			return partial{c: v, div: n.Input(2)}
		}
		b, c := n.Input(1), n.Input(2)
		return partial{c: -v, mul: b.Div(c), div: c}
	}),

	// Where is linear in x and y for a fixed condition.
	tensor.OpWhere: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			c := n.Input(0)
			rank := 1 + n.Output().Dim()
			return tensor.Where(c, lift(tangentOr(ts, 1, n), rank), lift(tangentOr(ts, 2, n), rank))
		},
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			c := n.Input(0)
			out := make([]*tensor.Tensor, 3)
			if needs(n, 1) {
				out[1] = mask(c, g)
			}
			if needs(n, 2) {
				out[2] = mask(c.LogicalNot(), g)
			}
			return out
		}),
	// Casts between float types: the tangent is cast forward, the
	// gradient back.
	tensor.OpCast: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor { return ts[0].Cast(n.Attrs.DType) },
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(g.Cast(n.Inputs[0].DType()))
		}),
	// Clone, Contiguous and To: the tangent goes where the output
	// lives, the gradient back where the input lives.
	tensor.OpCopy: linear(
		func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor { return ts[0].To(n.Output().Device()) },
		func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			return grads(g.To(n.Inputs[0].Device()))
		}),
}

// extremumMasks returns where x wins and where x and y tie.
func extremumMasks(n *tensor.Node, isMax bool) (win, tie *tensor.Tensor) {
	x, y := n.Input(0), n.Input(1)
	if isMax {
		return x.Gt(y), x.Eq(y)
	}
	return x.Lt(y), x.Eq(y)
}

func extremumGrads(g *tensor.Tensor, n *tensor.Node, isMax bool) []*tensor.Tensor {
	win, tie := extremumMasks(n, isMax)
	half := g.MulScalar(0.5)
	out := make([]*tensor.Tensor, 2)
	if needs(n, 0) {
		out[0] = tensor.Where(win, g, mask(tie, half))
	}
	if needs(n, 1) {
		out[1] = tensor.Where(win.LogicalOr(tie).LogicalNot(), g, mask(tie, half))
	}
	return out
}

// extremumTangent is the transpose of extremumGrads: the winner's
// tangent, or the mean of both on a tie.
func extremumTangent(ts []*tensor.Tensor, n *tensor.Node, isMax bool) *tensor.Tensor {
	win, tie := extremumMasks(n, isMax)
	rank := 1 + n.Output().Dim()
	tx, ty := lift(tangentOr(ts, 0, n), rank), lift(tangentOr(ts, 1, n), rank)
	return tensor.Where(win, tx, tensor.Where(tie, tx.Add(ty).MulScalar(0.5), ty))
}
