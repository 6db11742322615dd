package autograd

import (
	"fmt"
	"slices"
	"sync"

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

	var wanted map[*tensor.Tensor][]int
	if xs != nil {
		wanted = map[*tensor.Tensor][]int{}
	}
	for i, x := range xs {
		if !x.RequiresGrad() {
			fail(fmt.Sprintf("input %d of Grad does not require grad", i), x)
		}
		wanted[x] = append(wanted[x], i)
	}
	results := make([]*tensor.Tensor, len(xs))
	w := getWalk()
	needed := w.discover(y, wanted, xs != nil)

	// Gradient tensors are shared: a rule may pass g on unchanged (Add),
	// or hand the same tensor to two inputs. held counts the pending
	// gradients (slot.grad) that are each one, and marks (heldKept)
	// those the caller or a hook has seen; the engine releases only
	// gradients that neither holds.
	held := w.held
	if c.gradOutput != nil {
		held[g] |= heldKept
	}
	collect := func() {
		if !c.createGraph { // the backward graph may still need them
			for _, t := range w.garbage {
				if t != nil && held[t] == 0 {
					t.Release()
				}
			}
		}
		clear(w.garbage)
		w.garbage = w.garbage[:0]
	}

	body := func() {
		w.slots[0].grad = g
		held[g]++
		ready := append(w.ready, 0)
		for len(ready) > 0 {
			si := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			t, gt := w.slots[si].t, w.slots[si].grad
			w.slots[si].grad = nil
			held[gt]--
			if hooks := t.Hooks(); len(hooks) > 0 {
				held[gt] |= heldKept // a hook may keep what it is given
				for _, h := range hooks {
					if r := h(gt); r != nil {
						gt = r
						held[gt] |= heldKept
					}
				}
			}
			if is, ok := wanted[t]; ok {
				for _, i := range is {
					results[i] = gt
				}
				held[gt] |= heldKept
			} else if xs == nil && t.RetainsGrad() {
				// keeps its own reference; takes gt over when nothing else holds it
				accumulate(t, gt, c.createGraph, held[gt] == 0)
			}
			w.garbage = append(w.garbage, gt)
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
				ii := w.index[in]
				s := &w.slots[ii]
				if gi := ins[i]; gi != nil {
					cg := conform(gi, in)
					switch prev := s.grad; {
					case prev == nil:
						s.grad = cg
						held[cg]++
					case !c.createGraph && held[prev] == 1 && ownedLike(prev, cg) && !fusesOn(prev):
						// Only this slot holds prev, and nothing else (no
						// view, no saved input) shares its memory: sum into
						// it, as PyTorch's engine does.
						prev.AddInPlace(cg, 1)
						w.garbage = append(w.garbage, cg)
					default:
						sum := prev.Add(cg)
						held[prev]--
						w.garbage = append(w.garbage, prev, cg)
						s.grad = sum
						held[sum]++
					}
				}
				if s.deps--; s.deps == 0 {
					if s.grad == nil {
						s.grad = tensor.ZerosLike(in)
						held[s.grad]++
					}
					ready = append(ready, ii)
				}
			}
			if !c.retainGraph {
				n.Free()
			}
			// What the rule returned for inputs that take no gradient,
			// or before summing to an input's shape, is garbage too.
			w.garbage = append(w.garbage, ins...)
			collect()
		}
		w.ready = ready
	}
	// The rules compute in y's context (tensor.Context): without
	// CreateGraph they must not record, with it they must.
	if c.createGraph {
		y.Context().EnableGrad(body)
	} else {
		y.Context().NoGrad(body)
	}
	putWalk(w) // not on a panic: a walk left half done is the collector's
	return results
}

// heldKept marks, in a walk's held counts, a gradient that the caller
// or a hook has seen: the engine never releases it.
const heldKept = 1 << 40

