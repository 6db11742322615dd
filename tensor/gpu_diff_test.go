package tensor_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/tensor"
)

// Differential tests of the GPU stream: what a batch holds must never
// change a result. A runtime whose validation or binding state leaks from
// one command to the next in a batch (as wgpu's late-sized binding
// expectations did) fails here at some size, while it passes with one
// command per submission.

// diffShapes sweep the kernels' boundaries: element counts of every
// residue mod 4 (vec4 tails), rows of 32 and 33 (serial against workgroup
// reductions), 64 and 65 (workgroup and matmul tile edges), whole-tensor
// reductions just below, at and above 16384 elements and at 24576 (one
// against two stages of partial sums), and long rows that reduce in
// segments.
var diffShapes = [][2]int{{7, 9}, {4, 16}, {5, 13}, {33, 32}, {65, 63}, {128, 128}, {127, 129}, {96, 256}, {3, 16385}}

// diffEnv is one run of a random program on a device.
type diffEnv struct {
	r, c  int
	pool  []*tensor.Tensor // [r, c] float32 values the program combines
	w, v  *tensor.Tensor   // [c, k], [k, c]: matmul weights
	perm  *tensor.Tensor   // int32 [r]: a permutation of the rows
	permC *tensor.Tensor   // int32 [r, c]: a permutation of each row
}

// diffOp is one op of a random program: it combines two pool values into
// a new one of their shape (or updates a in place and returns nil).
type diffOp struct {
	name string
	f    func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor
}

// diffOps cover elementwise ops (contiguous vec4 and strided), reductions
// of every kind whole and per dim (broadcast back), matmul, softmax,
// cumsum, arg-reductions with gather, index ops with collision-free
// indices (atomic float adds would make the order of additions, and so
// the bits, vary) and in-place updates.
var diffOps = []diffOp{
	{"mul-add-tanh", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Mul(b).Add(a).Tanh() }},
	{"exp", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Tanh().Exp().Sub(b.Sigmoid()) }},
	{"div", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Div(b.Abs().AddScalar(1)) }},
	{"max-min", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Maximum(b).Sub(a.Minimum(b).MulScalar(0.5)).Clamp(-4, 4)
	}},
	{"gelu-sqrt", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.GELU().Add(b.Abs().Sqrt()).Tanh() }},
	{"where", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return tensor.Where(a.Gt(b), a, b.Neg()) }},
	{"strided", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.T().Contiguous().T().Sub(b) }},
	{"int-cast", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.MulScalar(8).Cast(tensor.Int32).Cast(tensor.Float32).DivScalar(8)
	}},
	{"mean-rows", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Sub(a.MeanDims([]int{1}, true)) }},
	{"sum-cols", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Sub(b.SumDims([]int{0}, true).DivScalar(float64(e.r)))
	}},
	{"sum-mean-all", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Sub(a.Mean()).Add(b.Sum().DivScalar(float64(e.r * e.c)))
	}},
	{"max-min-all", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Sub(a.Max()).Add(b.Min()) }},
	{"amax-amin-dims", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Sub(a.Amax([]int{1}, true)).Add(b.Amin([]int{0}, true))
	}},
	{"std-var", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Div(a.Std(nil, 1, false).AddScalar(0.5)).Sub(b.Var([]int{1}, 0, true))
	}},
	{"norm", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Div(b.Norm(2, []int{1}, true).AddScalar(1))
	}},
	{"logsumexp", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.Sub(a.LogSumExp([]int{0}, true)) }},
	{"softmax", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Softmax(1).MulScalar(float64(e.c)).Add(b.LogSoftmax(0).MulScalar(0.1)).Tanh()
	}},
	{"cumsum", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.CumSum(1).DivScalar(float64(e.c)) }},
	{"argmax-gather", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.Sub(b.Gather(1, a.ArgMaxDim(1, true))).Add(a.Gather(0, b.ArgMinDim(0, true)))
	}},
	{"matmul", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.MatMul(e.w).MatMul(e.v).MulScalar(1 / math.Sqrt(float64(e.c*e.v.Shape()[0]))).Tanh()
	}},
	{"matmul-transposed", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.MatMul(b.T()).MatMul(a).MulScalar(1 / float64(e.r*e.c)).Tanh()
	}},
	{"matmul-epilogues", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return a.MatMul(e.w).Add(b.MatMul(e.w)).ReLU().MatMul(e.v).MulScalar(1 / float64(e.c*e.v.Shape()[0])).Tanh()
	}},
	{"reduce-prologues", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		masked := tensor.Where(a.Gt(b), b.Tanh().Exp(), a.Neg()).SumDims([]int{1}, true).DivScalar(float64(e.c))
		return a.Sub(masked).Add(a.GtScalar(0).Cast(tensor.Float32).Mean())
	}},
	{"index-select", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return a.IndexSelect(0, e.perm).Add(b).Tanh() }},
	{"index-add", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { return b.IndexAdd(0, e.perm, a).MulScalar(0.5) }},
	{"scatter-add", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		return b.ScatterAdd(1, e.permC, a).MulScalar(0.5)
	}},
	{"add-in-place", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { a.AddInPlace(b, -0.1); return nil }},
	{"scale-clamp-in-place", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor {
		a.MulScalarInPlace(0.9).ClampInPlace(-2, 2)
		return nil
	}},
	{"addcmul-in-place", func(e *diffEnv, a, b *tensor.Tensor) *tensor.Tensor { a.AddcmulInPlace(b, a, -0.05); return nil }},
}

