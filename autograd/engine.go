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
func fail(detail string, ts ...*tensor.Tensor) { failAs("Backward", tensor.ErrAutograd, detail, ts...) }

// failAs panics with a *tensor.Error for op of the given kind.
func failAs(op string, kind error, detail string, ts ...*tensor.Tensor) {
	panic(tensor.NewError(op, kind, detail, ts...))
}

// run is the engine. It discovers the part of the graph that leads to y
// from tensors requiring grad, counts how many consumers each tensor has
// there, and then processes tensors in reverse topological order: a
// tensor's gradient is complete once all its consumers have passed
// theirs back. For Grad, only the part of the graph between y and xs
// runs (PyTorch's exec_info): other nodes keep their saved tensors.
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
	} else if !slices.Equal(g.Shape(), y.Shape()) || g.DType() != y.DType() || g.Device() != y.Device() {
		fail("GradOutput must have the output's shape, dtype and device", y, g)
	}

	wanted := map[*tensor.Tensor][]int{}
	for i, x := range xs {
		if !x.RequiresGrad() {
			fail(fmt.Sprintf("input %d of Grad does not require grad", i), x)
		}
		wanted[x] = append(wanted[x], i)
	}
	results := make([]*tensor.Tensor, len(xs))
	deps, needed := discover(y, wanted, xs != nil)

	// Gradient tensors are shared: a rule may pass g on unchanged (Add),
	// or hand the same tensor to two inputs. owners counts the pending
	// entries of grads that hold each one, and kept marks those the
	// caller or a hook has seen; the engine releases only gradients that
	// neither holds.
	owners := make(map[*tensor.Tensor]int, len(deps))
	kept := map[*tensor.Tensor]bool{}
	if c.gradOutput != nil {
		kept[g] = true
	}
	var garbage []*tensor.Tensor
	collect := func() {
		if !c.createGraph { // the backward graph may still need them
			for _, t := range garbage {
				if t != nil && owners[t] == 0 && !kept[t] {
					t.Release()
				}
			}
		}
		garbage = garbage[:0]
	}

	body := func() {
		grads := make(map[*tensor.Tensor]*tensor.Tensor, len(deps)+1)
		grads[y] = g
		owners[g] = 1
		ready := []*tensor.Tensor{y}
		for len(ready) > 0 {
			t := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			gt := grads[t]
			delete(grads, t)
			owners[gt]--
			if hooks := t.Hooks(); len(hooks) > 0 {
				kept[gt] = true // a hook may keep what it is given
				for _, h := range hooks {
					if r := h(gt); r != nil {
						gt = r
						kept[gt] = true
					}
				}
			}
			if is, ok := wanted[t]; ok {
				for _, i := range is {
					results[i] = gt
				}
				kept[gt] = true
			} else if xs == nil && t.RetainsGrad() {
				// keeps its own reference; takes gt over when nothing else holds it
				accumulate(t, gt, c.createGraph, owners[gt] == 0 && !kept[gt])
			}
			garbage = append(garbage, gt)
			n := t.Source()
			if n == nil || (needed != nil && !needsAny(needed, n.Inputs)) {
				collect()
				continue
			}
			ins := applyRule(n, gt)
			for i, in := range n.Inputs {
				if in == nil || !in.RequiresGrad() || (needed != nil && !needed[in]) {
					continue
				}
				if gi := ins[i]; gi != nil {
					cg := conform(gi, in)
					if prev := grads[in]; prev != nil {
						sum := prev.Add(cg)
						owners[prev]--
						garbage = append(garbage, prev, cg)
						cg = sum
					}
					grads[in] = cg
					owners[cg]++
				}
				if deps[in]--; deps[in] == 0 {
					if grads[in] == nil {
						grads[in] = tensor.ZerosLike(in)
						owners[grads[in]]++
					}
					ready = append(ready, in)
				}
			}
			if !c.retainGraph {
				n.Free()
			}
			// What the rule returned for inputs that take no gradient,
			// or before summing to an input's shape, is garbage too.
			garbage = append(garbage, ins...)
			collect()
		}
	}
	// The rules compute in y's context (tensor.Context): without
	// CreateGraph they must not record, with it they must.
	if c.createGraph {
		y.Context().EnableGrad(body)
	} else {
		y.Context().NoGrad(body)
	}
	return results
}

