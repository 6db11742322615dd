package autograd

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// JVP returns y = f(xs) and the Jacobian-vector product jv = J·v of f at
// xs in the direction vs, Σᵢ ∂f/∂xᵢ·vᵢ, as torch.func.jvp. It is
// computed in forward mode: f runs once, and the tangents vs are pushed
// through the ops it ran, in the order it ran them, each op's forward
// rule applied to the tangents of its inputs; no reverse pass and no
// finite differences.
//
// vs holds one tangent per input, with the input's shape, dtype and
// device; nil stands for a zero tangent, and integer and bool inputs
// (indices, masks) take none. jv has y's shape and dtype, zero where y
// does not depend on xs. f runs with grad mode on in the contexts of xs
// (other contexts keep theirs); tensors it captures (parameters) are
// constants to the derivative.
//
// When nothing else requires grad (no input or tangent, and no tensor f
// captures), JVP frees the graph f recorded and returns y and jv cut
// from any graph. Otherwise y and jv keep their graphs, so they can be
// differentiated again, in either mode: Grad of jv with respect to a
// parameter f captured is reverse over forward, JVP inside f forward
// over forward.
//
// JVP panics with a *tensor.Error (ErrArgument, ErrShape, ErrDType,
// ErrDevice) when a tangent does not match its input.
func JVP(f func(xs []*tensor.Tensor) *tensor.Tensor, xs, vs []*tensor.Tensor) (y, jv *tensor.Tensor) {
	checkTangents("JVP", xs, vs)
	tr := newTrace("JVP", xs, single(f))
	defer tr.finish()
	tr.walk(vs, func() {
		ts := tr.push(unsqueezed(vs))
		y, jv = tr.result(0), unbatch(ts[0], tr.outs[0])
	})
	return y, jv
}

// VJP returns y = f(xs) and the vector-Jacobian products uᵀJ: for each
// input, the gradient of Σ y⊙u with respect to it, as torch.func.vjp.
// It is reverse mode (one backward pass through what f recorded). u has
// y's shape, dtype and device; nil stands for 1 when y has one element.
// An input y does not depend on gets zeros, an integer or bool input
// nil. f's context and the graph of the results are as for JVP. VJP
// panics with a *tensor.Error when u does not match y.
func VJP(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor, u *tensor.Tensor) (y *tensor.Tensor, vjp []*tensor.Tensor) {
	tr := newTrace("VJP", xs, single(f))
	defer tr.finish()
	out := tr.outs[0]
	switch {
	case u == nil && out.Numel() != 1:
		failAs("VJP", tensor.ErrShape, "u may be nil only when f returns a single element", out)
	case u != nil:
		checkLike("VJP", "u", u, out)
	}
	tr.walk([]*tensor.Tensor{u}, func() {
		ws, at := tr.floatSeeds()
		var gs []*tensor.Tensor
		if out.RequiresGrad() && len(ws) > 0 {
			var opts []Option
			if u != nil {
				opts = append(opts, GradOutput(u))
			}
			if tr.outer {
				opts = append(opts, CreateGraph())
			}
			gs = Grad(out, ws, opts...)
		}
		vjp = make([]*tensor.Tensor, len(xs))
		for k, i := range at {
			if gs != nil && gs[k] != nil {
				vjp[i] = gs[k]
			} else {
				vjp[i] = tensor.ZerosLike(xs[i])
			}
		}
		y = tr.result(0)
	})
	return y, vjp
}

// HVP returns y = f(xs), which must have one element, and the
// Hessian-vector products hvp[i] = Σⱼ ∂²f/∂xᵢ∂xⱼ·vⱼ (torch.func's
// jvp(grad(f)), forward over reverse): f's gradient is computed by a
// reverse pass that records its own ops (CreateGraph), and the tangents
// are pushed forward through f and that reverse pass together, so every
// op a reverse rule uses needs a forward rule too. hvp[i] has xs[i]'s
// shape (nil for integer and bool inputs); vs, f's context and the graph
// of the results are as for JVP. It panics with ErrShape when f's
// result has more than one element.
func HVP(f func(xs []*tensor.Tensor) *tensor.Tensor, xs, vs []*tensor.Tensor) (y *tensor.Tensor, hvp []*tensor.Tensor) {
	checkTangents("HVP", xs, vs)
	tr := newTrace("HVP", xs, gradient("HVP", f))
	defer tr.finish()
	tr.walk(vs, func() {
		ts := tr.push(unsqueezed(vs))
		y = tr.result(0)
		hvp = make([]*tensor.Tensor, len(xs))
		_, at := tr.floatSeeds()
		for k, i := range at {
			hvp[i] = unbatch(ts[1+k], tr.outs[1+k])
		}
	})
	return y, hvp
}

