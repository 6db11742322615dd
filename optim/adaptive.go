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
// 1e-8 of the denominator). Its state is "sum" for each parameter and
// the step t.
type Adagrad struct {
	base
}

var adagradKind = kind{
	name:     "Adagrad",
	options:  []string{"LRDecay", "WeightDecay", "InitialAccumulator", "Eps"},
	buffers:  []string{"sum"},
	required: func(*Hyper) []int { return []int{0} },
}

// NewAdagrad returns Adagrad over params, which must be float leaves.
// Options and defaults: LR 1e-2, LRDecay 0, WeightDecay 0,
// InitialAccumulator 0, Eps 1e-10, Maximize. It panics with ErrArgument
// for no parameters, another option or a negative or non-finite value.
func NewAdagrad(params []*tensor.Tensor, opts ...Option) *Adagrad {
	return &Adagrad{newBase(adagradKind, params, Hyper{LR: 1e-2, Eps: 1e-10}, opts)}
}

// Step updates every parameter that has a gradient.
func (o *Adagrad) Step() {
	o.step(true, func(h *Hyper, st *paramState, p, g *tensor.Tensor, tmp *temps) {
		sum := st.buf(0, p, h.InitialAccumulator)
		clr := h.LR / (1 + float64(st.step-1)*h.LRDecay)
		sum.AddcmulInPlace(g, g, 1)
		// √sum + eps stays pending with fusion on: the update below is
		// one kernel, and the step two per parameter.
		std := tmp.add(tmp.add(sum.Sqrt()).AddScalar(h.Eps))
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
// Its state is "square_avg" (v), "momentum_buffer" and "grad_avg" (ḡ)
// for each parameter.
type RMSProp struct {
	base
}

const (
	squareAvg = iota
	rmsMomentum
	gradAvg
)

var rmspropKind = kind{
	name:    "RMSProp",
	options: []string{"Alpha", "Eps", "WeightDecay", "Momentum", "Centered"},
	buffers: []string{"square_avg", "momentum_buffer", "grad_avg"},
	required: func(h *Hyper) []int {
		out := []int{squareAvg}
		if h.Momentum > 0 {
			out = append(out, rmsMomentum)
		}
		if h.Centered {
			out = append(out, gradAvg)
		}
		return out
	},
}

// NewRMSProp returns RMSProp over params, which must be float leaves.
// Options and defaults: LR 1e-2, Alpha 0.99, Eps 1e-8, WeightDecay 0,
// Momentum 0, Centered, Maximize. It panics with ErrArgument for no
// parameters, another option or a negative or non-finite value.
func NewRMSProp(params []*tensor.Tensor, opts ...Option) *RMSProp {
	return &RMSProp{newBase(rmspropKind, params, Hyper{LR: 1e-2, Alpha: 0.99, Eps: 1e-8}, opts)}
}

// Step updates every parameter that has a gradient.
func (o *RMSProp) Step() {
	o.step(true, func(h *Hyper, st *paramState, p, g *tensor.Tensor, tmp *temps) {
		sq := st.buf(squareAvg, p, 0)
		lerp(tmp, sq, h.Alpha, g, g, 1-h.Alpha)
		var avg *tensor.Tensor
		if h.Centered {
			ga := st.buf(gradAvg, p, 0)
			lerp(tmp, ga, h.Alpha, g, nil, 1-h.Alpha)
			avg = tmp.add(tmp.add(tensor.Addcmul(sq, ga, ga, -1)).Sqrt())
		} else {
			avg = tmp.add(sq.Sqrt())
		}
		avg.AddScalarInPlace(h.Eps)
		if h.Momentum > 0 {
			buf := st.buf(rmsMomentum, p, 0)
			buf.MulScalarInPlace(h.Momentum).AddcdivInPlace(g, avg, 1)
			p.AddInPlace(buf, -h.LR)
		} else {
			p.AddcdivInPlace(g, avg, -h.LR)
		}
	})
}
