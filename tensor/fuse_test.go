package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// withFusion runs f with fusion on or off, on the CPU for every size,
// and restores the settings.
func withFusion(on bool, f func()) {
	was := tensor.SetFusion(on)
	defer tensor.SetFusion(was)
	defer tensor.SetCPUFuseMin(0)()
	f()
}

// fuseOps are elementwise steps of random fusion programs: each combines
// pool values (shape [r, c]) with one another and with broadcast operands
// (a row [c], a column [r, 1], a 0-d scalar), with the number of ops it
// adds to a chain.
var fuseOps = []struct {
	ops int
	f   func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor
}{
	{3, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Mul(b).Add(a).Tanh() }},
	{4, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Sub(e.row).Div(b.Abs().AddScalar(1)) }},
	{3, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Mul(e.col).Sigmoid().MulScalar(2) }},
	{3, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Maximum(b).Sub(e.scalar).Clamp(-3, 3) }},
	{2, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return tensor.Addcmul(a, b, e.row, 0.3).Neg() }},
	{3, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Square().AddScalar(0.5).Sqrt() }},
	{2, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.ReLU().Sub(b.Exp().MulScalar(0.1)) }},
	{3, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.GELU().Mul(a).Add(b) }},
	{2, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Tanh().Mul(e.col.Sigmoid()) }},
	{1, func(e *fuseEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Mul(a) }},
}

type fuseEnv struct {
	pool             []*tensor.Tensor
	row, col, scalar *tensor.Tensor
}

// runFusionProgram runs steps of fuseOps (by index, on pool values a, b)
// on dev and returns the values it made, read back, and the longest
// chain of ops behind any value.
func runFusionProgram(dev tensor.Device, r, c int, in [][]float32, prog [][3]int) (out [][]float32, depth int) {
	tensor.Scope(func() {
		e := &fuseEnv{
			row:    tensor.New(in[0][:c], c).To(dev),
			col:    tensor.New(in[1][:r], r, 1).To(dev),
			scalar: tensor.Scalar(0.25, tensor.Float32, dev),
		}
		var depths []int
		for _, v := range in[2:] {
			e.pool = append(e.pool, tensor.New(v, r, c).To(dev))
			depths = append(depths, 0)
		}
		for _, s := range prog {
			op := fuseOps[s[0]]
			e.pool = append(e.pool, op.f(e, e.pool[s[1]], e.pool[s[2]]))
			d := max(depths[s[1]], depths[s[2]]) + op.ops
			depths = append(depths, d)
			depth = max(depth, d)
		}
		for _, t := range e.pool {
			out = append(out, t.Float32s())
		}
	})
	return out, depth
}

// TestFusionMatchesEager runs random elementwise programs (broadcast rows,
// columns and scalars included) with fusion off and on, on every device:
// the fused values agree with the eager ones within a few ulp per op of
// the longest chain, and on the CPU exactly, since each node runs its
// row's kernel.
func TestFusionMatchesEager(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		for si, sh := range [][2]int{{7, 33}, {1, 5}, {65, 64}, {3, 1}} {
			r, c := sh[0], sh[1]
			rng := rand.New(rand.NewPCG(11, uint64(si)))
			var in [][]float32
			for range 6 {
				v := make([]float32, r*c+r+c)
				for i := range v {
					v[i] = float32(rng.Float64()*4 - 2)
				}
				in = append(in, v[:max(r*c, r, c)])
			}
			var prog [][3]int
			for i := range 24 {
				prog = append(prog, [3]int{rng.IntN(len(fuseOps)), rng.IntN(4 + i), rng.IntN(4 + i)})
			}
			var ref, got [][]float32
			var depth int
			withFusion(false, func() { ref, _ = runFusionProgram(dev, r, c, in, prog) })
			withFusion(true, func() { got, depth = runFusionProgram(dev, r, c, in, prog) })
			tol := approx.Float32(4 * float64(depth)).WithScale(1)
			for i := range ref {
				for j := range ref[i] {
					g, w := float64(got[i][j]), float64(ref[i][j])
					if dev == tensor.CPU && math.Float32bits(got[i][j]) != math.Float32bits(ref[i][j]) ||
						!tol.Equal(g, w) {
						t.Fatalf("%v %dx%d value %d element %d: fused %v, eager %v", dev, r, c, i, j, g, w)
					}
				}
			}
		}
	}
}

// fusionDevices are the CPU and, when one opens, the GPU.
func fusionDevices(t *testing.T) []tensor.Device { return devtest.Devices(t) }

// TestFusionAllocatesOnlyResults checks that a chain's intermediates are
// never allocated and that it runs as one fused kernel.
func TestFusionAllocatesOnlyResults(t *testing.T) {
	withFusion(true, func() {
		a := tensor.Rand([]int{64, 64})
		b := tensor.Rand([]int{64})
		before := tensor.ReadCounters()
		y := a.Mul(b).Add(a).Tanh().MulScalar(3).Sub(b).Exp()
		y.Float32s()
		d := tensor.ReadCounters()
		if got := d.StorageBytes - before.StorageBytes; got != 64*64*4 {
			t.Errorf("a chain of 6 ops allocated %d bytes, want the result's %d", got, 64*64*4)
		}
		if k, ops := d.FusedKernels-before.FusedKernels, d.FusedOps-before.FusedOps; k != 1 || ops != 6 {
			t.Errorf("%d fused kernels computing %d ops, want 1 and 6", k, ops)
		}
	})
}

