package tensor

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Attrs holds an op's arguments other than its input tensors. Each Op
// uses the fields its comment in op.go names.
type Attrs struct {
	Dims    []int     // reduced dims, or a permutation
	Dim     int       // the dim of a one-dim op
	KeepDim bool      //
	Shape   []int     // a shape the op needs to remember (the input's, usually)
	Start   int       // Slice
	End     int       //
	Step    int       //
	Scalars []float64 // scalar parameters (exponent, clamp bounds, ...)
	DType   DType     // Cast target
	Index   *Tensor   // indices of IndexSelect, Gather, ScatterAdd, MaxDim
	Sizes   []int     // Cat: the size of each piece along Dim
	Window  Window2d  // Unfold, Fold: the sliding window (resolved)
	Offsets []int     // ScaledDotProductAttention: the segments' offsets (nil: one segment)
	Causal  bool      // ScaledDotProductAttention: the causal mask
}

// A Node records how a tensor was computed: the op, its inputs and its
// arguments. It is plain data; package autograd reads it to run the
// chain rule backward. The inputs a derivative rule reads are saved: the
// Node keeps their memory alive until it is freed, and checks on access
// that no in-place op changed them since.
//
// Attrs points to the op's arguments; ops without any (Add, MatMul,
// most elementwise ops) share one zero Attrs, which no one may change,
// so that a node fits a small allocation.
type Node struct {
	Op     Op
	Inputs []*Tensor
	Attrs  *Attrs

	out      *Tensor
	versions []uint64 // versions of Inputs (and, last, of out) when recorded
	saved    *savedRefs
	freed    atomic.Bool
	vbuf     [3]uint64  // backing of versions for ops of up to two inputs
	ibuf     [3]*Tensor // backing of Inputs for ops of up to three inputs
}

// savedRefs holds the storage references a Node keeps for backward.
type savedRefs struct {
	ss      []*storage
	dropped atomic.Bool
	buf     [3]*storage // backing of ss for the common few saves
}

func (r *savedRefs) drop() {
	if r != nil && r.dropped.CompareAndSwap(false, true) {
		for _, s := range r.ss {
			s.release()
		}
	}
}

// Input returns input i for a derivative rule, after checking that no
// in-place op modified it since the forward pass (PyTorch's "modified by
// an inplace operation" error). It panics with ErrAutograd if the node
// was freed by an earlier backward, ErrIndex for an i out of range and
// ErrArgument for a nil node.
func (n *Node) Input(i int) *Tensor {
	n.checkLive()
	if i < 0 || i >= len(n.Inputs) {
		panic(&Error{Op: n.Op.String(), Err: ErrIndex, Detail: fmt.Sprintf("input %d of a node with %d inputs", i, len(n.Inputs))})
	}
	x := n.Inputs[i]
	if slices.Contains(opTable[n.Op].saves, i) && x.Version() != n.versions[i] {
		n.versionError(x, fmt.Sprintf("input %d", i), n.versions[i])
	}
	return x
}

// Output returns the tensor the node computed, checked like Input.
func (n *Node) Output() *Tensor {
	n.checkLive()
	if opTable[n.Op].savesOut && n.out.Version() != n.versions[len(n.versions)-1] {
		n.versionError(n.out, "its output", n.versions[len(n.versions)-1])
	}
	return n.out
}

func (n *Node) checkLive() {
	if n == nil {
		panic(&Error{Op: "Node", Err: ErrArgument, Detail: "the receiver is a nil *Node (a leaf has no Source)"})
	}
	if n.freed.Load() {
		panic(&Error{Op: n.Op.String(), Err: ErrAutograd, Detail: "trying to backward through the graph a second time " +
			"(or to read saved tensors after they were freed); saved tensors are freed after backward: " +
			"pass RetainGraph to the first backward if you need to backward twice"})
	}
}

func (n *Node) versionError(x *Tensor, which string, was uint64) {
	panic(&Error{Op: n.Op.String(), Err: ErrAutograd, Detail: fmt.Sprintf(
		"one of the variables needed for gradient computation has been modified by an inplace operation: "+
			"%s of %s, a tensor of shape %v %v, is at version %d; expected version %d instead",
		which, n.Op, x.shape, x.dtype, x.Version(), was),
		Shapes: [][]int{x.shape}, DTypes: []DType{x.dtype}, Devices: []Device{x.Device()}})
}