// discover walks the graph behind y depth-first. It returns, for every
// tensor that requires grad there, the number of edges from its
// consumers (the dependency counts of the reverse walk), and, when
// pruning for Grad, which tensors lie on a path to a wanted one. It
// panics with ErrAutograd, before any gradient is computed, if it meets
// a node freed by an earlier backward.
func discover(y *tensor.Tensor, wanted map[*tensor.Tensor][]int, prune bool) (deps map[*tensor.Tensor]int, needed map[*tensor.Tensor]bool) {
	deps = map[*tensor.Tensor]int{}
	if prune {
		needed = map[*tensor.Tensor]bool{}
	}
	type frame struct {
		t    *tensor.Tensor
		next int // the next input to visit
	}
	seen := map[*tensor.Tensor]bool{y: true}
	stack := []frame{{t: y}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		n := f.t.Source()
		if n != nil && f.next == 0 && n.Freed() {
			// A freed node has forgotten its inputs, so whether the walk
			// needs it is unknown: refuse, as a second backward.
			n.Input(0) // panics with the "backward a second time" error
		}
		if n != nil && f.next < len(n.Inputs) {
			in := n.Inputs[f.next]
			f.next++
			if in != nil && in.RequiresGrad() {
				deps[in]++
				if !seen[in] {
					seen[in] = true
					stack = append(stack, frame{t: in})
				}
			}
			continue
		}
		// All inputs of f.t are done: it is needed if it is wanted or
		// leads to a wanted tensor.
		if prune {
			_, w := wanted[f.t]
			needed[f.t] = w || (n != nil && needsAny(needed, n.Inputs))
		}
		stack = stack[:len(stack)-1]
	}
	return deps, needed
}

// needsAny reports whether any of ins is needed.
func needsAny(needed map[*tensor.Tensor]bool, ins []*tensor.Tensor) bool {
	for _, in := range ins {
		if in != nil && needed[in] {
			return true
		}
	}
	return false
}

// applyRule runs the derivative rule of n's op for output gradient g.
func applyRule(n *tensor.Node, g *tensor.Tensor) []*tensor.Tensor {
	e, ok := rules[n.Op]
	if !ok || e.reverse == nil {
		fail("no derivative rule for " + n.Op.String())
	}
	gs := e.reverse(g, n)
	if len(gs) != len(n.Inputs) {
		panic(fmt.Sprintf("autograd: rule for %v returned %d gradients for %d inputs", n.Op, len(gs), len(n.Inputs)))
	}
	return gs
}

// conform makes a gradient match its input: summed over broadcast dims
// (an input that was broadcast in the forward pass receives the sum of
// the gradients of all its copies) and cast to the input's dtype.
func conform(g, in *tensor.Tensor) *tensor.Tensor {
	if !sameShape(g, in) {
		g = SumToShape(g, in.Shape())
	}
	if g.DType() != in.DType() {
		g = g.Cast(in.DType())
	}
	return g
}

// sameShape reports whether a and b have one shape, without copying
// either (conform runs once per gradient).
func sameShape(a, b *tensor.Tensor) bool {
	if a.Dim() != b.Dim() {
		return false
	}
	for d := range a.Dim() {
		if a.Size(d) != b.Size(d) {
			return false
		}
	}
	return true
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

// accumulate adds g to t's stored gradient. The first gradient is
// copied, as PyTorch's AccumulateGrad copies one it cannot steal: g may
// be an expanded view, or shared with another input's gradient or with
// GradOutput, and a leaf's Grad must be its own contiguous tensor that
// in-place updates (clipping, zeroing) can change alone. Like PyTorch,
// it steals what it can: when the engine holds g nowhere else (free)
// and g owns its memory (tensor.OwnsStorage), the Grad is a detached
// view of g, without a copy. Without CreateGraph the stored gradient is
// detached; with it, it keeps its history, so it can be differentiated
// again.
func accumulate(t, g *tensor.Tensor, createGraph, free bool) {
	if !createGraph && free && t.Grad() == nil && g.DType() == t.DType() && g.OwnsStorage() {
		t.SetGrad(g.Detach())
		return
	}
	if !createGraph {
		d := g.Detach()
		defer d.Release()
		g = d
	}
	if prev := t.Grad(); prev != nil {
		if !createGraph {
			prev = prev.Detach()
			defer prev.Release()
		}
		g = prev.Add(g)
	} else {
		g = g.Clone()
	}
	t.SetGrad(g)
}
