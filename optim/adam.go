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
//
// Its state is "exp_avg" (m), "exp_avg_sq" (v) and, with AMSGrad,
// "max_exp_avg_sq" (v̂) for each parameter, and the step t.
type Adam struct {
	base
	decoupled bool
}

const (
	expAvg = iota
	expAvgSq
	maxExpAvgSq
)

func adamKind(name string) kind {
	return kind{
		name:    name,
		options: []string{"Betas", "Eps", "WeightDecay", "AMSGrad"},
		buffers: []string{"exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
		required: func(h *Hyper) []int {
			if h.AMSGrad {
				return []int{expAvg, expAvgSq, maxExpAvgSq}
			}
			return []int{expAvg, expAvgSq}
		},
	}
}

// NewAdam returns Adam over params, which must be float leaves. Options
// and defaults: LR 1e-3, Betas 0.9 and 0.999, Eps 1e-8, WeightDecay 0,
// AMSGrad, Maximize. It panics with ErrArgument for no parameters,
// another option or a value out of range (negative or not finite; betas
// outside [0, 1)).
func NewAdam(params []*tensor.Tensor, opts ...Option) *Adam {
	return newAdam("Adam", params, false, 0, opts)
}

// NewAdamW returns AdamW (Adam with decoupled weight decay) over params:
// as NewAdam, but WeightDecay defaults to 0.01 and shrinks the parameters
// directly instead of adding to the gradient.
func NewAdamW(params []*tensor.Tensor, opts ...Option) *Adam {
	return newAdam("AdamW", params, true, 1e-2, opts)
}

func newAdam(name string, params []*tensor.Tensor, decoupled bool, wd float64, opts []Option) *Adam {
	defaults := Hyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: wd}
	return &Adam{base: newBase(adamKind(name), params, defaults, opts), decoupled: decoupled}
}

// Step updates every parameter that has a gradient.
func (o *Adam) Step() {
	o.step(!o.decoupled, func(h *Hyper, st *paramState, p, g *tensor.Tensor, tmp *temps) {
		t := float64(st.step)
		if o.decoupled && h.WeightDecay != 0 {
			p.MulScalarInPlace(1 - h.LR*h.WeightDecay)
		}
		m, v := st.buf(expAvg, p, 0), st.buf(expAvgSq, p, 0)
		lerp(tmp, m, h.Beta1, g, nil, 1-h.Beta1)
		lerp(tmp, v, h.Beta2, g, g, 1-h.Beta2)
		bc1 := 1 - math.Pow(h.Beta1, t)
		bc2 := 1 - math.Pow(h.Beta2, t)
		if h.AMSGrad {
			vm := st.buf(maxExpAvgSq, p, 0)
			vm.CopyFrom(tmp.add(vm.Maximum(v)))
			v = vm
		}
		// (√v / √bc2) + eps, with a true division as in PyTorch.
		s := tmp.add(tensor.Full(nil, math.Sqrt(bc2), tensor.Like(p)))
		denom := tmp.add(tmp.add(v.Sqrt()).Div(s)).AddScalarInPlace(h.Eps)
		p.AddcdivInPlace(m, denom, -h.LR/bc1)
	})
}
