package autograd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// A trace is f's computation recorded at seeds that stand for its
// inputs, ready for tangents to be pushed through it in the order it
// was computed (forward mode). Package tensor records a node for every
// op computed, while grad mode is on, from a tensor that requires grad;
// so f runs once on seeds that require grad, and the nodes between the
// seeds and f's outputs are the program whose derivative forward mode
// evaluates. One trace serves several pushes (Jacobian pushes the basis
// in chunks).
type trace struct {
	op    string           // the public function, for errors
	xs    []*tensor.Tensor // the caller's inputs
	seeds []*tensor.Tensor // what f saw for xs[i]
	made  []bool           // seeds[i] is a leaf made here, released by finish
	outs  []*tensor.Tensor // f's results
	order []*tensor.Tensor // the tensors f computed from the seeds, in evaluation order
	uses  map[*tensor.Tensor]int
	// outer: something outside the trace requires grad (an input, a
	// tangent, a parameter f uses), so the caller may differentiate the
	// results: the walk records the tangents' graph and finish keeps f's.
	outer bool
}

// newTrace runs f on seeds for xs with grad mode on in the contexts of
// xs, and orders the nodes it recorded. A float input that requires
// grad is seen through a view recorded from it (gradients flow back to
// it); any other float input through a fresh leaf that requires grad; an
// integer or bool input as it is (it takes no tangent).
func newTrace(op string, xs []*tensor.Tensor, f func([]*tensor.Tensor) []*tensor.Tensor) *trace {
	tr := &trace{op: op, xs: xs, seeds: make([]*tensor.Tensor, len(xs)), made: make([]bool, len(xs))}
	for i, x := range xs {
		if x == nil {
			failAs(op, tensor.ErrArgument, fmt.Sprintf("input %d is nil", i))
		}
		tr.outer = tr.outer || x.RequiresGrad()
	}
	within(contexts(xs), true, func() {
		for i, x := range xs {
			switch {
			case !x.DType().IsFloat():
				tr.seeds[i] = x
			case x.RequiresGrad():
				tr.seeds[i] = x.View(x.Shape()...)
			default:
				tr.seeds[i] = x.Detach().SetRequiresGrad(true)
				tr.made[i] = true
			}
		}
		tr.outs = f(tr.seeds)
	})
	for i, y := range tr.outs {
		if y == nil {
			tr.finish()
			failAs(op, tensor.ErrArgument, fmt.Sprintf("the function returned nil (output %d)", i))
		}
	}
	tr.order, tr.uses = tr.discover()
	return tr
}

// discover walks the graph behind the outputs depth-first, down to the
// seeds, and returns the tensors computed from the seeds in an order
// where every tensor follows its inputs (the order of evaluation), and
// how many times each is used there or returned. A leaf that requires
// grad other than a seed (or a node freed by a backward pass) makes the
// trace outer.
func (tr *trace) discover() ([]*tensor.Tensor, map[*tensor.Tensor]int) {
	live := map[*tensor.Tensor]bool{} // computed from a seed
	for i, s := range tr.seeds {
		if tr.xs[i].DType().IsFloat() {
			live[s] = true
		}
	}
	uses := map[*tensor.Tensor]int{}
	var order []*tensor.Tensor
	seen := map[*tensor.Tensor]bool{}
	type frame struct {
		t    *tensor.Tensor
		next int
	}
	var stack []frame
	enter := func(t *tensor.Tensor) {
		if t == nil || seen[t] || live[t] || !t.RequiresGrad() {
			return
		}
		seen[t] = true
		if n := t.Source(); n == nil || n.Freed() {
			tr.outer = true // a parameter f uses, or an old graph
			return
		}
		stack = append(stack, frame{t: t})
	}
	for _, y := range tr.outs {
		enter(y)
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			n := f.t.Source()
			if f.next < len(n.Inputs) {
				f.next++
				enter(n.Inputs[f.next-1])
				continue
			}
			stack = stack[:len(stack)-1]
			for _, in := range n.Inputs {
				if live[in] {
					live[f.t] = true
					uses[in]++
				}
			}
			if live[f.t] {
				order = append(order, f.t)
			}
		}
	}
	for _, y := range tr.outs {
		if live[y] {
			uses[y]++
		}
	}
	return order, uses
}

