package optim

import "github.com/tessera-ml/tessera/tensor"

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and L2 weight decay, as torch.optim.SGD:
//
//	g = grad + weight_decay·p
//	buf = g                                  (first step)
//	buf = momentum·buf + (1 - dampening)·g   (later steps)
//	g = g + momentum·buf  (Nesterov)  or  buf
//	p = p - lr·g
//
// (PyTorch's v = ρv + g; p -= lr·v, not Sutskever's v = ρv + lr·g.)
// Its state is "momentum_buffer" for each parameter, when Momentum > 0.
type SGD struct {
	base
}

var sgdKind = kind{
	name:    "SGD",
	options: []string{"Momentum", "Dampening", "WeightDecay", "Nesterov"},
	buffers: []string{"momentum_buffer"},
	required: func(h *Hyper) []int {
		if h.Momentum != 0 {
			return []int{0}
		}
		return nil
	},
	check: func(h *Hyper) string {
		if h.Nesterov && (h.Momentum <= 0 || h.Dampening != 0) {
			return "Nesterov momentum requires a momentum and zero dampening"
		}
		return ""
	},
}

// NewSGD returns SGD over params, which must be float leaves. Options:
// LR (default 1e-3, torch 2's default), Momentum, Dampening,
// WeightDecay, Nesterov, Maximize. It panics with ErrArgument for no
// parameters, another option, a negative or non-finite value, or
// Nesterov without momentum or with dampening.
func NewSGD(params []*tensor.Tensor, opts ...Option) *SGD {
	return &SGD{newBase(sgdKind, params, Hyper{LR: 1e-3}, opts)}
}

// Step updates every parameter that has a gradient.
func (o *SGD) Step() {
	o.step(true, func(h *Hyper, st *paramState, p, g *tensor.Tensor, tmp *temps) {
		d := g
		if h.Momentum != 0 {
			buf := st.bufs[0]
			if buf == nil {
				buf = g.Clone().Keep()
				tensor.Realize(buf) // a buffer, not a pending copy holding g's inputs
				st.bufs[0] = buf
			} else {
				lerp(tmp, buf, h.Momentum, g, nil, 1-h.Dampening)
			}
			d = buf
			if h.Nesterov {
				d = tmp.add(g.Add(tmp.add(buf.MulScalar(h.Momentum))))
			}
		}
		p.AddInPlace(d, -h.LR)
	})
}
