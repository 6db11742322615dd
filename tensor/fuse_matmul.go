package tensor

import (
	"slices"

	"github.com/tessera-ml/tessera/device"
	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/kernels/wgsl"
)

// Matmul epilogues. On a GPU with fusion on, a Float32 matmul does not
// run at once either: its result is a pending expression of one matmul
// node over its two operands, and an elementwise op reading it (a bias,
// an activation, a gradient accumulation acc + a·b, an optimizer's
// in-place update p - lr·a·b) inlines it like any pending producer. The
// expression is realized as one matmul kernel that stores each product
// through the rest of the expression (wgsl.MatMulFused): the product is
// never allocated. An expression holds at most one matmul, inlined only
// where the consumer reads the product itself, element for element
// (no broadcast), and gives a Float32 result; anything else realizes
// the product first.

// An mmMap says how a matmul expression's shape maps onto the kernel's
// (B, M, N): a 3-D shape is it; a shape of at most 2 dims is an (m, n)
// matrix, a 1-D one a row (vec 1) or a column (vec 0), as asMatrix.
type mmMap struct {
	vec, m, n int
}

// as3 returns t, laid out in the expression's shape, as a (B, M, N)
// layout.
func (mp mmMap) as3(t *Tensor) wgsl.Layout { return wlay(mp.view3(t)) }

// fuseMatMul returns a·b (the backend's (B,M,K) and (B,K,N) views) as a
// pending tensor of shape, mapped onto (B, M, N) by mp, or nil when it
// runs eagerly: fusion off, not a GPU, not Float32, an empty result, or
// operands bound in ranges.
func fuseMatMul(a, b *Tensor, shape []int, mp mmMap) *Tensor {
	dev := a.Device()
	n := layout.Numel(shape)
	if dev.Kind != KindGPU || a.dtype != Float32 || n == 0 || !fuses(dev, n) {
		return nil
	}
	bk := backendOf(dev)
	if !bk.fusable(n) || !bk.fusable(a.ref.s.n) || !bk.fusable(b.ref.s.n) {
		return nil
	}
	if a.shape[2] == 1 {
		return fuseOuter(a, b, shape, mp)
	}
	mustFit("MatMul", Float32, n, dev, a, b)
	a.ref.s.realize()
	b.ref.s.realize()
	e := &fexpr{shape: slices.Clone(shape), dtype: Float32, scalar: Float32, mat: mp, hasMM: true}
	node := fnode{mm: true, nargs: 2, ct: Float32, out: Float32}
	node.args[0] = e.leaf(a)
	node.args[1] = e.leaf(b)
	e.nodes = append(e.nodes, node)
	counters.pendingOps.Add(1)
	return newPendingTensor(e, dev)
}

// fuseOuter returns a·b for K = 1, an outer product, as the pending
// elementwise product of a's column and b's row broadcast to the
// result (the same single rounding as the kernel's), so that it inlines
// anywhere an elementwise op does: a sum of outer products (an RNN's
// weight gradient accumulated over time steps) becomes one kernel per
// few terms rather than one per term.
func fuseOuter(a, b *Tensor, shape []int, mp mmMap) *Tensor {
	col := &Tensor{dtype: a.dtype, offset: a.offset, ref: a.ref}
	row := &Tensor{dtype: b.dtype, offset: b.offset, ref: b.ref}
	switch {
	case len(shape) == 3: // (B, M, N)
		col.setLayout(shape, []int{a.strides[0], a.strides[1], 0})
		row.setLayout(shape, []int{b.strides[0], 0, b.strides[2]})
	case len(shape) == 2:
		col.setLayout(shape, []int{a.strides[1], 0})
		row.setLayout(shape, []int{0, b.strides[2]})
	case len(shape) == 1 && mp.vec == 0: // a column (m): n = 1
		col.setLayout(shape, []int{a.strides[1]})
		row.setLayout(shape, []int{0})
	case len(shape) == 1: // a row (n): m = 1
		col.setLayout(shape, []int{0})
		row.setLayout(shape, []int{b.strides[2]})
	default:
		col.setLayout(shape, nil)
		row.setLayout(shape, nil)
	}
	return fuse(OpMul, [2]float64{}, Float32, Float32, shape, col, row)
}

