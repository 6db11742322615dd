package autograd

import (
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// A rule returns the gradient of each input of node n, given g, the
// gradient of n's output; nil means no gradient flows to that input.
// Rules are written in differentiable tensor ops, so they run on any
// device and, under CreateGraph, can be differentiated again. Gradients
// may come back with the broadcast shape of the output: the engine sums
// them to each input's shape.
type rule func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor

// rules holds the derivative of every differentiable op, gathered from
// the per-family tables. TestRulesComplete fails when an op lacks one.
var rules = merge(elementwiseRules, shapeRules, reduceRules, indexRules)

func merge(tables ...map[tensor.Op]rule) map[tensor.Op]rule {
	out := map[tensor.Op]rule{}
	for _, t := range tables {
		for op, r := range t {
			if _, dup := out[op]; dup {
				panic("autograd: two rules for " + op.String())
			}
			out[op] = r
		}
	}
	return out
}

// grads is shorthand for a rule's result.
func grads(gs ...*tensor.Tensor) []*tensor.Tensor { return gs }

// zero returns the 0-d zero of g's dtype on g's device.
func zero(g *tensor.Tensor) *tensor.Tensor { return tensor.Zeros(nil, tensor.Like(g)) }

// mask returns g where cond is true and 0 elsewhere.
func mask(cond, g *tensor.Tensor) *tensor.Tensor { return tensor.Where(cond, g, zero(g)) }

var elementwiseRules = map[tensor.Op]rule{
	tensor.OpNeg: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g.Neg()) },
	// d|x| = sign(x)
	tensor.OpAbs: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g.Mul(n.Input(0).Sign())) },
	// sign is flat almost everywhere.
	tensor.OpSign: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(tensor.ZerosLike(g)) },
	// d eˣ = eˣ, the output.
	tensor.OpExp: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g.Mul(n.Output())) },
	// d log x = 1/x
	tensor.OpLog: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g.Div(n.Input(0))) },
	// d log(1+x) = 1/(1+x)
	tensor.OpLog1p: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Div(n.Input(0).AddScalar(1)))
	},
	// d √x = 1/(2√x)
	tensor.OpSqrt: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Div(n.Output().MulScalar(2)))
	},
	// d x^(-1/2) = -½ x^(-3/2) = -½ y³
	tensor.OpRsqrt: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Mul(n.Output().PowScalar(3)).MulScalar(-0.5))
	},
	tensor.OpSquare: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Mul(n.Input(0)).MulScalar(2))
	},
	tensor.OpSin: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g.Mul(n.Input(0).Cos())) },
	tensor.OpCos: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Mul(n.Input(0).Sin()).Neg())
	},
	// d tanh = 1 - tanh²
	tensor.OpTanh: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Mul(n.Output().Square().RSub(1)))
	},
	// dσ = σ(1-σ)
	tensor.OpSigmoid: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		y := n.Output()
		return grads(g.Mul(y.Mul(y.RSub(1))))
	},
	tensor.OpReLU: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(mask(n.Output().GtScalar(0), g))
	},
	// d xΦ(x) = Φ(x) + xφ(x)
	tensor.OpGELU: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x := n.Input(0)
		cdf := x.MulScalar(1 / math.Sqrt2).Erf().AddScalar(1).MulScalar(0.5)
		pdf := x.Square().MulScalar(-0.5).Exp().MulScalar(1 / math.Sqrt(2*math.Pi))
		return grads(g.Mul(cdf.Add(x.Mul(pdf))))
	},
	// d xσ(x) = σ(x)(1 + x(1-σ(x)))
	tensor.OpSiLU: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x := n.Input(0)
		s := x.Sigmoid()
		return grads(g.Mul(s.Mul(x.Mul(s.RSub(1)).AddScalar(1))))
	},
	// d softplus = σ(βx), or 1 above the threshold.
	tensor.OpSoftplus: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x, beta, threshold := n.Input(0), n.Attrs.Scalars[0], n.Attrs.Scalars[1]
		bx := x.MulScalar(beta)
		return grads(tensor.Where(bx.GtScalar(threshold), g, g.Mul(bx.Sigmoid())))
	},
	// d erf = 2/√π e^(-x²)
	tensor.OpErf: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x := n.Input(0)
		return grads(g.Mul(x.Square().Neg().Exp().MulScalar(2 / math.Sqrt(math.Pi))))
	},
	// d xᵖ = p x^(p-1)
	tensor.OpPowScalar: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		p := n.Attrs.Scalars[0]
		if p == 0 {
			return grads(tensor.ZerosLike(g))
		}
		return grads(g.Mul(n.Input(0).PowScalar(p - 1)).MulScalar(p))
	},
	// Gradient passes where lo <= x <= hi, as in PyTorch.
	tensor.OpClamp: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x, lo, hi := n.Input(0), n.Attrs.Scalars[0], n.Attrs.Scalars[1]
		return grads(mask(x.GeScalar(lo).LogicalAnd(x.LeScalar(hi)), g))
	},
	tensor.OpAddScalar: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g) },
	tensor.OpMulScalar: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.MulScalar(n.Attrs.Scalars[0]))
	},

	tensor.OpAdd: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g, g) },
	tensor.OpSub: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return grads(g, g.Neg()) },
	tensor.OpMul: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Mul(n.Input(1)), g.Mul(n.Input(0)))
	},
	// d(x/y) = 1/y dx - x/y² dy
	tensor.OpDiv: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x, y := n.Input(0), n.Input(1)
		gx := g.Div(y)
		return grads(gx, gx.Mul(x).Div(y).Neg())
	},
	// d xʸ = y x^(y-1) dx + xʸ log x dy (0 where x = 0, as in PyTorch)
	tensor.OpPow: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		x, y, out := n.Input(0), n.Input(1), n.Output()
		gx := g.Mul(y).Mul(x.Pow(y.AddScalar(-1)))
		gy := mask(x.NeScalar(0), g.Mul(out).Mul(x.Log()))
		return grads(gx, gy)
	},
	// Ties split the gradient evenly, as in PyTorch.
	tensor.OpMaximum: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return extremumGrads(g, n, true) },
	tensor.OpMinimum: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor { return extremumGrads(g, n, false) },

	tensor.OpWhere: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		c := n.Input(0)
		return grads(nil, mask(c, g), mask(c.LogicalNot(), g))
	},
	// a + v·b·c
	tensor.OpAddcmul: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		v := n.Attrs.Scalars[0]
		return grads(g, g.Mul(n.Input(2)).MulScalar(v), g.Mul(n.Input(1)).MulScalar(v))
	},
	// a + v·b/c
	tensor.OpAddcdiv: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		v := n.Attrs.Scalars[0]
		b, c := n.Input(1), n.Input(2)
		gb := g.Div(c).MulScalar(v)
		return grads(g, gb, gb.Mul(b).Div(c).Neg())
	},
	tensor.OpCast: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.Cast(n.Inputs[0].DType()))
	},
	// Clone, Contiguous and To: the gradient goes back where the input lives.
	tensor.OpCopy: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
		return grads(g.To(n.Inputs[0].Device()))
	},
}

func extremumGrads(g *tensor.Tensor, n *tensor.Node, isMax bool) []*tensor.Tensor {
	x, y := n.Input(0), n.Input(1)
	tie := x.Eq(y)
	win := x.Gt(y)
	if !isMax {
		win = x.Lt(y)
	}
	half := g.MulScalar(0.5)
	gx := tensor.Where(win, g, mask(tie, half))
	gy := tensor.Where(win.LogicalOr(tie).LogicalNot(), g, mask(tie, half))
	return grads(gx, gy)
}
