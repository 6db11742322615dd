package autograd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// CheckOptions sets the step and the tolerances of Check and
// CheckSecondOrder. A zero field takes the default, which, as in
// torch.autograd.gradcheck, suits float64 inputs: Eps 1e-6, Atol 1e-5,
// Rtol 1e-3. Float32 inputs need looser values, such as Eps 1e-3,
// Atol 1e-3 and Rtol 1e-2, and inputs kept a few Eps away from kinks.
type CheckOptions struct {
	Eps  float64 // the finite-difference step
	Atol float64 // absolute tolerance
	Rtol float64 // tolerance relative to the numeric value
}

func (o CheckOptions) withDefaults() CheckOptions {
	if o.Eps == 0 {
		o.Eps = 1e-6
	}
	if o.Atol == 0 {
		o.Atol = 1e-5
	}
	if o.Rtol == 0 {
		o.Rtol = 1e-3
	}
	return o
}

// Check compares the gradients Grad computes for f at xs with central
// finite differences, in the spirit of torch.autograd.gradcheck. It
// returns nil when, for every element j of every input xs[i] that
// requires grad,
//
//	|analytic - numeric| <= Atol + Rtol·|numeric|
//
// and otherwise an error naming the input, the element and both values.
// Inputs that do not require grad (index tensors, masks, constants) are
// passed to f unchanged and not checked.
//
// f may return a tensor of any shape: Check differentiates Σ f(xs)·v for
// a fixed pseudo-random v of f's shape, which checks a random projection
// of the Jacobian, so one backward pass checks every output. The
// numeric derivative of element j is
//
//	(L(x + eps·eⱼ) - L(x - eps·eⱼ)) / 2eps
//
// computed on the host in float64 from f's values at inputs rebuilt from
// host data with the original dtype and device (contiguous, whatever the
// original layout) and marked SetRequiresGrad like the originals. An
// input that is an expanded view is perturbed one logical element at a
// time. An output that does not require grad has a zero analytic
// gradient, so its numeric gradient must vanish.
//
// A tensor passed twice in xs is perturbed in both places, so each of
// its slots is checked against the total derivative, which is what Grad
// returns for it. Check leaves the Grad of xs untouched. Keep inputs a few Eps away from
// kinks (ReLU at 0, Abs at 0, ties of Maximum) where the derivative is
// not defined.
func Check(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor, opt CheckOptions) error {
	return check(f, xs, opt, "autograd.Check")
}

// CheckSecondOrder checks second derivatives, like a light
// torch.autograd.gradgradcheck: it runs Check on
//
//	h(xs) = Σᵢ Σ (∂L/∂xᵢ ⊙ uᵢ),  L = Σ f(xs)·v,
//
// with fixed pseudo-random v and uᵢ, where the gradients ∂L/∂xᵢ come from
// Grad with CreateGraph. The analytic side thus backpropagates through
// the recorded backward pass, and the numeric side takes finite
// differences of the first-order gradients. Options and the error are as
// for Check.
func CheckSecondOrder(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor, opt CheckOptions) error {
	var us []*tensor.Tensor // one fixed direction per input that requires grad
	rng := newCheckRand()
	for _, x := range xs {
		if x.RequiresGrad() {
			us = append(us, randomLike(rng, x))
		}
	}
	h := func(xs []*tensor.Tensor) *tensor.Tensor {
		y := f(xs)
		var diff []*tensor.Tensor
		for _, x := range xs {
			if x.RequiresGrad() {
				diff = append(diff, x)
			}
		}
		if !y.RequiresGrad() {
			return tensor.Zeros(nil, tensor.Like(y))
		}
		v := weights(y)
		gs := Grad(y, diff, CreateGraph(), GradOutput(v))
		var sum *tensor.Tensor
		for i, g := range gs {
			if g == nil {
				continue // the input is unused: its gradient is 0
			}
			term := g.Mul(us[i]).Sum()
			if sum == nil {
				sum = term
			} else {
				sum = sum.Add(term)
			}
		}
		if sum == nil {
			return tensor.Zeros(nil, tensor.Like(y))
		}
		return sum
	}
	return check(h, xs, opt, "autograd.CheckSecondOrder")
}

