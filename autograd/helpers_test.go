package autograd_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// rng draws test inputs. TestRules reseeds it for each case, so a case
// sees the same numbers whatever runs before it.
var rng = rand.New(rand.NewPCG(1, 2))

func seed(a, b uint64) { rng = rand.New(rand.NewPCG(a, b)) }

func uniform(n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// param returns a contiguous float64 leaf that requires grad.
func param(data []float64, shape ...int) *tensor.Tensor {
	if shape == nil {
		shape = []int{len(data)}
	}
	return tensor.New(data, shape...).SetRequiresGrad(true)
}

// leaf returns a float64 leaf of shape, uniform in [lo, hi], that
// requires grad.
func leaf(lo, hi float64, shape ...int) *tensor.Tensor {
	return tensor.New(uniform(layout.Numel(shape), lo, hi), shape...).SetRequiresGrad(true)
}

// away returns a leaf whose elements have |x| in [lo, hi] and a random
// sign: inputs kept away from a kink at 0.
func away(lo, hi float64, shape ...int) *tensor.Tensor {
	v := uniform(layout.Numel(shape), lo, hi)
	for i := range v {
		if rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return tensor.New(v, shape...).SetRequiresGrad(true)
}

// avoid returns a leaf uniform in [lo, hi] with no element within gap
// of any of the points (kinks, thresholds).
func avoid(points []float64, gap, lo, hi float64, shape ...int) *tensor.Tensor {
	v := make([]float64, layout.Numel(shape))
	for i := range v {
		for {
			v[i] = lo + (hi-lo)*rng.Float64()
			if !slices.ContainsFunc(points, func(p float64) bool { return math.Abs(v[i]-p) < gap }) {
				break
			}
		}
	}
	return tensor.New(v, shape...).SetRequiresGrad(true)
}

// distinct returns a leaf of shape whose elements are at least 0.2 apart:
// a shuffled lattice with a little jitter, so extrema are unique.
func distinct(shape ...int) *tensor.Tensor {
	n := layout.Numel(shape)
	v := make([]float64, n)
	for i, k := range rng.Perm(n) {
		v[i] = 0.25*float64(k) - 0.125*float64(n) + 0.05*rng.Float64()
	}
	return tensor.New(v, shape...).SetRequiresGrad(true)
}

// separated returns two leaves of shapes sa and sb whose elements all
// differ by at least 0.1, whatever the broadcasting pairs: a takes odd
// and b even multiples of 0.1.
func separated(sa, sb []int) (*tensor.Tensor, *tensor.Tensor) {
	lattice := func(n int, odd bool) []float64 {
		v := make([]float64, n)
		for i := range v {
			k := 2*float64(rng.IntN(21)-10) + 0.5
			if odd {
				k++
			}
			v[i] = 0.1 * k
		}
		return v
	}
	a := tensor.New(lattice(layout.Numel(sa), true), sa...).SetRequiresGrad(true)
	b := tensor.New(lattice(layout.Numel(sb), false), sb...).SetRequiresGrad(true)
	return a, b
}

// transposed returns a leaf with x's values whose storage is laid out
// with the dims reversed: a non-contiguous leaf.
func transposed(x *tensor.Tensor) *tensor.Tensor {
	var out *tensor.Tensor
	tensor.NoGrad(func() {
		rev := make([]int, x.Dim())
		for i := range rev {
			rev[i] = x.Dim() - 1 - i
		}
		out = x.Detach().Permute(rev...).Contiguous().Permute(rev...).Detach()
	})
	if out.IsContiguous() && x.Numel() > 1 && x.Dim() > 1 {
		panic("transposed: the leaf is contiguous")
	}
	return out.SetRequiresGrad(true)
}

// strided returns a leaf with x's values stored at every other element
// of its last dim (a slice with step 2); the gaps hold NaN, so a kernel
// that reads them shows.
func strided(x *tensor.Tensor) *tensor.Tensor {
	shape := x.Shape()
	last := len(shape) - 1
	wide := slices.Clone(shape)
	wide[last] *= 2
	vals := x.Float64s()
	data := make([]float64, layout.Numel(wide))
	for i := range data {
		data[i] = math.NaN()
	}
	for i, v := range vals {
		row, col := i/shape[last], i%shape[last]
		data[row*wide[last]+2*col] = v
	}
	var out *tensor.Tensor
	tensor.NoGrad(func() {
		out = tensor.New(data, wide...).Slice(last, 0, wide[last], 2).Detach()
	})
	return out.SetRequiresGrad(true)
}

// expanded returns a leaf of shape whose dim d is an expanded (stride 0)
// copy of one slice of values uniform in [lo, hi].
func expanded(lo, hi float64, d int, shape ...int) *tensor.Tensor {
	small := slices.Clone(shape)
	small[d] = 1
	var out *tensor.Tensor
	tensor.NoGrad(func() {
		out = tensor.New(uniform(layout.Numel(small), lo, hi), small...).Expand(shape...).Detach()
	})
	if out.Strides()[d] != 0 {
		panic("expanded: stride is not 0")
	}
	return out.SetRequiresGrad(true)
}

// index returns an Int32 tensor (indices are constants to Check).
func index(data []int, shape ...int) *tensor.Tensor { return tensor.FromInts(data, shape...) }

// mask returns a random Bool tensor of shape.
func mask(shape ...int) *tensor.Tensor {
	v := make([]bool, layout.Numel(shape))
	for i := range v {
		v[i] = rng.IntN(2) == 0
	}
	return tensor.New(v, shape...)
}

// mustPanic runs f and returns the *tensor.Error it panics with; the test
// fails if f does not panic with one.
func mustPanic(t *testing.T, f func()) *tensor.Error {
	t.Helper()
	err := tensor.Catch(f)
	if err == nil {
		t.Fatal("no panic, want a *tensor.Error")
	}
	return err.(*tensor.Error)
}

// opsOf returns the ops of every node in the graph that computed y.
func opsOf(y *tensor.Tensor) map[tensor.Op]bool {
	ops := map[tensor.Op]bool{}
	seen := map[*tensor.Tensor]bool{}
	stack := []*tensor.Tensor{y}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[t] {
			continue
		}
		seen[t] = true
		if n := t.Source(); n != nil {
			ops[n.Op] = true
			for _, in := range n.Inputs {
				if in != nil {
					stack = append(stack, in)
				}
			}
		}
	}
	return ops
}
