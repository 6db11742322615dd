package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/internal/layout"
)

// fuseConstant returns a pending tensor of shape filled with v (as a
// cast converts it to dt) on dev, or nil when fusion is off, dt is Bool
// or the tensor is empty or too big to bind whole: consumers inline the
// constant, so a scalar operand costs no kernel and no memory.
func fuseConstant(op string, shape []int, v float64, dt DType, dev Device) *Tensor {
	n := layout.Numel(shape)
	if !fuses(dev, n) || dt == Bool || n == 0 || !backendOf(dev).fusable(n) {
		return nil
	}
	mustFit(op, dt, n, dev)
	e := &fexpr{shape: slices.Clone(shape), dtype: dt, scalar: dt, nodes: []fnode{{konst: true, p: [2]float64{v}, ct: dt, out: dt}}}
	counters.pendingOps.Add(1)
	return newPendingTensor(e, dev)
}

// fuseClone returns a copy of t as a pending tensor (no kernel, no
// memory until used): the same expression as t's when t is a pending
// result, else an identity over t. It returns nil when fusion is off or
// t is empty or too big to bind whole.
func fuseClone(t *Tensor) *Tensor {
	n := t.Numel()
	if !fuses(t.Device(), n) || n == 0 || !backendOf(t.Device()).fusable(n) || !backendOf(t.Device()).fusable(t.ref.s.n) {
		return nil
	}
	mustFit("Clone", t.dtype, n, t.Device(), t)
	e := &fexpr{shape: slices.Clone(t.shape), dtype: t.dtype, scalar: Bool}
	if pe := t.ref.s.pend.Load(); pe != nil && pe.hasMM {
		t.ref.s.realize() // a copy of a product: compute the product once
	}
	if _, ok := e.inline(t); !ok {
		// A realized t: a pending copy, computed when used (an in-place
		// update reading it inlines it and reads t).
		t.ref.s.realize()
		e.nodes = append(e.nodes, fnode{ident: true, args: [3]int{e.leaf(t)}, nargs: 1, ct: t.dtype, out: t.dtype})
	}
	counters.pendingOps.Add(1)
	return newPendingTensor(e, t.Device())
}

// fuseCast returns x cast to dt as a pending tensor on a GPU (a
// consumer such as a sum inlines the cast), or nil when fusion is off,
// x is not on a GPU, or is empty or too big to bind whole.
func fuseCast(x *Tensor, dt DType) *Tensor {
	n, dev := x.Numel(), x.Device()
	if dev.Kind != KindGPU || !fuses(dev, n) || n == 0 || !backendOf(dev).fusable(n) || !backendOf(dev).fusable(x.ref.s.n) {
		return nil
	}
	mustFit("Cast", dt, n, dev, x)
	e := &fexpr{shape: slices.Clone(x.shape), dtype: dt, scalar: Bool}
	node := fnode{cast: true, nargs: 1, ct: x.dtype, out: dt}
	if a, ok := e.inline(x); ok {
		node.args[0] = a
	} else {
		x.ref.s.realize()
		node.args[0] = e.leaf(x)
	}
	e.nodes = append(e.nodes, node)
	counters.pendingOps.Add(1)
	return newPendingTensor(e, dev)
}

// fuseInPlace computes op on ins (the target t first, then the operands
// cast to its dtype and broadcast to its shape) into t as one fused
// kernel that inlines the pending operands, and reports whether it did.
// It declines when fusion is off or no operand is pending (the eager
// kernel is then the one dispatch already). The caller flushed every
// pending reader of t (checkInPlace), so each leaf on t's storage has
// t's own layout: every element is read, then written, in place.
func fuseInPlace(op Op, p [2]float64, t *Tensor, ins ...*Tensor) bool {
	ct := t.dtype
	if !fuses(t.Device(), t.Numel()) || !fusable(op, ct) || !slices.ContainsFunc(ins[1:], func(x *Tensor) bool { return x.ref.s.pend.Load() != nil }) {
		return false
	}
	b := backendOf(t.Device())
	if t.Numel() == 0 || !b.fusable(t.ref.s.n) || slices.ContainsFunc(ins, func(x *Tensor) bool { return !b.fusable(x.ref.s.n) }) {
		return false
	}
	scalar := Bool
	if ct != Bool {
		scalar = ct
	}
	t.ref.s.realize()
	e := build(op, p, ct, ct, t.shape, scalar, ins, true)
	if e == nil {
		return false
	}
	defer e.drop(nil)
	for _, l := range e.leaves {
		if l.ref.s == t.ref.s && (l.offset != t.offset || !slices.Equal(l.strides, t.strides) || e.hasMM && !slices.Equal(l.shape, t.shape)) {
			return false
		}
	}
	if e.hasMM && slices.ContainsFunc(e.nodes, func(n fnode) bool {
		return n.mm && (e.leaves[-n.args[0]-1].ref.s == t.ref.s || e.leaves[-n.args[1]-1].ref.s == t.ref.s)
	}) {
		return false // the product reads t: other workgroups would see it half written
	}
	defer unpin(pin(t))
	b.fused(t, e)
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	return true
}

// mustFit panics, as allocating would, when a result of n elements of
// dt cannot be allocated on dev now: a pending result fails where the
// eager op fails, with the error the eager op gives (its memory is
// allocated later, when it is realized). The GPU asks its allocator
// (the block found goes back to its cache, ready for the realization).
func mustFit(op string, dt DType, n int, dev Device, ts ...*Tensor) {
	if dev.Kind == KindCPU {
		checkFits(op, dt, n, dev, ts...)
		return
	}
	buf, err := alloc(dt, n, dev)
	if err != nil {
		panic(&Error{Op: op, Err: err, Devices: []Device{dev}})
	}
	backendOf(dev).free(dt, buf)
}

// label names the kernel that realizes e, after its last op.
func (e *fexpr) label() string {
	last := e.nodes[len(e.nodes)-1]
	switch {
	case last.konst:
		return "fused fill"
	case last.ident:
		return "fused copy"
	case last.mm:
		return "fused MatMul"
	case last.cast:
		return "fused Cast"
	}
	return "fused " + last.op.String()
}