// Jacobian returns the Jacobian of f at xs, one block per input:
// jac[i] has shape y.Shape() ++ xs[i].Shape() and holds ∂y[o]/∂xs[i][k]
// (torch.autograd.functional.jacobian's layout); nil for integer and
// bool inputs. It runs f once and pushes the basis vectors of each input
// through it in forward mode, batched: a chunk of basis vectors travels
// as the leading batch dim of the tangents, so one push computes many
// columns. Every op's forward rule takes batched tangents, so no op
// falls back to one push per basis vector; chunks only bound memory
// (each tangent stays under 2²⁰ elements, or holds one basis vector).
// Meant for small functions. f's context and the graph of the results
// are as for JVP.
func Jacobian(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor) []*tensor.Tensor {
	tr := newTrace("Jacobian", xs, single(f))
	defer tr.finish()
	jac := make([]*tensor.Tensor, len(xs))
	tr.walk(nil, func() {
		_, at := tr.floatSeeds()
		for _, i := range at {
			jac[i] = tr.columns(i, []int{0})[0]
		}
	})
	return jac
}

// Hessian returns the Hessian of f at xs, where f returns one element:
// hess[i][j] has shape xs[i].Shape() ++ xs[j].Shape() and holds
// ∂²f/∂xs[i]∂xs[j] (torch.autograd.functional.hessian's layout); the
// rows and columns of integer and bool inputs are nil. It is forward
// over reverse: f's gradient is recorded once (CreateGraph), then the
// basis vectors of each input are pushed through f and that reverse pass
// in batched chunks, as in Jacobian. It panics with ErrShape when f's
// result has more than one element.
func Hessian(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor) [][]*tensor.Tensor {
	tr := newTrace("Hessian", xs, gradient("Hessian", f))
	defer tr.finish()
	hess := make([][]*tensor.Tensor, len(xs))
	for i := range hess {
		hess[i] = make([]*tensor.Tensor, len(xs))
	}
	tr.walk(nil, func() {
		_, at := tr.floatSeeds()
		outs := make([]int, len(at))
		for k := range at {
			outs[k] = 1 + k
		}
		for _, j := range at {
			for k, block := range tr.columns(j, outs) {
				hess[at[k]][j] = block
			}
		}
	})
	return hess
}

// single adapts a function of one result to the trace's.
func single(f func([]*tensor.Tensor) *tensor.Tensor) func([]*tensor.Tensor) []*tensor.Tensor {
	return func(xs []*tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{f(xs)} }
}

// gradient returns the function xs ↦ (f(xs), ∂f/∂x for each float x),
// whose reverse pass records its ops so that tangents can be pushed
// through it.
func gradient(op string, f func([]*tensor.Tensor) *tensor.Tensor) func([]*tensor.Tensor) []*tensor.Tensor {
	return func(xs []*tensor.Tensor) []*tensor.Tensor {
		y := f(xs)
		if y == nil {
			return []*tensor.Tensor{nil}
		}
		if y.Numel() != 1 {
			failAs(op, tensor.ErrShape, "the function must return a single element", y)
		}
		var ws []*tensor.Tensor
		for _, x := range xs {
			if x.DType().IsFloat() {
				ws = append(ws, x)
			}
		}
		var gs []*tensor.Tensor
		if y.RequiresGrad() && len(ws) > 0 {
			gs = Grad(y, ws, CreateGraph())
		}
		out := []*tensor.Tensor{y}
		for k, w := range ws {
			if gs == nil || gs[k] == nil {
				out = append(out, tensor.ZerosLike(w))
			} else {
				out = append(out, gs[k])
			}
		}
		return out
	}
}

// floatSeeds returns the seeds of the float inputs and their indices.
func (tr *trace) floatSeeds() (seeds []*tensor.Tensor, at []int) {
	for i, x := range tr.xs {
		if x.DType().IsFloat() {
			seeds, at = append(seeds, tr.seeds[i]), append(at, i)
		}
	}
	return seeds, at
}

// basisBudget bounds the elements of one tangent in a batched push of
// basis vectors (Jacobian, Hessian).
var basisBudget = 1 << 20