// Free releases what the node saved for backward and forgets its inputs
// (nothing for a nil node).
// Later access through Input panics with ErrAutograd.
func (n *Node) Free() {
	if n != nil && n.freed.CompareAndSwap(false, true) {
		n.saved.drop()
		// Forget the inputs too: a tensor the user keeps after backward
		// (a loss appended to a log) must not keep every activation of
		// its graph reachable.
		n.Inputs, n.ibuf = nil, [3]*Tensor{}
	}
}

// Freed reports whether Free ran (true for a nil node, which holds nothing).
func (n *Node) Freed() bool { return n == nil || n.freed.Load() }

// record places out, the result of op on inputs, in its context and
// Scope (settle) and, when that context's grad mode is on and an input
// requires grad, records how it was computed. It returns out.
func record(out *Tensor, op Op, attrs Attrs, inputs ...*Tensor) *Tensor {
	c := settle(out, inputs, attrs.Index)
	if !opTable[op].differentiable() {
		return out
	}
	needs := false
	for _, x := range inputs {
		if x != nil && x.requiresGrad {
			needs = true
			break
		}
	}
	// The grad mode last: only a graph that would be recorded asks it, so
	// that another goroutine's NoGrad of the default context fails only
	// ops whose recording it would stop (gradOn).
	if !needs || !c.gradOn(op.String()) {
		return out
	}
	info := opTable[op]
	n := &Node{Op: op, Attrs: &noAttrs, out: out}
	if !attrs.zero() {
		a := new(Attrs) // a copy, so that attrs itself stays on the caller's stack
		*a = attrs
		n.Attrs = a
	}
	if len(info.saves) > 0 || info.savesOut || attrs.Index != nil { // else nothing to hold (Add, views)
		n.saved = &savedRefs{}
	}
	// A copy of inputs, so that callers' slices stay on their stacks.
	if len(inputs) <= len(n.ibuf) {
		n.Inputs = n.ibuf[:len(inputs):len(inputs)]
	} else {
		n.Inputs = make([]*Tensor, len(inputs))
	}
	copy(n.Inputs, inputs)
	if len(inputs) < len(n.vbuf) {
		n.versions = n.vbuf[:len(inputs)+1]
	} else {
		n.versions = make([]uint64, len(inputs)+1)
	}
	for i, x := range inputs {
		n.versions[i] = x.Version()
	}
	n.versions[len(inputs)] = out.Version()
	// The safety net: a graph dropped without backward (or an op that
	// fails below) releases its saves with out's cleanup (collected):
	// registered now unless a Scope tracks out, which registers it when
	// out leaves while the node still holds its saves.
	if n.saved != nil {
		n.saved.ss = n.saved.buf[:0]
		out.ref.saved.Store(n.saved)
	}
	if out.frame.Load() == nil {
		out.guard()
	}
	for _, i := range opTable[op].saves {
		s := inputs[i].ref.s
		s.mustRetain(op.String())
		n.saved.ss = append(n.saved.ss, s)
	}
	if opTable[op].savesOut {
		out.ref.s.mustRetain(op.String())
		n.saved.ss = append(n.saved.ss, out.ref.s)
	}
	if attrs.Index != nil {
		attrs.Index.ref.s.mustRetain(op.String())
		n.saved.ss = append(n.saved.ss, attrs.Index.ref.s)
	}
	out.node = n
	out.requiresGrad = true
	return out
}

func (info opInfo) differentiable() bool { return !info.nondiff }

// noAttrs is the Attrs of every node whose op takes no arguments.
var noAttrs Attrs

// zero reports whether a holds no argument (every field zero).
// TestAttrsZeroSeesEveryField keeps it in step with the fields.
func (a *Attrs) zero() bool {
	return a.Dims == nil && a.Dim == 0 && !a.KeepDim && a.Shape == nil && a.Start == 0 && a.End == 0 && a.Step == 0 &&
		a.Scalars == nil && a.DType == 0 && a.Index == nil && a.Sizes == nil && a.Window == (Window2d{}) &&
		a.Offsets == nil && !a.Causal
}

// shapeIfRecorded returns a copy of x's shape for the Attrs of a view
// out of x alone when record will record it, else nil: a view made
// under NoGrad (a derivative rule's) need not copy what nothing reads.
func shapeIfRecorded(op Op, out, x *Tensor) []int {
	if !x.requiresGrad || !out.Context().gradOn(op.String()) {
		return nil
	}
	return slices.Clone(x.shape)
}

