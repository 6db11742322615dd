package tensor

import (
	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// fusable reports whether a storage of n elements binds whole.
func (b *gpuBackend) fusable(n int) bool {
	return int64(n)*4 <= b.g.Caps().MaxStorageBindingSize
}

// fused records e into dst (any layout) as one dispatch of the elementwise template: each node
// is its row's WGSL expression (wgsl.Fused).
func (b *gpuBackend) fused(dst *Tensor, e *fexpr) {
	defer unpin(pin(e.leaves...))
	nodes := make([]wgsl.FusedNode, len(e.nodes))
	for k, n := range e.nodes {
		nodes[k] = wgsl.FusedNode{Args: n.args[:n.nargs], Out: wgslType(n.out), P0: n.p[0], P1: n.p[1]}
		switch {
		case n.konst:
			nodes[k].Expr = "p0"
		case n.ident:
			nodes[k].Expr = "x"
		default:
			nodes[k].Expr = n.op.info().wgslFor(n.ct)
		}
	}
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
	scalar := wgsl.F32
	if e.scalar == Int32 {
		scalar = wgsl.I32
	}
	name := e.label()
	k, err := wgsl.Fused(nodes, types, wgslType(dst.dtype), wgsl.ElementwiseArgs{Out: wlay(dst), In: lays, Alias: alias, ScalarType: scalar, Limits: b.lim})
	b.runBound(name, k, err, bufs)
}