// columns pushes the basis vectors of input i through the trace in
// batched chunks and returns, for each output index in outs, the block
// ∂outs[k]/∂xs[i] of shape outs[k].Shape() ++ xs[i].Shape().
func (tr *trace) columns(i int, outs []int) []*tensor.Tensor {
	x := tr.xs[i]
	n := x.Numel()
	widest := 1
	for _, t := range slices.Concat(tr.order, tr.outs, tr.xs) {
		widest = max(widest, t.Numel())
	}
	chunk := max(1, min(n, basisBudget/widest))
	parts := make([][]*tensor.Tensor, len(outs))
	for a := 0; a < n; a += chunk {
		c := min(chunk, n-a)
		seeds := make([]*tensor.Tensor, len(tr.xs))
		seeds[i] = basis(x, a, c)
		ts := tr.push(seeds)
		for k, o := range outs {
			d, y := ts[o], tr.outs[o]
			if d == nil {
				d = zero(y).Expand(withBatch(c, y.Shape())...)
			}
			parts[k] = append(parts[k], d)
		}
	}
	blocks := make([]*tensor.Tensor, len(outs))
	for k, o := range outs {
		blocks[k] = assemble(parts[k], tr.outs[o], x)
	}
	return blocks
}

// basis returns the basis vectors a, ..., a+c-1 of x's space (one-hot
// in x's row-major order) as a batch of tangents: shape (c, x's
// shape...), x's dtype, device and context.
func basis(x *tensor.Tensor, a, c int) *tensor.Tensor {
	n := x.Numel()
	data := make([]float64, c*n)
	for k := range c {
		data[k*n+a+k] = 1
	}
	return tensor.From(data, withBatch(c, x.Shape()), tensor.Like(x))
}

// assemble joins the pushed chunks, of shape (c, y's shape...), into
// the Jacobian block of y with respect to x: shape y.Shape() ++
// x.Shape(), contiguous.
func assemble(parts []*tensor.Tensor, y, x *tensor.Tensor) *tensor.Tensor {
	shape := append(y.Shape(), x.Shape()...)
	if len(parts) == 0 { // x is empty
		return tensor.Zeros(shape, tensor.Like(y))
	}
	cols := parts[0]
	if len(parts) > 1 {
		cols = tensor.Cat(parts, 0)
	}
	return cols.Reshape(x.Numel(), y.Numel()).T().Reshape(shape...).Contiguous()
}

// unsqueezed returns the tangents vs with a batch dim of one.
func unsqueezed(vs []*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = v.Unsqueeze(0)
		}
	}
	return out
}

// unbatch returns the tangent d of y, pushed with a batch dim of one,
// as a contiguous tensor of y's shape (zeros for a nil d).
func unbatch(d, y *tensor.Tensor) *tensor.Tensor {
	if d == nil {
		return tensor.ZerosLike(y)
	}
	return d.Reshape(y.Shape()...).Contiguous()
}

// checkTangents panics unless vs holds one tangent per input, each nil
// or with its input's shape, dtype and device, and nil for an integer or
// bool input.
func checkTangents(op string, xs, vs []*tensor.Tensor) {
	if len(vs) != len(xs) {
		failAs(op, tensor.ErrArgument, fmt.Sprintf("%d tangents for %d inputs (pass nil for a zero tangent)", len(vs), len(xs)))
	}
	for i, v := range vs {
		x := xs[i]
		switch {
		case v == nil:
		case x == nil:
			failAs(op, tensor.ErrArgument, fmt.Sprintf("input %d is nil", i))
		case !x.DType().IsFloat():
			failAs(op, tensor.ErrDType, fmt.Sprintf("input %d is %v: integer and bool inputs take no tangent (pass nil)", i, x.DType()), x, v)
		default:
			checkLike(op, fmt.Sprintf("tangent %d", i), v, x)
		}
	}
}

// checkLike panics unless v has x's shape, dtype and device.
func checkLike(op, what string, v, x *tensor.Tensor) {
	switch {
	case !slices.Equal(v.Shape(), x.Shape()):
		failAs(op, tensor.ErrShape, what+" must have the shape of what it goes with", x, v)
	case v.DType() != x.DType():
		failAs(op, tensor.ErrDType, what+" must have the dtype of what it goes with", x, v)
	case v.Device() != x.Device():
		failAs(op, tensor.ErrDevice, what+" must be on the device of what it goes with", x, v)
	}
}