// Source returns the node that computed t, or nil for a leaf.
func (t *Tensor) Source() *Node {
	t.nonNil("Source", 0)
	return t.node
}

// RequiresGrad reports whether gradients flow to t.
func (t *Tensor) RequiresGrad() bool {
	t.nonNil("RequiresGrad", 0)
	return t.requiresGrad
}

// SetRequiresGrad marks a leaf as needing a gradient (a parameter) and
// returns it. Such leaves are never released by a Scope. It panics for a
// non-float tensor and for a tensor computed by an op (use Detach first).
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	t.nonNil("SetRequiresGrad", 0)
	if t.node != nil {
		fail("SetRequiresGrad", ErrAutograd, "only leaves can be marked; call Detach first for a computed tensor", t)
	}
	if on && !t.dtype.IsFloat() {
		fail("SetRequiresGrad", ErrDType, "only floating-point tensors can require gradients", t)
	}
	t.requiresGrad = on
	if on {
		t.Keep()
	}
	return t
}

// IsLeaf reports whether t was not computed by a recorded op.
func (t *Tensor) IsLeaf() bool {
	t.nonNil("IsLeaf", 0)
	return t.node == nil
}

// Grad returns the gradient accumulated into t by backward passes, or
// nil.
func (t *Tensor) Grad() *Tensor {
	t.nonNil("Grad", 0)
	return t.grad
}

// SetGrad replaces t's gradient (nil clears it). Package autograd and
// optimizers use it; the gradient is kept out of every Scope.
func (t *Tensor) SetGrad(g *Tensor) {
	checkGrad(t, g) // errors.go
	if g != nil {
		g.Keep()
	}
	if t.grad != nil && t.grad != g {
		t.grad.Release()
	}
	t.grad = g
}

// RetainGrad asks backward to store t's gradient in Grad even though t
// is not a leaf.
func (t *Tensor) RetainGrad() {
	t.nonNil("RetainGrad", 0)
	t.retainsGrad = true
}

// RetainsGrad reports whether backward stores t's gradient.
func (t *Tensor) RetainsGrad() bool {
	t.nonNil("RetainsGrad", 0)
	return t.retainsGrad || (t.node == nil && t.requiresGrad)
}

// RegisterHook adds a function backward calls with t's gradient before
// using it; a non-nil result replaces the gradient (torch's
// Tensor.register_hook). It returns the handle that removes the hook. A
// nil hook is ErrArgument.
func (t *Tensor) RegisterHook(h func(grad *Tensor) *Tensor) *HookHandle {
	t.nonNil("RegisterHook", 0)
	if h == nil {
		fail("RegisterHook", ErrArgument, "the hook is nil", t)
	}
	if t.hooks == nil {
		t.hooks = new([]func(*Tensor) *Tensor)
	}
	*t.hooks = append(*t.hooks, h)
	return &HookHandle{hooks: t.hooks, i: len(*t.hooks) - 1}
}

// A HookHandle takes off the hook RegisterHook added (torch's
// RemovableHandle).
type HookHandle struct {
	hooks *[]func(*Tensor) *Tensor // nil once removed
	i     int
}

// Remove takes the hook off its tensor: backward no longer calls it. It
// is idempotent and does nothing on a nil handle.
func (h *HookHandle) Remove() {
	if h == nil || h.hooks == nil {
		return
	}
	(*h.hooks)[h.i] = nil
	h.hooks = nil
}

// Hooks returns t's gradient hooks in registration order, those removed
// left out.
func (t *Tensor) Hooks() []func(*Tensor) *Tensor {
	t.nonNil("Hooks", 0)
	if t.hooks == nil {
		return nil
	}
	hs := *t.hooks
	for _, h := range hs {
		if h == nil { // some were removed: copy the others
			var live []func(*Tensor) *Tensor
			for _, h := range hs {
				if h != nil {
					live = append(live, h)
				}
			}
			return live
		}
	}
	return hs
}

// Detach returns a view of t's storage that is cut from the graph: a
// leaf that does not require grad.
func (t *Tensor) Detach() *Tensor {
	t.nonNil("Detach", 0)
	t.storage("Detach")
	out := viewOf(t, slices.Clone(t.shape), slices.Clone(t.strides), t.offset)
	settle(out, []*Tensor{t}, nil)
	return out
}