// diffStep is one step of a program: diffOps[op] of pool[a] and pool[b].
type diffStep struct{ op, a, b int }

// randomProgram draws steps ops over a pool that starts with start values
// (every op once, then random ones).
func randomProgram(rng *rand.Rand, start, steps int) []diffStep {
	var prog []diffStep
	size := start
	for i := range steps {
		op := i
		if i >= len(diffOps) {
			op = rng.IntN(len(diffOps))
		}
		prog = append(prog, diffStep{op: op, a: rng.IntN(size), b: rng.IntN(size)})
		size++ // in-place steps leave the pool as it is; the index stays valid
	}
	return prog
}

// diffInputs are a program's host inputs.
type diffInputs struct {
	values  [][]float32
	w, v    []float32
	k       int
	perm    []int32
	permRow []int32
}

func newDiffInputs(gen *tensor.Generator, rng *rand.Rand, r, c, start int) diffInputs {
	in := diffInputs{k: []int{17, 64, 65}[rng.IntN(3)]}
	for range start {
		in.values = append(in.values, tensor.Uniform([]int{r * c}, -2, 2, tensor.WithGenerator(gen)).Float32s())
	}
	in.w = tensor.Uniform([]int{c * in.k}, -1, 1, tensor.WithGenerator(gen)).Float32s()
	in.v = tensor.Uniform([]int{in.k * c}, -1, 1, tensor.WithGenerator(gen)).Float32s()
	for _, i := range rng.Perm(r) {
		in.perm = append(in.perm, int32(i))
	}
	for range r {
		for _, j := range rng.Perm(c) {
			in.permRow = append(in.permRow, int32(j))
		}
	}
	return in
}

// runProgram runs prog on dev and returns every value it made or
// updated, read back.
func runProgram(dev tensor.Device, r, c int, in diffInputs, prog []diffStep) [][]float32 {
	var out [][]float32
	tensor.Scope(func() {
		e := &diffEnv{r: r, c: c,
			w:     tensor.New(in.w, c, in.k).To(dev),
			v:     tensor.New(in.v, in.k, c).To(dev),
			perm:  tensor.New(in.perm).To(dev),
			permC: tensor.New(in.permRow, r, c).To(dev),
		}
		for _, v := range in.values {
			e.pool = append(e.pool, tensor.New(v, r, c).To(dev))
		}
		for _, s := range prog {
			res := diffOps[s.op].f(e, e.pool[s.a], e.pool[s.b])
			if res == nil {
				res = e.pool[s.a].Clone() // the in-place update, as of now
			}
			e.pool = append(e.pool, res)
		}
		for _, t := range e.pool {
			out = append(out, t.Float32s())
		}
	})
	return out
}

// TestGPUBatchCapDifferential runs random programs of diffOps over
// diffShapes with one command per submission and with the default batch
// cap: the results must be bitwise identical, with no error and no batch
// that failed validation.
func TestGPUBatchCapDifferential(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	gen := tensor.NewGenerator(2024)
	replays := g.ReplayCount()
	for si, sh := range diffShapes {
		r, c := sh[0], sh[1]
		rng := rand.New(rand.NewPCG(7, uint64(si)))
		const start = 4
		in := newDiffInputs(gen, rng, r, c, start)
		prog := randomProgram(rng, start, len(diffOps)+8)
		// Fusion decides by ops and shapes alone: with it on too, the
		// batch cap changes no bit (every other shape, for time).
		for _, fused := range []bool{false, true} {
			if fused && si%2 == 1 {
				continue
			}
			var ref, got [][]float32
			mode := map[bool]string{false: "eager", true: "fused"}[fused]
			if !ok(t, fmt.Sprintf("%dx%d %s at cap 1", r, c, mode), func() {
				g.SetBatchCap(1)
				withFusion(fused, func() { ref = runProgram(dev, r, c, in, prog) })
			}) || !ok(t, fmt.Sprintf("%dx%d %s at the default cap", r, c, mode), func() {
				g.SetBatchCap(0)
				withFusion(fused, func() { got = runProgram(dev, r, c, in, prog) })
			}) {
				continue
			}
			for i := range ref {
				if j, same := sameBits(got[i], ref[i]); !same {
					what := "an input"
					if i >= start {
						s := prog[i-start]
						what = fmt.Sprintf("step %d (%s of values %d, %d)", i-start, diffOps[s.op].name, s.a, s.b)
					}
					t.Errorf("%dx%d %s, %s: element %d is %v at the default cap, %v at cap 1", r, c, mode, what, j, got[i][max(j, 0)], ref[i][max(j, 0)])
					break
				}
			}
		}
	}
	if d := g.ReplayCount() - replays; d != 0 {
		t.Errorf("%d batches failed validation", d)
	}
}

