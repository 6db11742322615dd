package autograd

import (
	"github.com/tessera-ml/tessera/tensor"
)

// An entry is one op's derivative in the rule table: the linear map
// J that the op's derivative is at the point a node recorded, stated
// once and read in both directions (Elliott's "simple essence"):
// forward applies J to the tangents of the inputs (forward mode: JVP,
// HVP, Jacobian, Hessian), reverse applies Jᵀ to the gradient of the
// output (reverse mode: Backward, Grad, VJP). Entries are made by one
// of three constructors:
//
//   - elementwise, for elementwise ops: the entry gives the local
//     partials ∂out/∂inᵢ and both modes are derived from them;
//   - linear, for ops linear in their float inputs (views, sums,
//     concatenation, indexing by a fixed index, casts, copies): forward
//     mode applies the op itself to the tangents, reverse mode its
//     transpose;
//   - explicit, for the others (bilinear MatMul, softmax, extrema with
//     ties): both directions are given.
type entry struct {
	reverse reverseRule
	forward forwardRule
}

// A reverseRule returns the gradient of each input of node n, given g,
// the gradient of n's output; nil means no gradient flows to that input.
// Rules are written in differentiable tensor ops, so they run on any
// device and, under CreateGraph, can be differentiated again (in either
// mode). Gradients may come back with the broadcast shape of the
// output: the engine sums them to each input's shape.
type reverseRule func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor

// A forwardRule returns the tangent of n's output given ts, the
// tangents of its inputs. Tangents carry a leading batch dim B (B
// directions pushed at once; Jacobian pushes basis vectors): ts[i] has
// shape (B, n.Inputs[i].Shape()...), or is nil for a zero tangent (the
// input does not depend on the inputs of JVP, or is not a float
// tensor); at least one is not nil. The result broadcasts to (B, out
// shape...) and may have another float dtype: the walk expands it and
// casts it to the output's dtype. nil means a zero tangent.
type forwardRule func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor

// rules holds the derivative of every differentiable op, gathered from
// the per-family tables. TestRulesComplete fails when an op lacks an
// entry or an entry lacks a mode.
var rules = merge(elementwiseRules, shapeRules, reduceRules, indexRules, convRules, attentionRules)

func merge(tables ...map[tensor.Op]entry) map[tensor.Op]entry {
	out := map[tensor.Op]entry{}
	for _, t := range tables {
		for op, e := range t {
			if _, dup := out[op]; dup {
				panic("autograd: two rules for " + op.String())
			}
			out[op] = e
		}
	}
	return out
}

// explicit is the entry of an op whose two directions are both written
// out.
func explicit(reverse reverseRule, forward forwardRule) entry {
	return entry{reverse: reverse, forward: forward}
}

// linear is the entry of an op that is linear in its float inputs
// (given its attributes, index or mask): its derivative is the op
// itself. apply runs the op on the tangents with n's attributes, its
// dims shifted past the batch dim, so forward mode is the op; transpose
// is the adjoint, which reverse mode applies.
func linear(apply forwardRule, transpose reverseRule) entry {
	return entry{reverse: transpose, forward: apply}
}

// A partial is the local derivative ∂out/∂in of an elementwise op at a
// recorded point: c·mul/div, where mul and div are tensors that
// broadcast to the output (nil stands for 1). A Bool mul selects rather
// than multiplies (the derivative is 1 where it is true and 0
// elsewhere, and a non-finite gradient or tangent where it is false
// still gives 0, as PyTorch's masked rules do). c = 0 means no
// derivative: the input gets no gradient and passes on no tangent.
type partial struct {
	c        float64
	mul, div *tensor.Tensor
}

var (
	none = partial{}     // a constant input, or a flat op
	one  = partial{c: 1} // the identity
)

// scaled is the constant partial c.
func scaled(c float64) partial { return partial{c: c} }

// times is the partial mul (a mask when mul is Bool).
func times(mul *tensor.Tensor) partial { return partial{c: 1, mul: mul} }

// over is the partial 1/div.
func over(div *tensor.Tensor) partial { return partial{c: 1, div: div} }

