package tensor

import (
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// Elementwise fusion. With fusion on, an elementwise op (a row of the
// unary, binary or ternary family) does not run at once: its result is a
// pending storage holding an fexpr, a small DAG of op rows over realized
// input views (leaves), and an op whose input is pending inlines that
// expression into its own. The storage is realized (allocated and
// computed by one kernel: one GPU dispatch, one CPU pass) when anything
// else touches its memory: a backend call of any other op, a read, an
// in-place op on it or on one of its leaves (flushReaders), or when an
// expression would outgrow the limits below. The user sees eager
// semantics; intermediates that are only inlined are never allocated.
//
// Decisions depend only on the ops, shapes and dtypes, never on the GPU
// batch cap, so results are bitwise identical across caps.

// FusionEnv names the environment variable that turns fusion on ("on",
// "1") or off ("off", "0"); SetFusion overrides it.
const FusionEnv = "TESSERA_FUSION"

// fusionOn is the switch: 1 on, 0 off.
var fusionOn atomic.Bool

func init() {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(FusionEnv))) {
	case "1", "on", "true", "yes":
		fusionOn.Store(true)
	}
}

// SetFusion turns elementwise fusion on or off for the whole process and
// returns the previous setting. Tensors already pending stay pending and
// are realized as usual. The default comes from TESSERA_FUSION (off
// unless it says "on" or "1").
func SetFusion(on bool) (was bool) { return fusionOn.Swap(on) }

// Realize computes every pending tensor among ts now (fusion defers an
// elementwise op until its result is used; see SetFusion), so that
// timing or memory is measured where the caller wants it. Tensors that
// are not pending, and nil ones, are left as they are. It panics with
// ErrReleased for a tensor whose memory was released.
func Realize(ts ...*Tensor) {
	for _, t := range ts {
		if t != nil {
			t.storage("Realize").realize()
		}
	}
}

// Fusion reports whether elementwise fusion is on.
func Fusion() bool { return fusionOn.Load() }

// The limits of one fused expression: inputs bound (the GPU's storage
// buffers per stage, less the output) and ops.
const (
	maxFusedLeaves = wgsl.MaxFusedInputs
	maxFusedNodes  = 16
)

// Counters are process-wide counts of what ops allocated and ran, for
// reports per training step (take the difference of two readings).
type Counters struct {
	// StorageBytes and Storages count the memory allocated for tensors
	// (op results, created and realized fused tensors; views allocate
	// nothing), on every device.
	StorageBytes int64
	Storages     int64
	// FusedKernels counts fused expressions realized (one GPU dispatch
	// or CPU pass each) and FusedOps the elementwise ops they computed.
	FusedKernels int64
	FusedOps     int64
	// PendingOps counts elementwise ops deferred into an expression.
	PendingOps int64
}

var counters struct {
	storageBytes, storages, fusedKernels, fusedOps, pendingOps atomic.Int64
}

// ReadCounters returns the counters' current values.
func ReadCounters() Counters {
	return Counters{
		StorageBytes: counters.storageBytes.Load(), Storages: counters.storages.Load(),
		FusedKernels: counters.fusedKernels.Load(), FusedOps: counters.fusedOps.Load(),
		PendingOps: counters.pendingOps.Load(),
	}
}

// An fexpr is a pending elementwise expression: nodes in topological
// order, the last the result, over leaves, each a realized view laid out
// in the expression's shape (broadcast with stride 0).
type fexpr struct {
	mu     sync.Mutex // held while realizing
	shape  []int
	dtype  DType
	scalar DType // the dtype every numeric node computes in (Bool if none)
	leaves []*Tensor
	nodes  []fnode
}

// An fnode is one op of an expression: its row, its arguments (a leaf
// index -a-1 when a < 0, else an earlier node), its scalars as the
// backend receives them, the dtype it computes in (its arguments') and
// its result's dtype. A constant node has no op and no arguments.
type fnode struct {
	konst bool // a constant: p[0] as out, no row (a pending Full)
	ident bool // a copy of its one argument, no row (a pending Clone)
	op    Op
	args  [3]int
	nargs int
	p     [2]float64
	ct    DType
	out   DType
}

