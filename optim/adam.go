package optim

import (
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// Adam is torch.optim.Adam, and AdamW when built by NewAdamW. For step t:
//
//	p = p·(1 - lr·weight_decay)                  (AdamW only: decoupled decay)
//	g = grad + weight_decay·p                    (Adam only: L2 penalty)
//	m = β1·m + (1-β1)·g
//	v = β2·v + (1-β2)·g²
//	v̂ = max(v̂, v) with AMSGrad, else v
//	p = p - lr/(1-β1ᵗ) · m / (√v̂/√(1-β2ᵗ) + eps)
type Adam struct {
	base
	decoupled bool
	steps     []int
	m, v, vm  []*tensor.Tensor
}

// NewAdam returns Adam over params, which must be float leaves that
// require grad. Options and defaults: LR 1e-3, Betas 0.9 and 0.999, Eps
// 1e-8, WeightDecay 0, AMSGrad, Maximize. It panics with ErrArgument for
// no parameters, another option or a value out of range (negative or not
// finite; betas outside [0, 1)).
func NewAdam(params []*tensor.Tensor, opts ...Option) *Adam {
	return newAdam("Adam", params, false, 0, opts)
}

// NewAdamW returns AdamW (Adam with decoupled weight decay) over params:
// as NewAdam, but WeightDecay defaults to 0.01 and shrinks the parameters
// directly instead of adding to the gradient.
func NewAdamW(params []*tensor.Tensor, opts ...Option) *Adam {
	return newAdam("AdamW", params, true, 1e-2, opts)
}

func newAdam(op string, params []*tensor.Tensor, decoupled bool, wd float64, opts []Option) *Adam {
	defaults := config{lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: wd}
	c := newConfig(op, defaults, opts, "Betas", "Eps", "WeightDecay", "AMSGrad")
	n := len(params)
	return &Adam{base: newBase(op, params, c), decoupled: decoupled, steps: make([]int, n),
		m: make([]*tensor.Tensor, n), v: make([]*tensor.Tensor, n), vm: make([]*tensor.Tensor, n)}
}

// Step updates every parameter that has a gradient.
func (o *Adam) Step() {
	c := o.cfg
	o.step(!o.decoupled, func(i int, p, g *tensor.Tensor, tmp *temps) {
		if o.m[i] == nil {
			o.m[i], o.v[i] = state(p, 0), state(p, 0)
			if c.amsgrad {
				o.vm[i] = state(p, 0)
			}
		}
		o.steps[i]++
		t := float64(o.steps[i])
		if o.decoupled && c.weightDecay != 0 {
			p.MulScalarInPlace(1 - c.lr*c.weightDecay)
		}
		m, v := o.m[i], o.v[i]
		m.MulScalarInPlace(c.beta1).AddInPlace(g, 1-c.beta1)
		v.MulScalarInPlace(c.beta2).AddcmulInPlace(g, g, 1-c.beta2)
		bc1 := 1 - math.Pow(c.beta1, t)
		bc2 := 1 - math.Pow(c.beta2, t)
		if c.amsgrad {
			o.vm[i].CopyFrom(tmp.add(o.vm[i].Maximum(v)))
			v = o.vm[i]
		}
		// (√v / √bc2) + eps, with a true division as in PyTorch.
		s := tmp.add(tensor.Full(nil, math.Sqrt(bc2), tensor.Like(p)))
		denom := tmp.add(tmp.add(v.Sqrt()).Div(s)).AddScalarInPlace(c.eps)
		p.AddcdivInPlace(m, denom, -c.lr/bc1)
	})
}