// reductionKinds are the tensor layer's reductions, each reducing dim of
// x (float32) into a float32 tensor: every reduction kernel (one and two
// stages, serial and per workgroup, arg-reductions, the softmax family and
// the scan) and the composites built on them.
var reductionKinds = []struct {
	name string
	f    func(x *tensor.Tensor, dim int) *tensor.Tensor
}{
	{"Sum", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Sum(dim) }},
	{"Mean", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Mean(dim) }},
	{"Amax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Amax([]int{dim}, true) }},
	{"Amin", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Amin([]int{dim}, false) }},
	{"MaxDim", func(x *tensor.Tensor, dim int) *tensor.Tensor {
		v, i := x.MaxDim(dim, false)
		return v.Add(i.Cast(tensor.Float32))
	}},
	{"MinDim", func(x *tensor.Tensor, dim int) *tensor.Tensor {
		v, i := x.MinDim(dim, true)
		return v.Sub(i.Cast(tensor.Float32))
	}},
	{"ArgMax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.ArgMaxDim(dim, false).Cast(tensor.Float32) }},
	{"ArgMin", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.ArgMinDim(dim, false).Cast(tensor.Float32) }},
	{"Var", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Var([]int{dim}, 1, false) }},
	{"Std", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Std([]int{dim}, 0, true) }},
	{"Norm", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Norm(2, []int{dim}, false) }},
	{"LogSumExp", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.LogSumExp([]int{dim}, false) }},
	{"Softmax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.Softmax(dim) }},
	{"LogSoftmax", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.LogSoftmax(dim) }},
	{"CumSum", func(x *tensor.Tensor, dim int) *tensor.Tensor { return x.CumSum(dim) }},
}

// TestGPUReductionSweepAfterElementwise records, in one batch, an
// elementwise op (the contiguous vec4 kernel where the size allows) and
// then every reduction of its result, over sizes that sweep the vec4,
// workgroup, serial/side-by-side and one-/two-stage boundaries: each
// result must match the CPU, with no batch failing validation.
func TestGPUReductionSweepAfterElementwise(t *testing.T) {
	dev := gpuOrSkip(t)
	g := gpuRuntime(t, dev)
	replays := g.ReplayCount()
	type sweepCase struct {
		shape []int
		dim   int
	}
	var cases []sweepCase
	for _, n := range []int{1, 3, 4, 5, 31, 32, 33, 63, 64, 65, 255, 256, 257, 2047, 2048, 2049, 8191, 8192, 8193, 16383, 16384, 16385, 20000, 24576, 32768, 65537} {
		cases = append(cases, sweepCase{[]int{n}, 0})
	}
	for _, sh := range [][]int{{33, 65}, {2, 16385}, {16385, 3}, {2049, 2}, {64, 257}} {
		cases = append(cases, sweepCase{sh, 0}, sweepCase{sh, 1})
	}
	gen := tensor.NewGenerator(99)
	for _, tc := range cases {
		host := tensor.Uniform(tc.shape, -1, 1, tensor.WithGenerator(gen))
		what := fmt.Sprintf("shape %v, dim %d", tc.shape, tc.dim)
		ok(t, what, func() {
			tensor.Scope(func() {
				if err := tensor.Sync(dev); err != nil {
					t.Fatal(err)
				}
				g.SetBatchCap(1 << 20)
				x := host.To(dev)
				e, want := x.Exp(), host.Exp()
				got := make([]*tensor.Tensor, len(reductionKinds))
				for i, k := range reductionKinds {
					got[i] = k.f(e, tc.dim)
				}
				for i, k := range reductionKinds {
					approx.CheckAny(t, fmt.Sprintf("%s, %s", what, k.name), got[i].Float32s(), k.f(want, tc.dim).Float32s(), approx.Rel1(1e-4))
				}
			})
		})
	}
	if d := g.ReplayCount() - replays; d != 0 {
		t.Errorf("%d batches failed validation", d)
	}
}