// fusedMatMul records e, an expression holding a matmul node, into dst:
// one matmul kernel storing the rest of e as its epilogue, or, when the
// kernel cannot take it (an in-place epilogue over several ranges of
// K), the product into a temporary and then e's elementwise part.
func (b *gpuBackend) fusedMatMul(dst *Tensor, e *fexpr) {
	defer unpin(pin(e.leaves...))
	mmAt := slices.IndexFunc(e.nodes, func(n fnode) bool { return n.mm })
	mm := e.nodes[mmAt]
	la, lb := e.leaves[-mm.args[0]-1], e.leaves[-mm.args[1]-1]
	bufs := map[string]device.Binding{"out": {Buf: dst.ref.s.buf.(*device.Buffer)}, "a": {Buf: gbuf(la)}, "b": {Buf: gbuf(lb)}}
	out := e.mat.as3(dst)
	var epi *wgsl.MatMulEpilogue
	if len(e.nodes) > 1 {
		nodes, scalar := e.wgslNodes()
		epi = &wgsl.MatMulEpilogue{ScalarType: scalar}
		input := map[int]int{} // leaf → epilogue input
		for k := range nodes {
			if k == mmAt {
				continue
			}
			args := slices.Clone(nodes[k].Args)
			for i, a := range args {
				if a >= 0 {
					continue
				}
				j, ok := input[-a-1]
				if !ok {
					j = len(epi.In)
					input[-a-1] = j
					l := e.leaves[-a-1]
					alias := l.ref.s == dst.ref.s
					epi.In, epi.InTypes, epi.Alias = append(epi.In, e.mat.as3(l)), append(epi.InTypes, wgslType(l.dtype)), append(epi.Alias, alias)
					if !alias {
						bufs[wgsl.InputName(j)] = device.Binding{Buf: gbuf(l)}
					}
				}
				args[i] = -j - 1
			}
			nodes[k].Args = args
		}
		// The product is the input after the others: the matmul node
		// becomes a copy of it.
		nodes[mmAt] = wgsl.FusedNode{Expr: "x", Args: []int{-len(epi.In) - 1}, Out: wgsl.F32}
		epi.Nodes = nodes
	}
	p, err := wgsl.MatMulFused(out, wlay(la), wlay(lb), epi, b.lim)
	if err != nil && epi != nil {
		b.fusedMatMulSplit(dst, e, mmAt)
		return
	}
	b.check("MatMul", err)
	for _, k := range p.Kernels {
		b.runBound(e.label(), k, nil, bufs)
	}
}

// fusedMatMulSplit records e into dst as two kernels: the product into
// a temporary, then e's elementwise part with the product as a leaf.
func (b *gpuBackend) fusedMatMulSplit(dst *Tensor, e *fexpr, mmAt int) {
	mm := e.nodes[mmAt]
	tmp := newTensor(Float32, e.shape, b.dev)
	defer tmp.Release()
	b.matmul(e.mat.view3(tmp), e.leaves[-mm.args[0]-1], e.leaves[-mm.args[1]-1])
	rest := &fexpr{shape: e.shape, dtype: e.dtype, scalar: e.scalar, nodes: slices.Clone(e.nodes)}
	leafOf := map[int]int{}
	use := func(l *Tensor, old int) int {
		j, ok := leafOf[old]
		if !ok {
			j = len(rest.leaves)
			leafOf[old] = j
			rest.leaves = append(rest.leaves, l)
		}
		return -j - 1
	}
	for k := range rest.nodes {
		n := &rest.nodes[k]
		if k == mmAt {
			*n = fnode{ident: true, nargs: 1, ct: Float32, out: Float32}
			n.args[0] = use(tmp, -1)
			continue
		}
		for i := range n.nargs {
			if a := n.args[i]; a < 0 {
				n.args[i] = use(e.leaves[-a-1], -a-1)
			}
		}
	}
	b.fused(dst, rest)
}

// view3 returns t, laid out in the expression's shape, as a (B, M, N)
// view for a backend call (asMatrix's bare view for 2 dims or fewer).
func (mp mmMap) view3(t *Tensor) *Tensor {
	if len(t.shape) == 3 {
		return t
	}
	return t.asMatrix(mp.vec, mp.m, mp.n)
}

// expr is the WGSL expression of an elementwise node.
func (n fnode) expr() string {
	switch {
	case n.konst:
		return "p0"
	case n.ident:
		return "x"
	case n.cast:
		return castExpr(n.ct, n.out)
	}
	return n.op.info().wgslFor(n.ct)
}
