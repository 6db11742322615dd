package optim_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// TestOptionValidation: every option and constructor argument is
// checked as PyTorch's optimizers check them (negative lr, momentum,
// weight decay, eps, alpha, lr decay, initial accumulator; betas outside
// [0, 1); an empty parameter list), and values that are not finite are
// refused too.
func TestOptionValidation(t *testing.T) {
	p := tensor.Zeros([]int{3}).SetRequiresGrad(true)
	ps := []*tensor.Tensor{p}
	nan, inf := math.NaN(), math.Inf(1)
	sgd := func(o ...optim.Option) func() { return func() { optim.NewSGD(ps, o...) } }
	adam := func(o ...optim.Option) func() { return func() { optim.NewAdam(ps, o...) } }
	adamw := func(o ...optim.Option) func() { return func() { optim.NewAdamW(ps, o...) } }
	adagrad := func(o ...optim.Option) func() { return func() { optim.NewAdagrad(ps, o...) } }
	rms := func(o ...optim.Option) func() { return func() { optim.NewRMSProp(ps, o...) } }
	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"SGD LR(+Inf)", "learning rate", sgd(optim.LR(inf))},
		{"SGD LR(NaN)", "learning rate", sgd(optim.LR(nan))},
		{"SGD LR(-1)", "learning rate", sgd(optim.LR(-1))},
		{"SGD Momentum(NaN)", "momentum", sgd(optim.Momentum(nan))},
		{"SGD Momentum(-0.5)", "momentum", sgd(optim.Momentum(-0.5))},
		{"SGD Dampening(Inf)", "dampening", sgd(optim.Momentum(0.9), optim.Dampening(inf))},
		{"SGD WeightDecay(NaN)", "weight decay", sgd(optim.WeightDecay(nan))},
		{"SGD WeightDecay(-1e-4)", "weight decay", sgd(optim.WeightDecay(-1e-4))},
		{"Adam WeightDecay(NaN)", "weight decay", adam(optim.WeightDecay(nan))},
		{"Adam Eps(-1e-8)", "epsilon", adam(optim.Eps(-1e-8))},
		{"Adam Eps(NaN)", "epsilon", adam(optim.Eps(nan))},
		{"Adam Eps(Inf)", "epsilon", adam(optim.Eps(inf))},
		{"Adam Betas(NaN, 0.9)", "beta", adam(optim.Betas(nan, 0.9))},
		{"Adam Betas(0.9, 1)", "beta", adam(optim.Betas(0.9, 1))},
		{"Adam Betas(-0.1, 0.9)", "beta", adam(optim.Betas(-0.1, 0.9))},
		{"Adam LR(-Inf)", "learning rate", adam(optim.LR(math.Inf(-1)))},
		{"AdamW WeightDecay(Inf)", "weight decay", adamw(optim.WeightDecay(inf))},
		{"Adagrad LRDecay(NaN)", "lr decay", adagrad(optim.LRDecay(nan))},
		{"Adagrad LRDecay(-1)", "lr decay", adagrad(optim.LRDecay(-1))},
		{"Adagrad InitialAccumulator(-1)", "initial accumulator", adagrad(optim.InitialAccumulator(-1))},
		{"Adagrad InitialAccumulator(Inf)", "initial accumulator", adagrad(optim.InitialAccumulator(inf))},
		{"RMSProp Alpha(-0.1)", "alpha", rms(optim.Alpha(-0.1))},
		{"RMSProp Alpha(NaN)", "alpha", rms(optim.Alpha(nan))},
		{"RMSProp Momentum(Inf)", "momentum", rms(optim.Momentum(inf))},
		{"a nil option", "option 1 is nil", sgd(optim.LR(0.1), nil)},
		{"no parameters", "empty parameter list", func() { optim.NewAdam(nil) }},
		{"a nil parameter", "parameter 1", func() { optim.NewSGD([]*tensor.Tensor{p, nil}) }},
		{"a group's LR set to +Inf", "group 0: invalid learning rate", func() { o := optim.NewSGD(ps); o.Groups()[0].LR = inf; o.Step() }},
		{"a group's LR set to NaN", "group 0: invalid learning rate", func() { o := optim.NewAdam(ps); o.Groups()[0].LR = nan; o.Step() }},
		{"a group's beta set to 1", "group 1: invalid beta", func() {
			o := optim.NewAdam(ps)
			o.AddParamGroup([]*tensor.Tensor{tensor.Zeros([]int{1})})
			o.Groups()[1].Beta1 = 1
			o.Step()
		}},
		{"Nesterov set without momentum", "Nesterov", func() { o := optim.NewSGD(ps); o.Groups()[0].Nesterov = true; o.Step() }},
		{"AddParamGroup with a taken parameter", "more than one parameter group", func() { optim.NewSGD(ps).AddParamGroup(ps) }},
		{"a parameter twice", "appears twice", func() { optim.NewSGD([]*tensor.Tensor{p, p}) }},
		{"AddParamGroup with an option SGD lacks", "option Betas", func() {
			optim.NewSGD(ps).AddParamGroup([]*tensor.Tensor{tensor.Zeros([]int{1})}, optim.Betas(0.9, 0.9))
		}},
	} {
		err := tensor.Catch(c.f)
		if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrArgument naming %q", c.name, err, c.want)
		}
	}
	// What PyTorch accepts stays accepted: eps 0 (torch checks 0 <= eps),
	// beta 0, a negative dampening, alpha above 1.
	for name, f := range map[string]func(){
		"Adam Eps(0)":           adam(optim.Eps(0)),
		"Adam Betas(0, 0)":      adam(optim.Betas(0, 0)),
		"SGD Dampening(-0.5)":   sgd(optim.Momentum(0.9), optim.Dampening(-0.5)),
		"RMSProp Alpha(1.5)":    rms(optim.Alpha(1.5)),
		"Adagrad LR(0)":         adagrad(optim.LR(0)),
		"SGD with every option": sgd(optim.LR(0.1), optim.Momentum(0.9), optim.WeightDecay(1e-4), optim.Nesterov(), optim.Maximize()),
	} {
		if err := tensor.Catch(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEmptyParameters: a zero-size parameter goes through every
// optimizer's step, with every option, on every device (as in PyTorch,
// where in-place ops accept empty tensors).
func TestEmptyParameters(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		for _, mk := range []struct {
			name string
			f    func(ps []*tensor.Tensor) optim.Optimizer
		}{
			{"SGD", func(ps []*tensor.Tensor) optim.Optimizer {
				return optim.NewSGD(ps, optim.Momentum(0.9), optim.Nesterov(), optim.WeightDecay(0.1), optim.Maximize())
			}},
			{"Adam", func(ps []*tensor.Tensor) optim.Optimizer {
				return optim.NewAdam(ps, optim.AMSGrad(), optim.WeightDecay(0.1))
			}},
			{"AdamW", func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdamW(ps) }},
			{"Adagrad", func(ps []*tensor.Tensor) optim.Optimizer {
				return optim.NewAdagrad(ps, optim.LRDecay(0.1), optim.InitialAccumulator(0.1))
			}},
			{"RMSProp", func(ps []*tensor.Tensor) optim.Optimizer {
				return optim.NewRMSProp(ps, optim.Centered(), optim.Momentum(0.5), optim.WeightDecay(0.1))
			}},
		} {
			empty := tensor.Zeros([]int{3, 0}, tensor.On(dev)).SetRequiresGrad(true)
			full := tensor.Ones([]int{2}, tensor.On(dev)).SetRequiresGrad(true)
			opt := mk.f([]*tensor.Tensor{empty, full})
			err := tensor.Catch(func() {
				for range 2 {
					tensor.Scope(func() {
						autograd.Backward(empty.Sum().Add(full.Square().Sum()))
						opt.Step()
						opt.ZeroGrad()
					})
				}
			})
			if err != nil {
				t.Errorf("%v: %s with a [3 0] parameter: %v", dev, mk.name, err)
				continue
			}
			if v := full.Float32s(); v[0] == 1 {
				t.Errorf("%v: %s did not update the non-empty parameter", dev, mk.name)
			}
		}
	}
}
