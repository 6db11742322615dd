package optim_test

import (
	"errors"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// The tiny problem: L(p) = Σ a⊙(p - c)² + Σ b⊙p⁴, gradient 2a(p-c) + 4b p³.
var (
	p0 = []float64{0.8, -1.3, 0.25, 2.0, -0.6, 1.1}
	ca = []float64{1, 0.5, 2, 0.1, 1.5, 0.8}
	cc = []float64{0.3, 0.2, -0.5, 1.0, 0.0, -1.2}
	cb = []float64{0.05, 0.1, 0, 0.2, 0.02, 0.01}
)

func lossGrad(p []float64) []float64 {
	g := make([]float64, len(p))
	for i, v := range p {
		g[i] = 2*ca[i]*(v-cc[i]) + 4*cb[i]*v*v*v
	}
	return g
}

func tessLoss(p *tensor.Tensor) *tensor.Tensor {
	a, c, b := tensor.New(ca), tensor.New(cc), tensor.New(cb)
	return p.Sub(c).Square().Mul(a).Sum().Add(p.PowScalar(4).Mul(b).Sum())
}

// hp are hyper-parameters of the float64 reference optimizers.
type hp struct {
	lr, mom, damp, wd, b1, b2, eps, alpha, lrDecay, acc float64
	nesterov, ams, centered, max, decoupled             bool
}

// refStep applies one update of kind to p with PyTorch's formulas,
// written out per element; st holds the state between steps.
type refState struct {
	t              int
	buf, m, v, vmx []float64
	sum, sq, gavg  []float64
}

func refStep(kind string, h hp, p []float64, st *refState) {
	g := lossGrad(p)
	n := len(p)
	if st.t == 0 {
		for _, s := range []*[]float64{&st.buf, &st.m, &st.v, &st.vmx, &st.sq, &st.gavg} {
			*s = make([]float64, n)
		}
		st.sum = make([]float64, n)
		for i := range st.sum {
			st.sum[i] = h.acc
		}
	}
	st.t++
	t := float64(st.t)
	for i := range p {
		gi := g[i]
		if h.max {
			gi = -gi
		}
		if h.wd != 0 && !h.decoupled {
			gi += h.wd * p[i]
		}
		switch kind {
		case "sgd":
			d := gi
			if h.mom != 0 {
				if st.t == 1 {
					st.buf[i] = gi // the first buffer is the gradient itself
				} else {
					st.buf[i] = h.mom*st.buf[i] + (1-h.damp)*gi
				}
				d = st.buf[i]
				if h.nesterov {
					d = gi + h.mom*st.buf[i]
				}
			}
			p[i] -= h.lr * d
		case "adam":
			if h.decoupled {
				p[i] *= 1 - h.lr*h.wd
			}
			st.m[i] = h.b1*st.m[i] + (1-h.b1)*gi
			st.v[i] = h.b2*st.v[i] + (1-h.b2)*gi*gi
			v := st.v[i]
			if h.ams {
				st.vmx[i] = math.Max(st.vmx[i], v)
				v = st.vmx[i]
			}
			denom := math.Sqrt(v)/math.Sqrt(1-math.Pow(h.b2, t)) + h.eps
			p[i] -= h.lr / (1 - math.Pow(h.b1, t)) * st.m[i] / denom
		case "adagrad":
			clr := h.lr / (1 + (t-1)*h.lrDecay)
			st.sum[i] += gi * gi
			p[i] -= clr * gi / (math.Sqrt(st.sum[i]) + h.eps)
		case "rmsprop":
			st.sq[i] = h.alpha*st.sq[i] + (1-h.alpha)*gi*gi
			avg := st.sq[i]
			if h.centered {
				st.gavg[i] = h.alpha*st.gavg[i] + (1-h.alpha)*gi
				avg -= st.gavg[i] * st.gavg[i]
			}
			avg = math.Sqrt(avg) + h.eps
			if h.mom > 0 {
				st.buf[i] = h.mom*st.buf[i] + gi/avg
				p[i] -= h.lr * st.buf[i]
			} else {
				p[i] -= h.lr * gi / avg
			}
		}
	}
}

// TestAgainstReference runs each optimizer for 5 steps on the tiny
// problem, gradients by autograd, and compares with the float64
// re-implementation of torch's formulas.
func TestAgainstReference(t *testing.T) {
	adam := hp{lr: 0.05, b1: 0.9, b2: 0.999, eps: 1e-8}
	cases := []struct {
		name, kind string
		h          hp
		mk         func(ps []*tensor.Tensor) optim.Optimizer
	}{
		{"SGD", "sgd", hp{lr: 0.1}, func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewSGD(ps, optim.LR(0.1)) }},
		{"SGD/momentum/dampening/wd", "sgd", hp{lr: 0.05, mom: 0.9, damp: 0.2, wd: 0.01}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(ps, optim.LR(0.05), optim.Momentum(0.9), optim.Dampening(0.2), optim.WeightDecay(0.01))
		}},
		{"SGD/nesterov/maximize", "sgd", hp{lr: 0.02, mom: 0.8, nesterov: true, max: true}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewSGD(ps, optim.LR(0.02), optim.Momentum(0.8), optim.Nesterov(), optim.Maximize())
		}},
		{"Adam", "adam", adam, func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdam(ps, optim.LR(0.05)) }},
		{"Adam/wd/amsgrad", "adam", hp{lr: 0.05, b1: 0.8, b2: 0.95, eps: 1e-6, wd: 0.1, ams: true}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdam(ps, optim.LR(0.05), optim.Betas(0.8, 0.95), optim.Eps(1e-6), optim.WeightDecay(0.1), optim.AMSGrad())
		}},
		{"AdamW", "adam", hp{lr: 0.05, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.01, decoupled: true}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdamW(ps, optim.LR(0.05))
		}},
		{"Adagrad", "adagrad", hp{lr: 0.1, eps: 1e-10}, func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdagrad(ps, optim.LR(0.1)) }},
		{"Adagrad/min-char-rnn eps/decay/acc", "adagrad", hp{lr: 0.1, eps: 1e-8, lrDecay: 0.05, acc: 0.1}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewAdagrad(ps, optim.LR(0.1), optim.Eps(1e-8), optim.LRDecay(0.05), optim.InitialAccumulator(0.1))
		}},
		{"RMSProp", "rmsprop", hp{lr: 0.01, alpha: 0.99, eps: 1e-8}, func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewRMSProp(ps, optim.LR(0.01)) }},
		{"RMSProp/centered/momentum/wd", "rmsprop", hp{lr: 0.01, alpha: 0.9, eps: 1e-6, mom: 0.7, wd: 0.05, centered: true}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewRMSProp(ps, optim.LR(0.01), optim.Alpha(0.9), optim.Eps(1e-6), optim.Momentum(0.7), optim.WeightDecay(0.05), optim.Centered())
		}},
		{"RMSProp/pg-pong ascent", "rmsprop", hp{lr: 1e-4, alpha: 0.99, eps: 1e-5, max: true}, func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewRMSProp(ps, optim.LR(1e-4), optim.Alpha(0.99), optim.Eps(1e-5), optim.Maximize())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := tensor.New(append([]float64(nil), p0...)).SetRequiresGrad(true)
			opt := c.mk([]*tensor.Tensor{p})
			ref := append([]float64(nil), p0...)
			var st refState
			worst := 0.0
			for s := 1; s <= 5; s++ {
				tensor.Scope(func() {
					autograd.Backward(tessLoss(p))
					opt.Step()
					opt.ZeroGrad()
				})
				refStep(c.kind, c.h, ref, &st)
				got := p.Float64s()
				for i := range ref {
					d := math.Abs(got[i] - ref[i])
					worst = max(worst, d)
					if d > 1e-13*(1+math.Abs(ref[i])) {
						t.Fatalf("step %d: p[%d] = %.17g, reference %.17g", s, i, got[i], ref[i])
					}
				}
				if p.Grad() != nil {
					t.Fatal("ZeroGrad left a gradient")
				}
			}
			moved := 0.0
			for i, v := range p.Float64s() {
				moved = max(moved, math.Abs(v-p0[i]))
			}
			if moved < 1e-5 {
				t.Errorf("parameters moved by only %g in 5 steps", moved)
			}
			t.Logf("max |param - reference| over 5 steps: %.2e (parameters moved up to %.2e)", worst, moved)
		})
	}
}

