package autograd

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// An Option changes how Backward and Grad run.
type Option func(*config)

type config struct {
	retainGraph bool
	createGraph bool
	gradOutput  *tensor.Tensor
}

// RetainGraph keeps the saved tensors after backward, so the same graph
// can be differentiated again (torch's retain_graph=True).
func RetainGraph() Option { return func(c *config) { c.retainGraph = true } }

// CreateGraph records the backward pass, so the gradients it returns can
// be differentiated again; it implies RetainGraph.
func CreateGraph() Option { return func(c *config) { c.createGraph, c.retainGraph = true, true } }

// GradOutput seeds backward with g, the gradient of some scalar with
// respect to the output (required when the output is not a scalar).
func GradOutput(g *tensor.Tensor) Option { return func(c *config) { c.gradOutput = g } }

// Backward computes the gradient of y (a scalar unless GradOutput is
// given) with respect to every leaf that requires grad, and adds it to
// the leaf's Grad, as torch.autograd.backward. Tensors that called
// RetainGrad also receive their gradient.
func Backward(y *tensor.Tensor, opts ...Option) {
	run(y, nil, opts)
}

// Grad returns the gradients of y with respect to xs, without touching
// any tensor's Grad, as torch.autograd.grad. An x that y does not depend
// on gets nil.
func Grad(y *tensor.Tensor, xs []*tensor.Tensor, opts ...Option) []*tensor.Tensor {
	return run(y, xs, opts)
}

// fail panics with a *tensor.Error of kind ErrAutograd.
func fail(detail string, ts ...*tensor.Tensor) {
	e := &tensor.Error{Op: "Backward", Err: tensor.ErrAutograd, Detail: detail}
	for _, t := range ts {
		e.Shapes = append(e.Shapes, t.Shape())
		e.DTypes = append(e.DTypes, t.DType())
		e.Devices = append(e.Devices, t.Device())
	}
	panic(e)
}

// run is the engine. It discovers the part of the graph that leads to y
// from tensors requiring grad, counts how many consumers each tensor has
// there, and then processes tensors in reverse topological order: a
// tensor's gradient is complete once all its consumers have passed
// theirs back.
func run(y *tensor.Tensor, xs []*tensor.Tensor, opts []Option) []*tensor.Tensor {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if !y.RequiresGrad() {
		fail("the tensor does not require grad and has no grad function (did it come from NoGrad, Detach, or leaves without SetRequiresGrad?)", y)
	}
	g := c.gradOutput
	if g == nil {
		if y.Numel() != 1 {
			fail("grad can be implicitly created only for scalar outputs; pass GradOutput", y)
		}
		g = tensor.OnesLike(y)
	} else if !slices.Equal(g.Shape(), y.Shape()) {
		fail("GradOutput must have the output's shape", y, g)
	}

	wanted := map[*tensor.Tensor]int{}
	for i, x := range xs {
		if !x.RequiresGrad() {
			fail(fmt.Sprintf("input %d of Grad does not require grad", i), x)
		}
		wanted[x] = i
	}
	results := make([]*tensor.Tensor, len(xs))

	// Count consumers within the reachable graph.
	deps := map[*tensor.Tensor]int{}
	seen := map[*tensor.Tensor]bool{y: true}
	stack := []*tensor.Tensor{y}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.Source()
		if n == nil {
			continue
		}
		if n.Freed() {
			n.Input(0) // panics with the "backward a second time" error
		}
		for _, in := range n.Inputs {
			if in == nil || !in.RequiresGrad() {
				continue
			}
			deps[in]++
			if !seen[in] {
				seen[in] = true
				stack = append(stack, in)
			}
		}
	}

	var release func(*tensor.Tensor)
	body := func() {
		grads := map[*tensor.Tensor]*tensor.Tensor{y: g}
		ready := []*tensor.Tensor{y}
		for len(ready) > 0 {
			t := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			gt := grads[t]
			delete(grads, t)
			for _, h := range t.Hooks() {
				if r := h(gt); r != nil {
					gt = r
				}
			}
			stored := false
			if i, ok := wanted[t]; ok {
				results[i] = gt
				stored = true
			} else if xs == nil && t.RetainsGrad() {
				accumulate(t, gt, c.createGraph)
				stored = c.createGraph // accumulate keeps its own reference otherwise
			}
			n := t.Source()
			if n == nil {
				if !stored {
					release(gt)
				}
				continue
			}
			ins := applyRule(n, gt)
			for i, in := range n.Inputs {
				if in == nil || !in.RequiresGrad() {
					continue
				}
				gi := ins[i]
				if gi != nil {
					gi = conform(gi, in)
					if prev := grads[in]; prev != nil {
						sum := prev.Add(gi)
						release(prev)
						if gi != gt {
							release(gi)
						}
						gi = sum
					}
					grads[in] = gi
				}
				if deps[in]--; deps[in] == 0 {
					if grads[in] == nil {
						grads[in] = tensor.ZerosLike(in)
					}
					ready = append(ready, in)
				}
			}
			if !c.retainGraph {
				n.Free()
			}
			if !stored && !held(grads, gt) {
				release(gt)
			}
		}
	}
	// Intermediate gradients are released as soon as they are consumed,
	// unless the backward pass itself is being recorded.
	release = func(t *tensor.Tensor) {
		if !c.createGraph && t != c.gradOutput {
			t.Release()
		}
	}
	if c.createGraph {
		tensor.EnableGrad(body)
	} else {
		tensor.NoGrad(body)
	}
	return results
}

// held reports whether g is the pending gradient of some tensor.
func held(grads map[*tensor.Tensor]*tensor.Tensor, g *tensor.Tensor) bool {
	for _, h := range grads {
		if h == g {
			return true
		}
	}
	return false
}

// applyRule runs the derivative rule of n's op for output gradient g.
func applyRule(n *tensor.Node, g *tensor.Tensor) []*tensor.Tensor {
	r, ok := rules[n.Op]
	if !ok {
		fail("no derivative rule for " + n.Op.String())
	}
	gs := r(g, n)
	if len(gs) != len(n.Inputs) {
		panic(fmt.Sprintf("autograd: rule for %v returned %d gradients for %d inputs", n.Op, len(gs), len(n.Inputs)))
	}
	return gs
}

// conform makes a gradient match its input: summed over broadcast dims
// (an input that was broadcast in the forward pass receives the sum of
// the gradients of all its copies) and cast to the input's dtype.
func conform(g, in *tensor.Tensor) *tensor.Tensor {
	g = SumToShape(g, in.Shape())
	if g.DType() != in.DType() {
		g = g.Cast(in.DType())
	}
	return g
}

// SumToShape sums g over the dims that broadcasting added or expanded to
// reach g's shape from shape, and returns a tensor of shape.
func SumToShape(g *tensor.Tensor, shape []int) *tensor.Tensor {
	gs := g.Shape()
	if slices.Equal(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	var dims []int
	for i := range gs {
		if i < lead || (shape[i-lead] == 1 && gs[i] != 1) {
			dims = append(dims, i)
		}
	}
	if len(dims) > 0 {
		g = g.SumDims(dims, true)
	}
	return g.Reshape(shape...)
}

// accumulate adds g to t's stored gradient.
func accumulate(t, g *tensor.Tensor, createGraph bool) {
	if prev := t.Grad(); prev != nil {
		if createGraph {
			g = prev.Add(g)
		} else {
			g = prev.Detach().Add(g)
		}
	} else if !createGraph {
		g = g.Detach()
	}
	t.SetGrad(g)
}
