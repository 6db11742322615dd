package tensor

import (
	"github.com/tessera-ml/tessera/cpu"
)

// fuseChunk is the number of elements a fused CPU pass computes per node
// before moving on: its temporaries stay in the L1 cache.
const fuseChunk = 1024

// A chunkFn computes n elements of an op over contiguous runs: dst from
// offset do, input k of in from offset io[k]. The buffers are the Go
// slices of the operands' dtypes, boxed once per pass.
type chunkFn func(dst any, do int, in *[3]any, io *[3]int, n int)

func (f fn1[S, D]) chunk(p [2]float64) chunkFn {
	g := f(p)
	return func(dst any, do int, in *[3]any, io *[3]int, n int) {
		d, x := dst.([]D)[do:do+n], in[0].([]S)[io[0]:io[0]+n]
		if g.Vec != nil {
			g.Vec(d, x)
			return
		}
		for i := range d {
			d[i] = g.F(x[i])
		}
	}
}

func (f fn2[S, D]) chunk(p [2]float64) chunkFn {
	g := f(p)
	return func(dst any, do int, in *[3]any, io *[3]int, n int) {
		d, x, y := dst.([]D)[do:do+n], in[0].([]S)[io[0]:io[0]+n], in[1].([]S)[io[1]:io[1]+n]
		if g.Vec != nil {
			g.Vec(d, x, y)
			return
		}
		for i := range d {
			d[i] = g.F(x[i], y[i])
		}
	}
}

func (f fn3[T]) chunk(p [2]float64) chunkFn {
	g := f(p)
	return func(dst any, do int, in *[3]any, io *[3]int, n int) {
		d := dst.([]T)[do : do+n]
		a, b, c := in[0].([]T)[io[0]:io[0]+n], in[1].([]T)[io[1]:io[1]+n], in[2].([]T)[io[2]:io[2]+n]
		if g.Vec != nil {
			g.Vec(d, a, b, c)
			return
		}
		for i := range d {
			d[i] = g.F(a[i], b[i], c[i])
		}
	}
}

// leafLoader moves a leaf's elements that are not one contiguous run
// into a temporary: n copies of buf[off] (a broadcast leaf, step 0) or a
// strided gather.
type leafLoader interface {
	alloc(n int) any
	load(tmp, buf any, off, step, n int)
	// store writes n elements of tmp to buf from off, step apart.
	store(buf any, off, step int, tmp any, n int)
	// constant is the chunk kernel of a constant node: v as a cast
	// converts it; copy that of an identity node.
	constant(v float64) chunkFn
	copy(dst any, do int, in *[3]any, io *[3]int, n int)
}

type loaderOf[T cpu.Elem] struct{}

func (loaderOf[T]) alloc(n int) any { return make([]T, n) }

func (loaderOf[T]) load(tmp, buf any, off, step, n int) {
	t, b := tmp.([]T)[:n], buf.([]T)
	if step == 0 {
		v := b[off]
		for i := range t {
			t[i] = v
		}
		return
	}
	for i := range t {
		t[i] = b[off+i*step]
	}
}

func (loaderOf[T]) store(buf any, off, step int, tmp any, n int) {
	b, t := buf.([]T), tmp.([]T)[:n]
	for i, v := range t {
		b[off+i*step] = v
	}
}

func (loaderOf[T]) copy(dst any, do int, in *[3]any, io *[3]int, n int) {
	copy(dst.([]T)[do:do+n], in[0].([]T)[io[0]:io[0]+n])
}

func (loaderOf[T]) constant(v float64) chunkFn {
	c := fromFloat64[T](v)
	return func(dst any, do int, _ *[3]any, _ *[3]int, n int) {
		d := dst.([]T)[do : do+n]
		for i := range d {
			d[i] = c
		}
	}
}

var leafLoaders = [numDTypes]leafLoader{Float32: loaderOf[float32]{}, Float64: loaderOf[float64]{}, Int32: loaderOf[int32]{}, Bool: loaderOf[bool]{}}

func (cpuBackend) fusable(int) bool { return true }

// fused computes e into dst (any layout) in one pass: rows of the output and the
// leaves as the elementwise kernels walk them, each cut into chunks of
// fuseChunk elements through which every node runs in order (its row's
// CPU kernel), temporaries of one chunk per node and goroutine.
func (cpuBackend) fused(dst *Tensor, e *fexpr) {
	defer unpin(pin(e.leaves...))
	fns := make([]chunkFn, len(e.nodes))
	for k, n := range e.nodes {
		switch {
		case n.konst:
			fns[k] = leafLoaders[n.out].constant(n.p[0])
		case n.ident:
			fns[k] = leafLoaders[n.out].copy
		default:
			fns[k] = cpuFor(n.op.String(), n.ct, &n.op.info().cpu).chunk(n.p)
		}
	}
	ls := make([]cpu.Layout, 1+len(e.leaves))
	ls[0] = lay(dst)
	bufs := make([]any, len(e.leaves))
	for j, l := range e.leaves {
		ls[j+1], bufs[j] = lay(l), l.ref.s.buf
	}
	out, last := dst.ref.s.buf, len(e.nodes)-1
	cpu.Rows(dst.shape, ls, dst.Numel()*len(e.nodes), func(steps []int) func(offs []int, n int) {
		chunk := min(fuseChunk, dst.Numel())
		temps := make([]any, len(e.nodes)) // node results; the last goes to out where it is a run
		for k, n := range e.nodes {
			if k < last || steps[0] != 1 {
				temps[k] = leafLoaders[n.out].alloc(chunk)
			}
		}
		leafTmp := make([]any, len(e.leaves)) // leaves that are no contiguous run
		for j, l := range e.leaves {
			if steps[j+1] != 1 {
				leafTmp[j] = leafLoaders[l.dtype].alloc(chunk)
			}
		}
		var in [3]any
		var io [3]int
		return func(offs []int, n int) {
			for c := 0; c < n; c += chunk {
				m := min(chunk, n-c)
				for j, t := range leafTmp {
					if t != nil {
						leafLoaders[e.leaves[j].dtype].load(t, bufs[j], offs[j+1]+c*steps[j+1], steps[j+1], m)
					}
				}
				for k, node := range e.nodes {
					for a := range node.nargs {
						switch arg := node.args[a]; {
						case arg >= 0:
							in[a], io[a] = temps[arg], 0
						case leafTmp[-arg-1] != nil:
							in[a], io[a] = leafTmp[-arg-1], 0
						default:
							in[a], io[a] = bufs[-arg-1], offs[-arg]+c
						}
					}
					if k == last && steps[0] == 1 {
						fns[k](out, offs[0]+c, &in, &io, m)
					} else {
						fns[k](temps[k], 0, &in, &io, m)
					}
				}
				if steps[0] != 1 { // a strided target (an in-place op on a view)
					leafLoaders[dst.dtype].store(out, offs[0]+c*steps[0], steps[0], temps[last], m)
				}
			}
		}
	})
}
