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
type SGD struct {
	base
	bufs []*tensor.Tensor
}

// NewSGD returns SGD over params, which must be float leaves that
// require grad. Options: LR (default 1e-3, torch 2's default), Momentum,
// Dampening, WeightDecay, Nesterov, Maximize. It panics with ErrArgument
// for no parameters, another option, a negative or non-finite value, or
// Nesterov without momentum or with dampening.
func NewSGD(params []*tensor.Tensor, opts ...Option) *SGD {
	c := newConfig("SGD", config{lr: 1e-3}, opts, "Momentum", "Dampening", "WeightDecay", "Nesterov")
	if c.nesterov && (c.momentum <= 0 || c.dampening != 0) {
		fail("SGD", "Nesterov momentum requires a momentum and zero dampening")
	}
	return &SGD{base: newBase("SGD", params, c), bufs: make([]*tensor.Tensor, len(params))}
}

// Step updates every parameter that has a gradient.
func (o *SGD) Step() {
	c := o.cfg
	o.step(true, func(i int, p, g *tensor.Tensor, tmp *temps) {
		d := g
		if c.momentum != 0 {
			buf := o.bufs[i]
			if buf == nil {
				buf = g.Clone().Keep()
				o.bufs[i] = buf
			} else {
				buf.MulScalarInPlace(c.momentum).AddInPlace(g, 1-c.dampening)
			}
			d = buf
			if c.nesterov {
				d = tmp.add(g.Add(tmp.add(buf.MulScalar(c.momentum))))
			}
		}
		p.AddInPlace(d, -c.lr)
	})
}