// fusable reports whether op's row can be a node computing in ct: a row
// with a WGSL expression and a CPU kernel for ct (the elementwise ops).
func fusable(op Op, ct DType) bool {
	row := op.info()
	return row.wgsl != "" && ct.valid() && row.cpu[ct] != nil
}

// fuse returns op's result as a pending tensor of dtype out and shape
// over inputs ins (already cast to ct and broadcast to shape), or nil
// when the op should run eagerly: fusion off, an op no row of which
// fuses, an empty result, or operands the device binds in ranges.
func fuse(op Op, p [2]float64, ct, out DType, shape []int, ins ...*Tensor) *Tensor {
	if !fusionOn.Load() || !fusable(op, ct) {
		return nil
	}
	dev := ins[0].Device()
	n := shapeNumel(op.String(), shape)
	if n == 0 || !backendOf(dev).fusable(n) {
		return nil
	}
	for _, x := range ins {
		if !backendOf(dev).fusable(x.ref.s.n) {
			return nil
		}
	}
	mustFit(op.String(), out, n, dev, ins...)
	scalar := Bool
	if ct != Bool {
		scalar = ct
	}
	e := build(op, p, ct, out, shape, scalar, ins, true)
	if e == nil { // too big inlined: compute the inputs first
		e = build(op, p, ct, out, shape, scalar, ins, false)
	}
	counters.pendingOps.Add(1)
	return newPendingTensor(e, dev)
}

