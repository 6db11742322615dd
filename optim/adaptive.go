package optim

import "github.com/tessera-ml/tessera/tensor"

// Adagrad is torch.optim.Adagrad. For step t:
//
//	g = grad + weight_decay·p
//	clr = lr / (1 + (t-1)·lr_decay)
//	sum = sum + g²
//	p = p - clr · g / (√sum + eps)
//
// eps is added outside the square root (min-char-rnn's hand-written
// Adagrad uses √(sum + 1e-8); with Eps(1e-8) the two agree to within
// 1e-8 of the denominator).
type Adagrad struct {
	base
	steps []int
	sums  []*tensor.Tensor
}

// NewAdagrad returns Adagrad over params, which must be float leaves
// that require grad. Options and defaults: LR 1e-2, LRDecay 0,
// WeightDecay 0, InitialAccumulator 0, Eps 1e-10, Maximize. It panics
// with ErrArgument for no parameters, another option or a negative or
// non-finite value.
func NewAdagrad(params []*tensor.Tensor, opts ...Option) *Adagrad {
	c := newConfig("Adagrad", config{lr: 1e-2, eps: 1e-10}, opts, "LRDecay", "WeightDecay", "InitialAccumulator", "Eps")
	return &Adagrad{base: newBase("Adagrad", params, c), steps: make([]int, len(params)), sums: make([]*tensor.Tensor, len(params))}
}

// Step updates every parameter that has a gradient.
func (o *Adagrad) Step() {
	c := o.cfg
	o.step(true, func(i int, p, g *tensor.Tensor, tmp *temps) {
		if o.sums[i] == nil {
			o.sums[i] = state(p, c.initAcc)
		}
		o.steps[i]++
		clr := c.lr / (1 + float64(o.steps[i]-1)*c.lrDecay)
		o.sums[i].AddcmulInPlace(g, g, 1)
		std := tmp.add(o.sums[i].Sqrt()).AddScalarInPlace(c.eps)
		p.AddcdivInPlace(g, std, -clr)
	})
}

// RMSProp is torch.optim.RMSprop:
//
//	g = grad + weight_decay·p
//	v = α·v + (1-α)·g²
//	avg = √v + eps    (Centered: √(v - ḡ²) + eps with ḡ = α·ḡ + (1-α)·g)
//	buf = momentum·buf + g/avg; p = p - lr·buf    (Momentum > 0)
//	p = p - lr·g/avg                             (otherwise)
//
// eps is added after the square root (TensorFlow adds it inside).
// Karpathy's pg-pong RMSProp ascent is Alpha(0.99), Eps(1e-5), Maximize().
type RMSProp struct {
	base
	sq, gavg, bufs []*tensor.Tensor
}

// NewRMSProp returns RMSProp over params, which must be float leaves
// that require grad. Options and defaults: LR 1e-2, Alpha 0.99, Eps
// 1e-8, WeightDecay 0, Momentum 0, Centered, Maximize. It panics with
// ErrArgument for no parameters, another option or a negative or
// non-finite value.
func NewRMSProp(params []*tensor.Tensor, opts ...Option) *RMSProp {
	c := newConfig("RMSProp", config{lr: 1e-2, alpha: 0.99, eps: 1e-8}, opts, "Alpha", "Eps", "WeightDecay", "Momentum", "Centered")
	n := len(params)
	return &RMSProp{base: newBase("RMSProp", params, c),
		sq: make([]*tensor.Tensor, n), gavg: make([]*tensor.Tensor, n), bufs: make([]*tensor.Tensor, n)}
}

// Step updates every parameter that has a gradient.
func (o *RMSProp) Step() {
	c := o.cfg
	o.step(true, func(i int, p, g *tensor.Tensor, tmp *temps) {
		if o.sq[i] == nil {
			o.sq[i] = state(p, 0)
			if c.centered {
				o.gavg[i] = state(p, 0)
			}
			if c.momentum > 0 {
				o.bufs[i] = state(p, 0)
			}
		}
		sq := o.sq[i]
		sq.MulScalarInPlace(c.alpha).AddcmulInPlace(g, g, 1-c.alpha)
		var avg *tensor.Tensor
		if c.centered {
			ga := o.gavg[i]
			ga.MulScalarInPlace(c.alpha).AddInPlace(g, 1-c.alpha)
			avg = tmp.add(tmp.add(tensor.Addcmul(sq, ga, ga, -1)).Sqrt())
		} else {
			avg = tmp.add(sq.Sqrt())
		}
		avg.AddScalarInPlace(c.eps)
		if c.momentum > 0 {
			o.bufs[i].MulScalarInPlace(c.momentum).AddcdivInPlace(g, avg, 1)
			p.AddInPlace(o.bufs[i], -c.lr)
		} else {
			p.AddcdivInPlace(g, avg, -c.lr)
		}
	})
}