func TestMisuse(t *testing.T) {
	p := tensor.Zeros([]int{3}).SetRequiresGrad(true)
	ps := []*tensor.Tensor{p}
	for name, f := range map[string]func(){
		"Betas on SGD":       func() { optim.NewSGD(ps, optim.Betas(0.9, 0.99)) },
		"Nesterov alone":     func() { optim.NewSGD(ps, optim.Nesterov()) },
		"Nesterov+dampening": func() { optim.NewSGD(ps, optim.Momentum(0.9), optim.Dampening(0.1), optim.Nesterov()) },
		"negative lr":        func() { optim.NewAdam(ps, optim.LR(-1)) },
		"beta 1":             func() { optim.NewAdam(ps, optim.Betas(1, 0.9)) },
		"Momentum on Adam":   func() { optim.NewAdamW(ps, optim.Momentum(0.9)) },
		"Nesterov RMSProp":   func() { optim.NewRMSProp(ps, optim.Nesterov()) },
		"LRDecay on Adam":    func() { optim.NewAdam(ps, optim.LRDecay(0.1)) },
		"int param":          func() { optim.NewAdagrad([]*tensor.Tensor{tensor.Zeros([]int{2}, tensor.Of(tensor.Int32))}) },
		"computed param":     func() { optim.NewSGD([]*tensor.Tensor{p.MulScalar(2)}) },
	} {
		if err := tensor.Catch(f); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("%s: got %v, want ErrArgument", name, err)
		}
	}
}

// TestStateSurvivesScopes checks that optimizer state created inside a
// Scope is kept (Keep) and that the update reaches the parameter's own
// storage.
func TestStateSurvivesScopes(t *testing.T) {
	for _, mk := range []func([]*tensor.Tensor) optim.Optimizer{
		func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewSGD(ps, optim.Momentum(0.9)) },
		func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdam(ps, optim.AMSGrad()) },
		func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdagrad(ps) },
		func(ps []*tensor.Tensor) optim.Optimizer {
			return optim.NewRMSProp(ps, optim.Centered(), optim.Momentum(0.5))
		},
	} {
		p := tensor.New([]float32{1, 2, 3}).SetRequiresGrad(true)
		view := p.Detach()
		opt := mk([]*tensor.Tensor{p})
		for i := 0; i < 3; i++ {
			tensor.Scope(func() {
				autograd.Backward(p.Square().Sum())
				opt.Step()
				opt.ZeroGrad()
			})
		}
		if v := view.Float32s(); v[0] == 1 {
			t.Errorf("%T: parameter not updated in place", opt)
		}
	}
}

// Every optimizer implements Optimizer.
var (
	_ optim.Optimizer = (*optim.SGD)(nil)
	_ optim.Optimizer = (*optim.Adam)(nil)
	_ optim.Optimizer = (*optim.Adagrad)(nil)
	_ optim.Optimizer = (*optim.RMSProp)(nil)
)