// fuseConstant returns a pending tensor of shape filled with v (as a
// cast converts it to dt) on dev, or nil when fusion is off, dt is Bool
// or the tensor is empty or too big to bind whole: consumers inline the
// constant, so a scalar operand costs no kernel and no memory.
func fuseConstant(op string, shape []int, v float64, dt DType, dev Device) *Tensor {
	n := layout.Numel(shape)
	if !fusionOn.Load() || dt == Bool || n == 0 || !backendOf(dev).fusable(n) {
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
	if !fusionOn.Load() || n == 0 || !backendOf(t.Device()).fusable(n) || !backendOf(t.Device()).fusable(t.ref.s.n) {
		return nil
	}
	mustFit("Clone", t.dtype, n, t.Device(), t)
	e := &fexpr{shape: slices.Clone(t.shape), dtype: t.dtype, scalar: Bool}
	if _, ok := e.inline(t); !ok {
		// A realized t: a pending copy, computed when used (an in-place
		// update reading it inlines it and reads t).
		t.ref.s.realize()
		e.nodes = append(e.nodes, fnode{ident: true, args: [3]int{e.leaf(t)}, nargs: 1, ct: t.dtype, out: t.dtype})
	}
	counters.pendingOps.Add(1)
	return newPendingTensor(e, t.Device())
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
	if !fusionOn.Load() || !fusable(op, ct) || !slices.ContainsFunc(ins[1:], func(x *Tensor) bool { return x.ref.s.pend.Load() != nil }) {
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
		if l.ref.s == t.ref.s && (l.offset != t.offset || !slices.Equal(l.strides, t.strides)) {
			return false
		}
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
	}
	return "fused " + last.op.String()
}

// build makes the expression of op over ins, inlining pending inputs when
// inline is set. It returns nil when the result exceeds the limits. The
// leaves it returns are retained and registered as read by it.
func build(op Op, p [2]float64, ct, out DType, shape []int, scalar DType, ins []*Tensor, inline bool) *fexpr {
	size := 1
	for _, x := range ins {
		if pe := x.ref.s.pend.Load(); pe != nil && inline {
			size += len(pe.nodes)
		}
	}
	e := &fexpr{shape: slices.Clone(shape), dtype: out, scalar: scalar,
		nodes: make([]fnode, 0, min(size, maxFusedNodes)), leaves: make([]*Tensor, 0, 4)}
	node := fnode{op: op, p: p, ct: ct, out: out, nargs: len(ins)}
	for i, x := range ins {
		if inline {
			if a, in := e.inline(x); in {
				node.args[i] = a
				continue
			}
		}
		x.ref.s.realize()
		node.args[i] = e.leaf(x)
	}
	e.nodes = append(e.nodes, node)
	if len(e.leaves) > maxFusedLeaves || len(e.nodes) > maxFusedNodes {
		e.dropLeavesFrom(0)
		return nil
	}
	return e
}

// leaf adds the realized view x as a leaf (once per storage and layout),
// retaining its storage, and returns its argument index.
func (e *fexpr) leaf(x *Tensor) int {
	for j, l := range e.leaves {
		if l.ref.s == x.ref.s && l.offset == x.offset && slices.Equal(l.strides, x.strides) {
			return -j - 1
		}
	}
	x.ref.s.mustRetain("fuse")
	l := &Tensor{dtype: x.dtype, offset: x.offset, ref: &ref{s: x.ref.s, borrowed: true}}
	l.setLayout(x.shape, x.strides)
	e.leaves = append(e.leaves, l)
	return -len(e.leaves)
}

// inline copies the expression x is a view of into e when x is pending,
// x's view maps onto its result by broadcasting only, the scalar types
// agree and the sum fits the limits. It returns the argument index of the
// copied result.
func (e *fexpr) inline(x *Tensor) (int, bool) {
	s := x.ref.s
	pe := s.pend.Load()
	if pe == nil || (pe.scalar != Bool && e.scalar != Bool && pe.scalar != e.scalar) {
		return 0, false
	}
	if len(e.nodes)+len(pe.nodes)+1 > maxFusedNodes {
		return 0, false
	}
	// x is the producer's result itself (no leaf to re-lay), or a
	// broadcast view of it.
	var dims []int
	if x.offset != 0 || !slices.Equal(x.shape, pe.shape) || !layout.IsContiguous(x.shape, x.strides) {
		var ok bool
		if dims, ok = broadcastMap(x, pe.shape); !ok {
			return 0, false
		}
	}
	// Retain the producer's leaves, then check it is still pending: if
	// another goroutine realized it meanwhile, its leaves may be gone.
	var leafIdx [maxFusedLeaves]int
	nLeaves := len(e.leaves)
	for j, l := range pe.leaves {
		v := l
		if dims != nil {
			v = &Tensor{dtype: l.dtype, offset: l.offset, ref: l.ref}
			v.setLayout(x.shape, composeStrides(dims, l.strides, len(x.shape)))
		}
		if !l.ref.s.tryRetain() {
			e.dropLeavesFrom(nLeaves)
			return 0, false
		}
		leafIdx[j] = e.leaf(v)
		l.ref.s.release()
	}
	if s.pend.Load() != pe || len(e.leaves) > maxFusedLeaves {
		e.dropLeavesFrom(nLeaves)
		return 0, false
	}
	base := len(e.nodes)
	for _, n := range pe.nodes {
		for a := range n.nargs {
			if n.args[a] < 0 {
				n.args[a] = leafIdx[-n.args[a]-1]
			} else {
				n.args[a] += base
			}
		}
		e.nodes = append(e.nodes, n)
	}
	if pe.scalar != Bool {
		e.scalar = pe.scalar
	}
	return len(e.nodes) - 1, true
}

// dropLeavesFrom releases the leaves from index i on.
func (e *fexpr) dropLeavesFrom(i int) {
	for _, l := range e.leaves[i:] {
		l.ref.s.release()
	}
	e.leaves = e.leaves[:i]
}

// broadcastMap reports whether the view x (of a pending storage holding
// a contiguous result of shape ps at offset 0) reads that result by
// broadcasting only, and returns for each of x's dims the producer dim
// it walks, or -1 for a broadcast one.
func broadcastMap(x *Tensor, ps []int) ([]int, bool) {
	if x.offset != 0 || len(x.shape) < len(ps) {
		return nil, false
	}
	lead := len(x.shape) - len(ps)
	dims := make([]int, len(x.shape))
	stride := 1
	for d := len(ps) - 1; d >= 0; d-- {
		i := d + lead
		switch {
		case x.strides[i] == 0 && (ps[d] == 1 || x.shape[i] == 1):
			dims[i] = -1
		case x.shape[i] == ps[d] && (x.strides[i] == stride || ps[d] == 1):
			dims[i] = d
		default:
			return nil, false
		}
		stride *= ps[d]
	}
	for i := range lead {
		if x.strides[i] != 0 && x.shape[i] != 1 {
			return nil, false
		}
		dims[i] = -1
	}
	return dims, true
}

// composeStrides returns a producer leaf's strides in the consumer's
// dims: the leaf's stride of the producer dim each consumer dim walks, 0
// for broadcast ones.
func composeStrides(dims, leafStrides []int, rank int) []int {
	out := make([]int, rank)
	for i, d := range dims {
		if d >= 0 {
			out[i] = leafStrides[d]
		}
	}
	return out
}

// newPendingTensor returns a contiguous tensor of e's shape on dev whose
// storage holds no memory yet, only e; it registers the storage as a
// reader of e's leaves.
func newPendingTensor(e *fexpr, dev Device) *Tensor {
	s := &storage{dtype: e.dtype, device: dev, n: shapeNumel("fuse", e.shape)}
	s.refs.Store(1)
	s.pend.Store(e)
	liveStorages.Add(1)
	for _, l := range e.leaves {
		l.ref.s.addReader(s)
	}
	t := &Tensor{dtype: e.dtype}
	t.setLayout(e.shape, layout.ContiguousStrides(e.shape))
	t.attach(s, false)
	return t
}

// realize gives a pending storage its memory and computes it (one fused
// kernel), then drops the expression; nothing for a realized one. It is
// safe to call from several goroutines: one computes, the others wait.
func (s *storage) realize() {
	e := s.pend.Load()
	if e == nil || !s.tryRetain() {
		return
	}
	defer s.release()
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.pend.Load() != e {
		return
	}
	buf, err := alloc(s.dtype, s.n, s.device)
	if err != nil {
		panic(&Error{Op: e.label(), Err: err, Devices: []Device{s.device}})
	}
	countAlloc(s.dtype, s.n)
	s.buf = buf
	dst := &Tensor{dtype: s.dtype, ref: &ref{s: s, borrowed: true}}
	dst.setLayout(e.shape, layout.ContiguousStrides(e.shape))
	done := false
	defer func() {
		if !done { // the kernel failed: leave the storage pending
			s.buf = nil
			backendOf(s.device).free(s.dtype, buf)
		}
	}()
	backendOf(s.device).fused(dst, e)
	done = true
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)))
	s.pend.Store(nil)
	e.drop(s)
}

// memory returns the storage's buffer, realizing it first if it is
// pending.
func (s *storage) memory() any {
	if s.pend.Load() != nil {
		s.realize()
	}
	return s.buf
}

// drop releases e's leaves and unregisters s, e's storage, as their
// reader.
func (e *fexpr) drop(s *storage) {
	for _, l := range e.leaves {
		l.ref.s.removeReader(s)
		l.ref.s.release()
	}
}

// addReader records that the pending storage r reads s.
func (s *storage) addReader(r *storage) {
	s.rmu.Lock()
	s.readers = append(s.readers, r)
	s.rmu.Unlock()
}

func (s *storage) removeReader(r *storage) {
	s.rmu.Lock()
	if i := slices.Index(s.readers, r); i >= 0 {
		s.readers = slices.Delete(s.readers, i, i+1)
	}
	s.rmu.Unlock()
}

// flushReaders realizes every pending storage that reads s, before an
// in-place op writes s.
func (s *storage) flushReaders() {
	s.rmu.Lock()
	rs := slices.Clone(s.readers)
	s.rmu.Unlock()
	for _, r := range rs {
		r.realize()
	}
}