// TestFusionInPlace checks eager semantics around in-place ops: a pending
// result sees its inputs as they were when it was made, and an in-place
// op on a pending result applies to its value.
func TestFusionInPlace(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		withFusion(true, func() {
			x := tensor.New([]float32{1, 2, 3}).To(dev)
			y := x.MulScalar(2).AddScalar(1) // pending, reads x
			z := y.Mul(x)                    // pending, inlines y
			x.AddScalarInPlace(10)
			y.MulScalarInPlace(-1)
			got := [][]float32{x.Float32s(), y.Float32s(), z.Float32s()}
			want := [][]float32{{11, 12, 13}, {-3, -5, -7}, {3, 10, 21}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v: x, y, z = %v, want %v", dev, got, want)
			}
		})
	}
}

// TestFusionInPlaceInlines checks in-place ops whose operands are
// pending (one fused kernel written into the target, a strided view
// included) against the eager values, and Clone of a pending tensor.
func TestFusionInPlaceInlines(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		run := func() [][]float32 {
			p := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 2, 3).To(dev)
			q := tensor.New([]float32{1, 2, 3, 4, 5, 6}, 3, 2).To(dev)
			g := tensor.New([]float32{0.5, -1, 2}, 3).To(dev)
			// Scopes release the temporaries: a pending tensor still
			// alive when its input is modified in place is realized.
			tensor.Scope(func() { p.AddInPlace(g.Mul(g).AddScalar(1), -0.1) })
			tensor.Scope(func() { q.T().AddcmulInPlace(g.Exp(), p.Tanh(), 0.5) }) // a strided target
			c := tensor.ScopeResult(func() *tensor.Tensor { return g.Sigmoid().Clone() })
			g.MulScalarInPlace(2) // realizes c: it reads g
			return [][]float32{p.Float32s(), q.Float32s(), c.Float32s(), g.Float32s()}
		}
		var ref, got [][]float32
		withFusion(false, func() { ref = run() })
		before := tensor.ReadCounters()
		withFusion(true, func() { got = run() })
		if k := tensor.ReadCounters().FusedKernels - before.FusedKernels; k != 3 {
			t.Errorf("%v: %d fused kernels, want 3 (two in place, the clone)", dev, k)
		}
		checkFusedClose(t, dev, approx.Float32(16), got, ref)
	}
}

// TestFusionReleasesUnrealized checks that pending tensors dropped
// without being read hold no memory afterwards.
func TestFusionReleasesUnrealized(t *testing.T) {
	withFusion(true, func() {
		base := waitLive(-1)
		tensor.Scope(func() {
			a := tensor.Rand([]int{9, 5})
			for range 10 {
				a = a.Mul(a).AddScalar(1).Tanh()
			}
		})
		if n := waitLive(base); n > base {
			t.Errorf("%d storages live after the scope, %d before", n, base)
		}
	})
}

// TestFusionGradients checks that gradients through fused chains equal
// the eager ones, on every device.
func TestFusionGradients(t *testing.T) {
	for _, dev := range fusionDevices(t) {
		grads := func() [][]float32 {
			var out [][]float32
			tensor.Scope(func() {
				x := tensor.New([]float32{-1.5, -0.2, 0.3, 0.9, 2, 0.7}, 2, 3).To(dev).SetRequiresGrad(true)
				w := tensor.New([]float32{0.5, -1, 2}, 3).To(dev).SetRequiresGrad(true)
				h := x.Mul(w).Add(x).Tanh().Sub(w.Sigmoid()).Square()
				loss := h.Mul(x.Exp()).Sum()
				autograd.Backward(loss)
				out = [][]float32{loss.Float32s(), x.Grad().Float32s(), w.Grad().Float32s()}
				x.Release()
				w.Release()
			})
			return out
		}
		var ref, got [][]float32
		withFusion(false, func() { ref = grads() })
		withFusion(true, func() { got = grads() })
		checkFusedClose(t, dev, approx.Float32(64), got, ref)
	}
}

// TestGPUFusionOneDispatch checks that an elementwise chain with
// broadcasting and scalars records one dispatch on the GPU.
func TestGPUFusionOneDispatch(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	withFusion(true, func() {
		a := tensor.Rand([]int{7, 33}, tensor.On(dev))
		b := tensor.Rand([]int{33}, tensor.On(dev))
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		before := g.DispatchCount()
		y := a.Mul(b).Add(a).Tanh().MulScalar(3).Sub(b).ReLU()
		y.Float32s()
		if n := g.DispatchCount() - before; n != 1 {
			t.Errorf("a 6-op chain recorded %d dispatches, want 1", n)
		}
	})
}

// checkFusedClose reports the elements where the fused values got and
// the eager ones ref differ by more than tol.
func checkFusedClose(t *testing.T, dev tensor.Device, tol approx.Tol, got, ref [][]float32) {
	t.Helper()
	for i := range ref {
		for j := range ref[i] {
			if !tol.Equal(float64(got[i][j]), float64(ref[i][j])) {
				t.Errorf("%v: value %d element %d: fused %v, eager %v", dev, i, j, got[i][j], ref[i][j])
			}
		}
	}
}

// eagerOnly runs the rest of the test with fusion off: the test checks
// mechanics of the eager path (storage references, when a labelled
// kernel is recorded, which block a freed tensor leaves), which a pending
// result changes by holding its inputs until it is realized.
func eagerOnly(t *testing.T) {
	was := tensor.SetFusion(false)
	t.Cleanup(func() { tensor.SetFusion(was) })
}
