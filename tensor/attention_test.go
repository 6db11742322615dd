package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// naiveAttention is the float64 reference: each segment's weights formed
// in full, softmax(scale·q·kᵀ + mask)·v, one head at a time.
func naiveAttention(q, k, v []float64, offs []int, h, d int, scale float64, causal bool) []float64 {
	out := make([]float64, len(q))
	at := func(x []float64, i, hh int) []float64 { return x[(i*h+hh)*d : (i*h+hh)*d+d] }
	for s := 0; s+1 < len(offs); s++ {
		for i := offs[s]; i < offs[s+1]; i++ {
			for hh := range h {
				hi := offs[s+1]
				if causal {
					hi = i + 1
				}
				w := make([]float64, hi-offs[s])
				m := math.Inf(-1)
				for j := offs[s]; j < hi; j++ {
					dot := 0.0
					for c, x := range at(q, i, hh) {
						dot += x * at(k, j, hh)[c]
					}
					w[j-offs[s]] = scale * dot
					m = max(m, scale*dot)
				}
				sum := 0.0
				for j := range w {
					w[j] = math.Exp(w[j] - m)
					sum += w[j]
				}
				o := at(out, i, hh)
				for j := offs[s]; j < hi; j++ {
					for c, x := range at(v, j, hh) {
						o[c] += w[j-offs[s]] / sum * x
					}
				}
			}
		}
	}
	return out
}

// TestAttentionReference checks the op on ragged segments (1, 7, 33, an
// empty one, and 150, which spans three of the CPU's 64-row tiles)
// against naiveAttention: float64 on the CPU to 1e-12, float32 on every
// device to float32 accuracy.
func TestAttentionReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	offs, h, d := tensor.Offsets(1, 7, 0, 33, 150), 2, 5
	n := offs[len(offs)-1]
	data := func() []float64 {
		x := make([]float64, n*h*d)
		for i := range x {
			x[i] = float64(float32(4*r.Float64() - 2))
		}
		return x
	}
	q, k, v := data(), data(), data()
	for _, causal := range []bool{false, true} {
		want := naiveAttention(q, k, v, offs, h, d, 0.4, causal)
		o := tensor.AttentionOptions{Offsets: offs, Causal: causal, Scale: 0.4}
		mk := func(x []float64) *T { return tensor.New(x, n, h, d) }
		got := tensor.ScaledDotProductAttention(mk(q), mk(k), mk(v), o).Float64s()
		approx.Require(t, "float64", got, want, approx.AbsRel(1e-12, 1e-12))
		for _, dev := range devtest.Devices(t) {
			mk := func(x []float64) *T { return tensor.New(x, n, h, d).Cast(tensor.Float32).To(dev) }
			got := tensor.ScaledDotProductAttention(mk(q), mk(k), mk(v), o).To(tensor.CPU).Cast(tensor.Float64).Float64s()
			approx.Require(t, dev.String()+" float32", got, want, approx.AbsRel(2e-6, 1e-5))
		}
	}
}

// TestAttentionBackwardTiles: the fused backward (tiles of 64 rows,
// weights recomputed) gives the gradients the composite rule gives
// (dense masked weights, the path under CreateGraph), in float64, on
// segments of 150 and 70 rows, causal and not.
func TestAttentionBackwardTiles(t *testing.T) {
	for _, causal := range []bool{false, true} {
		mk := func(seed uint64) *T {
			return tensor.Randn([]int{220, 2, 3}, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(seed))).SetRequiresGrad(true)
		}
		q, k, v := mk(1), mk(2), mk(3)
		w := tensor.Randn([]int{220, 2, 3}, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(4)))
		loss := func() *T {
			return tensor.ScaledDotProductAttention(q, k, v, tensor.AttentionOptions{Offsets: tensor.Offsets(150, 70), Causal: causal}).Mul(w).Sum()
		}
		fused := autograd.Grad(loss(), []*T{q, k, v})
		composite := autograd.Grad(loss(), []*T{q, k, v}, autograd.CreateGraph())
		for i := range fused {
			approx.Require(t, fmt.Sprintf("causal %v, input %d", causal, i), fused[i].Float64s(), composite[i].Float64s(), approx.AbsRel(1e-12, 1e-10))
		}
	}
}

