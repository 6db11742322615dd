package tensor

import (
	"math"
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

// FusionEnv names the environment variable that sets fusion: "0" or
// "off" turns it off; "1" or "on" fuses on every device (on the CPU,
// results of at least 16384 elements); unset, or anything else, fuses on
// GPUs only, the default. SetFusion overrides it.
const FusionEnv = "TESSERA_FUSION"

// fusionOn is the switch, on by default.
var fusionOn atomic.Bool

func init() {
	on, cpuMin := fusionSetting(os.Getenv(FusionEnv))
	fusionOn.Store(on)
	cpuFuseMin.Store(cpuMin)
}

// fusionSetting reads a FusionEnv value: whether fusion is on, and the
// least result size fused on the CPU (MaxInt64: GPUs only).
func fusionSetting(v string) (on bool, cpuMin int64) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "off", "false", "no":
		return false, math.MaxInt64
	case "1", "on", "true", "yes", "all":
		return true, cpuFuseMinSize
	}
	return true, math.MaxInt64
}

// SetFusion turns elementwise fusion on or off for the whole process and
// returns the previous setting; which devices fuse when it is on is
// TESSERA_FUSION's choice (GPUs only by default). Tensors already pending
// stay pending and are realized as usual.
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

// cpuFuseMin is the least result size fused on the CPU; by default
// none is (math.MaxInt64): measured on this 2-core machine, the chunked
// CPU pass is not yet faster than eager kernels (a.Mul(b).Add(a) on 16M
// elements 1.25x slower, the MLP step 1.07x), and below cpuFuseMinSize
// building an expression costs more than a kernel (the char-RNN step
// 1.4x slower). TESSERA_FUSION=1 fuses from cpuFuseMinSize on. On a GPU
// every size fuses: the dispatch is the cost. Products stay eager on the
// CPU too (fuseMatMul): deferring them so that the GEMM kernels add a
// linear layer's bias and ReLU as they store (branch cpu-epilogue)
// measured no faster on the MLP step (332 against 335 steps/s, 8
// interleaved runs), the passes saved being spent on the copy on write
// that the optimizer's update of weights still read by deferred products
// needs. The bias is added that way eagerly instead, by Addmm (which
// nn.Linear calls), and the ReLU too by AddmmReLU, which nn.Sequential
// runs for a linear layer then a ReLU: the MLP step 1.3-2.7 % faster
// than with the ReLU apart (three paired runs, medians of 80 per-round
// ratios).
var cpuFuseMin atomic.Int64

const cpuFuseMinSize = 1 << 14

// fuses reports whether fusion is on for a result of n elements on dev.
func fuses(dev Device, n int) bool {
	return fusionOn.Load() && (dev.Kind != KindCPU || int64(n) >= cpuFuseMin.Load())
}

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
	hasMM  bool  // a node is a matmul (fuse_matmul.go)
	mat    mmMap // how shape maps onto the matmul's (B, M, N)
}

// An fnode is one op of an expression: its row, its arguments (a leaf
// index -a-1 when a < 0, else an earlier node), its scalars as the
// backend receives them, the dtype it computes in (its arguments') and
// its result's dtype. A constant node has no op and no arguments.
type fnode struct {
	konst bool // a constant: p[0] as out, no row (a pending Full)
	ident bool // a copy of its one argument, no row (a pending Clone)
	mm    bool // the matmul of its two leaves, no row (fuse_matmul.go)
	cast  bool // its argument (of dtype ct) cast to out, no row (GPUs only)
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
	if n == 0 || !fuses(dev, n) || !backendOf(dev).fusable(n) {
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
	if !fitsInlined(ins) { // compute the largest input, inline the others (inplace_pending.go)
		realizeLargestPending(ins)
	}
	e := build(op, p, ct, out, shape, scalar, ins, true)
	if e == nil { // too big inlined: compute the inputs first
		e = build(op, p, ct, out, shape, scalar, ins, false)
	}
	counters.pendingOps.Add(1)
	return newPendingTensor(e, dev)
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
		if l.ref.s == x.ref.s && l.offset == x.offset && slices.Equal(l.strides, x.strides) && slices.Equal(l.shape, x.shape) {
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
	if pe == nil || (pe.scalar != Bool && e.scalar != Bool && pe.scalar != e.scalar && (pe.usesPow() || e.usesPow())) {
		return 0, false // each node has its scalars' type, but pow_ has one variant per kernel
	}
	if pe.hasMM && (e.hasMM || e.dtype != Float32 || x.offset != 0 ||
		!slices.Equal(x.shape, pe.shape) || !layout.IsContiguous(x.shape, x.strides)) {
		return 0, false // one matmul, its product read element for element, a Float32 result
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
	if pe.scalar != Bool && (e.scalar == Bool || pe.usesPow()) {
		e.scalar = pe.scalar
	}
	if pe.hasMM {
		e.hasMM, e.mat = true, pe.mat
	}
	return len(e.nodes) - 1, true
}

// usesPow reports whether a node of e calls the prelude's pow_, whose
// variant the kernel's scalar type (e.scalar) picks.
func (e *fexpr) usesPow() bool {
	for _, n := range e.nodes {
		if !n.mm && strings.Contains(n.expr(), "pow_(") {
			return true
		}
	}
	return false
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