// push propagates tangents through the trace: seedTangents[i] is the
// tangent of xs[i] with a leading batch dim (nil for zero), and the
// result holds the tangent of each output in the same form (nil for
// zero). It applies each recorded node's forward rule, in the order f
// computed them, to the tangents of the node's inputs: the derivative's
// linear maps composed in evaluation order, never transposed. Tangents
// are released as soon as no later node needs them. Call it inside
// tr.walk.
func (tr *trace) push(seedTangents []*tensor.Tensor) []*tensor.Tensor {
	if !slices.ContainsFunc(seedTangents, func(d *tensor.Tensor) bool { return d != nil }) {
		return make([]*tensor.Tensor, len(tr.outs)) // every tangent is zero
	}
	b := batchOf(seedTangents)
	tan := map[*tensor.Tensor]*tensor.Tensor{}
	owners := map[*tensor.Tensor]int{} // the entries of tan holding each tangent
	release := func(d *tensor.Tensor) {
		if d != nil && owners[d] == 0 && !tr.outer { // the tangents' graph may still need them
			d.Release()
		}
	}
	set := func(t, d *tensor.Tensor) {
		tan[t] = d
		owners[d]++
	}
	left := maps.Clone(tr.uses) // the uses still to come
	used := func(t *tensor.Tensor) {
		if left[t]--; left[t] == 0 {
			if d := tan[t]; d != nil {
				delete(tan, t)
				owners[d]--
				release(d)
			}
		}
	}
	for i, d := range seedTangents {
		if d != nil && left[tr.seeds[i]] > 0 {
			set(tr.seeds[i], d)
		}
	}
	for _, t := range tr.order {
		n := t.Source()
		ts := make([]*tensor.Tensor, len(n.Inputs))
		some := false
		for i, in := range n.Inputs {
			ts[i] = tan[in]
			some = some || ts[i] != nil
		}
		if some {
			e := rules[n.Op]
			if e.forward == nil {
				failAs(tr.op, tensor.ErrAutograd, "no forward rule for "+n.Op.String(), t)
			}
			if r := e.forward(ts, n); r != nil {
				d := conformTangent(r, t, b, n.Op)
				set(t, d)
				if d != r {
					release(r)
				}
			}
		}
		for _, in := range n.Inputs {
			if _, ok := left[in]; ok {
				used(in)
			}
		}
	}
	out := make([]*tensor.Tensor, len(tr.outs))
	for i, y := range tr.outs {
		out[i] = tan[y]
	}
	return out
}

// conformTangent makes r, what op's forward rule returned, the tangent
// of t for batch size b: cast to t's dtype and expanded to (b, t's
// shape...).
func conformTangent(r, t *tensor.Tensor, b int, op tensor.Op) *tensor.Tensor {
	want := withBatch(b, t.Shape())
	if s := r.Shape(); len(s) != len(want) || (s[0] != b && s[0] != 1) {
		panic(fmt.Sprintf("autograd: the forward rule of %v returned a tangent of shape %v for an output of shape %v and batch %d", op, s, t.Shape(), b))
	}
	if r.DType() != t.DType() {
		r = r.Cast(t.DType())
	}
	if !slices.Equal(r.Shape(), want) {
		r = r.Expand(want...)
	}
	return r
}

// walk runs body, which pushes tangents, with grad mode on in the
// contexts of the inputs and of extra (the tangents) when the trace is
// outer, so that the tangents can be differentiated, and off otherwise.
func (tr *trace) walk(extra []*tensor.Tensor, body func()) {
	for _, t := range extra {
		tr.outer = tr.outer || (t != nil && t.RequiresGrad())
	}
	within(contexts(append(slices.Clone(tr.xs), extra...)), tr.outer, body)
}

// finish frees what the trace recorded when nothing outside needs it:
// the nodes f recorded (and what they saved) and the leaves made for the
// inputs. Outputs handed to the caller went through result first.
func (tr *trace) finish() {
	if tr.outer {
		return
	}
	for _, t := range tr.order {
		t.Source().Free()
	}
	for i, s := range tr.seeds {
		if tr.made[i] {
			s.Release()
		}
	}
}

// result returns output i for the caller: cut from the graph unless the
// trace is outer (finish frees that graph). An output that is a view of
// a leaf made for an input is copied: that leaf is kept (it requires
// grad), so its views borrow its memory, which goes when the leaf does
// (finish releases it).
func (tr *trace) result(i int) *tensor.Tensor {
	y := tr.outs[i]
	if !y.RequiresGrad() {
		return y
	}
	if !tr.outer {
		y = y.Detach()
	}
	for k, s := range tr.seeds {
		if tr.made[k] && y.SharesStorage(s) {
			return y.Clone() // records Copy when outer: walk turned grad mode on
		}
	}
	return y
}

// contexts returns the distinct contexts of ts (nil entries skipped).
func contexts(ts []*tensor.Tensor) []*tensor.Context {
	var cs []*tensor.Context
	for _, t := range ts {
		if t != nil && !slices.Contains(cs, t.Context()) {
			cs = append(cs, t.Context())
		}
	}
	return cs
}

// within runs body with grad mode on (or off) in every context of cs.
func within(cs []*tensor.Context, on bool, body func()) {
	if len(cs) == 0 {
		body()
		return
	}
	rest := func() { within(cs[1:], on, body) }
	if on {
		cs[0].EnableGrad(rest)
	} else {
		cs[0].NoGrad(rest)
	}
}