// check is Check, with the caller's name for errors.
func check(f func(xs []*tensor.Tensor) *tensor.Tensor, xs []*tensor.Tensor, opt CheckOptions, who string) error {
	opt = opt.withDefaults()
	var diff []int // indices of the inputs that require grad
	for i, x := range xs {
		if x.RequiresGrad() {
			diff = append(diff, i)
		}
	}
	if len(diff) == 0 {
		return fmt.Errorf("%s: no input requires grad", who)
	}

	// The analytic gradients of L = Σ f(xs)·v, one backward pass.
	var analytic [][]float64
	var v []float64 // the weights, on the host
	var shapeErr error
	if err := tensor.Catch(func() {
		y := f(xs)
		vt := weights(y)
		v = vt.Float64s()
		analytic = make([][]float64, len(diff))
		var gs []*tensor.Tensor
		if y.RequiresGrad() {
			ws := make([]*tensor.Tensor, len(diff))
			for k, i := range diff {
				ws[k] = xs[i]
			}
			gs = Grad(y, ws, GradOutput(vt))
		}
		for k, i := range diff {
			x := xs[i]
			if gs == nil || gs[k] == nil {
				analytic[k] = make([]float64, x.Numel())
				continue
			}
			g := gs[k]
			if !slices.Equal(g.Shape(), x.Shape()) || g.DType() != x.DType() || g.Device() != x.Device() {
				shapeErr = fmt.Errorf("%s: the gradient of input %d has shape %v %v on %v; the input has %v %v on %v",
					who, i, g.Shape(), g.DType(), g.Device(), x.Shape(), x.DType(), x.Device())
				return
			}
			analytic[k] = g.Float64s()
		}
	}); err != nil {
		return fmt.Errorf("%s: forward or backward failed: %w", who, err)
	}
	if shapeErr != nil {
		return shapeErr
	}

	// The numeric gradients, one central difference per element.
	host := make([][]float64, len(xs))
	for _, i := range diff {
		host[i] = xs[i].Float64s()
	}
	loss := func(i, j int, val float64) (l, taken float64, err error) {
		err = tensor.Catch(func() {
			data := append([]float64(nil), host[i]...)
			data[j] = val
			p := rebuild(xs[i], data)
			defer p.Release()
			taken = p.Float64s()[j] // the value the dtype holds
			in := make([]*tensor.Tensor, len(xs))
			for k, x := range xs {
				in[k] = x
				if x == xs[i] { // an input passed twice moves as one, as Grad sees it
					in[k] = p
				}
			}
			y := f(in)
			ys := y.Float64s()
			if len(ys) != len(v) {
				panic(&tensor.Error{Op: who, Err: tensor.ErrShape,
					Detail: fmt.Sprintf("f returned %d elements at a perturbed input, %d at the original", len(ys), len(v))})
			}
			for k, yk := range ys {
				l += yk * v[k]
			}
		})
		return l, taken, err
	}
	var first error
	bad := 0
	for k, i := range diff {
		x := xs[i]
		for j, xj := range host[i] {
			hi, xhi, err := loss(i, j, xj+opt.Eps)
			if err != nil {
				return fmt.Errorf("%s: f failed at input %d element %d + eps: %w", who, i, j, err)
			}
			lo, xlo, err := loss(i, j, xj-opt.Eps)
			if err != nil {
				return fmt.Errorf("%s: f failed at input %d element %d - eps: %w", who, i, j, err)
			}
			numeric := (hi - lo) / (xhi - xlo)
			a := analytic[k][j]
			if d := math.Abs(a - numeric); !(d <= opt.Atol+opt.Rtol*math.Abs(numeric)) {
				bad++
				if first == nil {
					first = fmt.Errorf("%s: input %d (shape %v %v) element %d (index %v, value %g): analytic %.10g, numeric %.10g, |difference| %.3g > atol %g + rtol %g·|numeric|",
						who, i, x.Shape(), x.DType(), j, unravel(j, x.Shape()), xj, a, numeric, d, opt.Atol, opt.Rtol)
				}
			}
		}
	}
	if bad > 1 {
		return fmt.Errorf("%w (and %d more elements)", first, bad-1)
	}
	return first
}

// newCheckRand returns the fixed generator of the weights and directions.
func newCheckRand() *rand.Rand { return rand.New(rand.NewPCG(0x7e55e7a, 0x9c4ec)) }

// weights returns the fixed pseudo-random v of y's shape, dtype and
// device that Check projects f's output on (1 for a one-element output).
func weights(y *tensor.Tensor) *tensor.Tensor {
	if y.Numel() == 1 {
		return tensor.OnesLike(y)
	}
	return randomLike(newCheckRand(), y)
}

// randomLike returns values uniform in ±[0.5, 1.5) with x's shape, dtype
// and device; it never requires grad.
func randomLike(rng *rand.Rand, x *tensor.Tensor) *tensor.Tensor {
	data := make([]float64, x.Numel())
	for i := range data {
		data[i] = 0.5 + rng.Float64()
		if rng.IntN(2) == 0 {
			data[i] = -data[i]
		}
	}
	return rebuildAs(x, data, false)
}

// rebuild returns a fresh leaf holding data with x's shape, dtype and
// device, requiring grad as x does.
func rebuild(x *tensor.Tensor, data []float64) *tensor.Tensor {
	return rebuildAs(x, data, x.RequiresGrad())
}

func rebuildAs(x *tensor.Tensor, data []float64, requiresGrad bool) *tensor.Tensor {
	var t *tensor.Tensor
	tensor.NoGrad(func() {
		h := tensor.New(data, x.Shape()...)
		t = h.Cast(x.DType()).To(x.Device())
		if t != h {
			h.Release()
		}
	})
	if requiresGrad {
		t.SetRequiresGrad(true)
	}
	return t
}

// unravel turns a row-major flat index into a multi-index of shape.
func unravel(j int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = j % shape[d]
			j /= shape[d]
		}
	}
	return idx
}
