package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// fusable reports whether a storage of n elements binds whole.
func (b *gpuBackend) fusable(n int) bool {
	return int64(n)*4 <= b.g.Caps().MaxStorageBindingSize
}

// fused records e into dst (any layout) as one dispatch of the elementwise template: each node
// is its row's WGSL expression (wgsl.Fused).
func (b *gpuBackend) fused(dst *Tensor, e *fexpr) {
	if e.hasMM {
		b.fusedMatMul(dst, e)
		return
	}
	defer unpin(pin(e.leaves...))
	nodes, scalar := e.wgslNodes()
	types := make([]string, len(e.leaves))
	lays := make([]wgsl.Layout, len(e.leaves))
	alias := make([]bool, len(e.leaves))
	bufs := map[string]device.Binding{"out": {Buf: dst.ref.s.buf.(*device.Buffer)}} // maybe being realized: not gbuf
	for j, l := range e.leaves {
		types[j], lays[j] = wgslType(l.dtype), wlay(l)
		if alias[j] = l.ref.s == dst.ref.s; !alias[j] { // an in-place op reads its target through the output
			bufs[wgsl.InputName(j)] = device.Binding{Buf: gbuf(l)}
		}
	}
	name := e.label()
	k, err := wgsl.Fused(nodes, types, wgslType(dst.dtype), wgsl.ElementwiseArgs{Out: wlay(dst), In: lays, Alias: alias, ScalarType: scalar, Limits: b.lim})
	b.runBound(name, k, err, bufs)
}

// wgslNodes are e's nodes for package wgsl's fused templates, and the
// scalar type they compute in.
func (e *fexpr) wgslNodes() ([]wgsl.FusedNode, string) {
	nodes := make([]wgsl.FusedNode, len(e.nodes))
	for k, n := range e.nodes {
		nodes[k] = wgsl.FusedNode{Args: n.args[:n.nargs], Out: wgslType(n.out), P0: n.p[0], P1: n.p[1], Expr: n.expr()}
		if n.ct == Int32 || n.ct == Float32 {
			nodes[k].Scalar = wgslType(n.ct)
		}
	}
	if e.scalar == Int32 {
		return nodes, wgsl.I32
	}
	return nodes, wgsl.F32
}

// reduceFused records op over x into dst as one reduce kernel whose
// prologue is x's pending expression, when x is a pending result read
// element for element (not a matmul), and reports whether it did. x
// stays pending: a later use realizes it as before.
func (b *gpuBackend) reduceFused(op Op, dst, x *Tensor) bool {
	s := x.ref.s
	e := s.pend.Load()
	if e == nil || e.hasMM || (x.dtype != Float32 && x.dtype != Int32) || x.offset != 0 ||
		!slices.Equal(x.shape, e.shape) || !layout.IsContiguous(x.shape, x.strides) || !s.tryRetain() {
		return false
	}
	defer s.release()
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.pend.Load() != e {
		return false
	}
	defer unpin(pin(append([]*Tensor{dst}, e.leaves...)...))
	nodes, scalar := e.wgslNodes()
	pro := &wgsl.Prologue{Nodes: nodes, ScalarType: scalar}
	bufs := map[string]*device.Buffer{"out": gbuf(dst)}
	for j, l := range e.leaves {
		pro.InTypes, pro.In = append(pro.InTypes, wgslType(l.dtype)), append(pro.In, wlay(l))
		bufs[wgsl.InputName(j)] = gbuf(l)
	}
	p, err := wgsl.ReduceFused(op.info().reduce.wgsl, wgslType(x.dtype), wlay(dst), x.shape, pro, b.lim)
	b.runPlan("fused "+op.String(), p, err, bufs)
	counters.fusedKernels.Add(1)
	counters.fusedOps.Add(int64(len(e.nodes)) + 1)
	return true
}