// A walk is the bookkeeping of one backward pass: a slot per tensor that
// requires grad in the graph behind y (the root's first), found by
// index, and the counts of the gradient tensors held. Walks are reused
// (getWalk), so that a training step's backward does not grow fresh
// maps for a graph of the same size as the last.
type walk struct {
	index   map[*tensor.Tensor]int // slot of each tensor
	slots   []slot
	held    map[*tensor.Tensor]int // pending slots holding each gradient, plus heldKept
	stack   []frame
	ready   []int
	garbage []*tensor.Tensor
}

// A slot is one tensor of the graph: its consumers not yet passed back
// (the dependency count of the reverse walk) and its gradient so far.
type slot struct {
	t    *tensor.Tensor
	deps int
	grad *tensor.Tensor
}

// A frame is one tensor on discover's depth-first stack.
type frame struct {
	slot int
	next int // the next input to visit
}

var walks = sync.Pool{New: func() any {
	return &walk{index: map[*tensor.Tensor]int{}, held: map[*tensor.Tensor]int{}}
}}

func getWalk() *walk { return walks.Get().(*walk) }

// putWalk forgets w's tensors and hands it back for reuse.
func putWalk(w *walk) {
	clear(w.index)
	clear(w.held)
	clear(w.slots)
	clear(w.garbage)
	w.slots, w.stack, w.ready, w.garbage = w.slots[:0], w.stack[:0], w.ready[:0], w.garbage[:0]
	walks.Put(w)
}

// discover walks the graph behind y depth-first. It gives every tensor
// that requires grad there a slot holding the number of edges from its
// consumers (the dependency counts of the reverse walk), y's first, and
// returns, when pruning for Grad, which tensors lie on a path to a
// wanted one. It panics with ErrAutograd, before any gradient is
// computed, if it meets a node freed by an earlier backward.
func (w *walk) discover(y *tensor.Tensor, wanted map[*tensor.Tensor][]int, prune bool) (needed map[*tensor.Tensor]bool) {
	if prune {
		needed = map[*tensor.Tensor]bool{}
	}
	w.index[y] = 0
	w.slots = append(w.slots, slot{t: y})
	w.stack = append(w.stack, frame{slot: 0})
	for len(w.stack) > 0 {
		f := &w.stack[len(w.stack)-1]
		t := w.slots[f.slot].t
		n := t.Source()
		if n != nil && f.next == 0 && n.Freed() {
			// A freed node has forgotten its inputs, so whether the walk
			// needs it is unknown: refuse, as a second backward.
			n.Input(0) // panics with the "backward a second time" error
		}
		if n != nil && f.next < len(n.Inputs) {
			in := n.Inputs[f.next]
			f.next++
			if in != nil && in.RequiresGrad() {
				i, seen := w.index[in]
				if !seen {
					i = len(w.slots)
					w.index[in] = i
					w.slots = append(w.slots, slot{t: in})
					w.stack = append(w.stack, frame{slot: i})
				}
				w.slots[i].deps++
			}
			continue
		}
		// All inputs of t are done: it is needed if it is wanted or
		// leads to a wanted tensor.
		if prune {
			_, wt := wanted[t]
			needed[t] = wt || (n != nil && needsAny(needed, n.Inputs))
		}
		w.stack = w.stack[:len(w.stack)-1]
	}
	return needed
}

// ownedLike reports whether the gradient so far, prev, can take g
// added in place: it owns its memory whole (tensor.OwnsStorage) and g
// has its shape and dtype.
func ownedLike(prev, g *tensor.Tensor) bool {
	return prev.DType() == g.DType() && sameShape(prev, g) && prev.OwnsStorage()
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

// fusesOn reports whether t's device fuses elementwise ops (a GPU with
// fusion on): there an out-of-place sum of gradients stays pending and
// several terms share one kernel, where summing in place would run one
// per term.
func fusesOn(t *tensor.Tensor) bool {
	return tensor.Fusion() && t.Device().Kind == tensor.KindGPU
}