// TestAttentionBadInput: every misuse is a typed error naming the op.
func TestAttentionBadInput(t *testing.T) {
	x := tensor.Rand([]int{5, 2, 3})
	o := func(offs ...int) tensor.AttentionOptions { return tensor.AttentionOptions{Offsets: offs} }
	for _, c := range []struct {
		name    string
		q, k, v *T
		o       tensor.AttentionOptions
		want    error
	}{
		{"offsets not from 0", x, x, x, o(1, 5), tensor.ErrArgument},
		{"offsets short of N", x, x, x, o(0, 2, 4), tensor.ErrArgument},
		{"offsets past N", x, x, x, o(0, 6), tensor.ErrArgument},
		{"offsets decreasing", x, x, x, o(0, 3, 2, 5), tensor.ErrArgument},
		{"negative offset", x, x, x, o(0, -1, 5), tensor.ErrArgument},
		// Every step non-negative only as a wrapped int difference: the
		// offsets pass 2^62, overflow, and come back to N.
		{"offsets wrapping past MaxInt", x, x, x, o(0, 1<<62, math.MinInt, math.MinInt+1<<62, 5), tensor.ErrArgument},
		{"one offset", x, x, x, o(0), tensor.ErrArgument},
		{"NaN scale", x, x, x, tensor.AttentionOptions{Scale: math.NaN()}, tensor.ErrArgument},
		{"2-D q", x.Reshape(10, 3), x.Reshape(10, 3), x.Reshape(10, 3), o(), tensor.ErrShape},
		{"k of another N", x, tensor.Rand([]int{4, 2, 3}), x, o(), tensor.ErrShape},
		{"v of another D", x, x, tensor.Rand([]int{5, 2, 4}), o(), tensor.ErrShape},
		{"no heads", tensor.Rand([]int{5, 0, 3}), tensor.Rand([]int{5, 0, 3}), tensor.Rand([]int{5, 0, 3}), o(), tensor.ErrShape},
		{"nil v", x, x, nil, o(), tensor.ErrArgument},
	} {
		err := tensor.Catch(func() { tensor.ScaledDotProductAttention(c.q, c.k, c.v, c.o) })
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.want) || te.Op != "ScaledDotProductAttention" {
			t.Errorf("%s: got %v, want a *tensor.Error of ScaledDotProductAttention wrapping %v", c.name, err, c.want)
		}
	}
	err := tensor.Catch(func() { tensor.Offsets(3, -1) })
	if !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Offsets(3, -1): %v", err)
	}
	err = tensor.Catch(func() { tensor.Offsets(math.MaxInt, 1) })
	if !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Offsets(MaxInt, 1): %v", err)
	}
	lse := tensor.Zeros([]int{5, 3})
	err = tensor.Catch(func() { tensor.ScaledDotProductAttentionBackward(x, x, x, x, lse, x, o()) })
	if !errors.Is(err, tensor.ErrShape) {
		t.Errorf("backward with lse (5, 3): %v", err)
	}
	if gpu, ok := devtest.GPU(t); ok {
		err := tensor.Catch(func() { tensor.ScaledDotProductAttention(x, x.To(gpu), x, o()) })
		if !errors.Is(err, tensor.ErrDevice) {
			t.Errorf("k on the GPU: %v", err)
		}
	}
}

// TestAttentionKernelCountGPU: a forward and backward step runs the same
// number of GPU dispatches for 3 segments as for 30 of the same longest
// length (no kernel per segment).
func TestAttentionKernelCountGPU(t *testing.T) {
	dev := devtest.MustGPU(t)
	g := gpuRuntime(t, dev)
	count := func(lens []int) int64 {
		n := 0
		for _, l := range lens {
			n += l
		}
		q := tensor.Rand([]int{n, 2, 4}, tensor.On(dev)).SetRequiresGrad(true)
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		before := g.DispatchCount()
		y := tensor.ScaledDotProductAttention(q, q, q, tensor.AttentionOptions{Offsets: tensor.Offsets(lens...), Causal: true})
		autograd.Backward(y.Sum())
		if err := tensor.Sync(dev); err != nil {
			t.Fatal(err)
		}
		return g.DispatchCount() - before
	}
	few := count([]int{9, 3, 5})
	lens := make([]int, 30)
	for i := range lens {
		lens[i] = 1 + i%9
	}
	many := count(lens)
	t.Logf("3 segments: %d dispatches, 30 segments: %d", few, many)
	if few != many {
		t.Errorf("3 segments took %d dispatches, 30 took %d", few, many)
	}
}