// apply returns d·∂ for a gradient or tangent d that broadcasts with the
// output, or nil for a zero partial. It multiplies before it divides, as
// the chain rule reads: g·mul/div·c.
func (p partial) apply(d *tensor.Tensor) *tensor.Tensor {
	if p.c == 0 {
		return nil
	}
	if p.mul != nil {
		if p.mul.DType() == tensor.Bool {
			d = mask(p.mul, d)
		} else {
			d = d.Mul(p.mul)
		}
	}
	if p.div != nil {
		d = d.Div(p.div)
	}
	switch p.c {
	case 1:
	case -1:
		d = d.Neg()
	default:
		d = d.MulScalar(p.c)
	}
	return d
}

// elementwise is the entry of an elementwise op with partials ∂ᵢ (the
// partial of input i at node n, computed only when needed). Reverse
// mode gives input i that requires grad the gradient g·∂ᵢ (which the
// engine sums to the input's shape); forward mode gives the output the
// tangent Σᵢ tᵢ·∂ᵢ over the inputs with a tangent, each tᵢ lifted to
// the output's rank past the batch dim so that it broadcasts as the
// input did.
func elementwise(partials func(n *tensor.Node, i int) partial) entry {
	return entry{
		reverse: func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			out := make([]*tensor.Tensor, len(n.Inputs))
			for i := range out {
				if needs(n, i) {
					out[i] = partials(n, i).apply(g)
				}
			}
			return out
		},
		forward: func(ts []*tensor.Tensor, n *tensor.Node) *tensor.Tensor {
			rank := 1 + n.Output().Dim()
			var sum *tensor.Tensor
			for i, t := range ts {
				if t == nil {
					continue
				}
				d := partials(n, i).apply(lift(t, rank))
				switch {
				case d == nil:
				case sum == nil:
					sum = d
				default:
					sum = sum.Add(d)
				}
			}
			return sum
		},
	}
}

// lift inserts size-1 dims after the batch dim of a tangent t of shape
// (B, s...) until it has rank dims, so that s broadcasts against a
// tensor of rank-1 dims as it did without the batch dim.
func lift(t *tensor.Tensor, rank int) *tensor.Tensor {
	s := t.Shape()
	if len(s) >= rank {
		return t
	}
	shape := make([]int, 0, rank)
	shape = append(shape, s[0])
	for range rank - len(s) {
		shape = append(shape, 1)
	}
	return t.Reshape(append(shape, s[1:]...)...)
}

// batched returns dims shifted past the batch dim of a tangent.
func batched(dims []int) []int {
	out := make([]int, len(dims))
	for i, d := range dims {
		out[i] = d + 1
	}
	return out
}

// batchOf returns the batch size of the tangents (the first non-nil).
func batchOf(ts []*tensor.Tensor) int {
	for _, t := range ts {
		if t != nil {
			return t.Shape()[0]
		}
	}
	panic("autograd: a forward rule ran with no tangent")
}

// tangentOr returns ts[i], or a zero tangent for input i of n: a
// stride-0 view of (B, the input's shape), for linear rules that need
// every operand.
func tangentOr(ts []*tensor.Tensor, i int, n *tensor.Node) *tensor.Tensor {
	if ts[i] != nil {
		return ts[i]
	}
	in := n.Inputs[i]
	return zero(in).Expand(append([]int{batchOf(ts)}, in.Shape()...)...)
}

// batchIndex returns an index tensor for a tangent: index with a
// leading batch dim of size b (an expanded view).
func batchIndex(index *tensor.Tensor, b int) *tensor.Tensor {
	return index.Unsqueeze(0).Expand(append([]int{b}, index.Shape()...)...)
}

// needs reports whether input i of n requires grad. Reverse rules
// compute no gradient for other inputs (PyTorch's needs_input_grad):
// the engine would drop it, and under CreateGraph it would leave
// recorded nodes, holding what they saved, that nothing reaches.
func needs(n *tensor.Node, i int) bool {
	in := n.Inputs[i]
	return in != nil && in.RequiresGrad()
}

// grads is shorthand for a reverse rule's result.
func grads(gs ...*tensor.Tensor) []*tensor.Tensor { return gs }

// zero returns the 0-d zero of g's dtype on g's device.
func zero(g *tensor.Tensor) *tensor.Tensor { return tensor.Zeros(nil, tensor.Like(g)) }

// mask returns g where cond is true and 0 elsewhere.
func mask(cond, g *tensor.Tensor) *tensor.Tensor { return tensor.Where(cond, g, zero(g)) }
