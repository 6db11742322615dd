package optim_test

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// fromTorch builds an optimizer from a case of testdata/torch/optim.json.
var fromTorch = map[string]func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer{
	"sgd": func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewSGD(ps, torchOpts(c, "momentum", "dampening", "weight_decay", "nesterov")...)
	},
	"adam": func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewAdam(ps, torchOpts(c, "betas", "eps", "weight_decay", "amsgrad")...)
	},
	"adamw": func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewAdamW(ps, torchOpts(c, "betas", "eps", "weight_decay", "amsgrad")...)
	},
	"adagrad": func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewAdagrad(ps, torchOpts(c, "lr_decay", "weight_decay", "initial_accumulator_value", "eps")...)
	},
	"rmsprop": func(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewRMSProp(ps, torchOpts(c, "alpha", "eps", "weight_decay", "momentum", "centered")...)
	},
}

// torchOpts turns torch keyword arguments into options: lr and maximize
// always, and the keys listed when present.
func torchOpts(c torchref.Case, keys ...string) []optim.Option { return kwOpts(c.Attrs, keys...) }

// kwOpts turns the torch keyword arguments in a into options, as
// torchOpts.
func kwOpts(a map[string]any, keys ...string) []optim.Option {
	c := torchref.Case{Attrs: a}
	var out []optim.Option
	if c.Has("lr") {
		out = append(out, optim.LR(c.Float("lr")))
	}
	if c.Has("maximize") {
		out = append(out, optim.Maximize(c.Bool("maximize")))
	}
	for _, k := range keys {
		if !c.Has(k) {
			continue
		}
		switch k {
		case "momentum":
			out = append(out, optim.Momentum(c.Float(k)))
		case "dampening":
			out = append(out, optim.Dampening(c.Float(k)))
		case "weight_decay":
			out = append(out, optim.WeightDecay(c.Float(k)))
		case "nesterov":
			out = append(out, optim.Nesterov(c.Bool(k)))
		case "betas":
			b := c.Attrs[k].([]any)
			out = append(out, optim.Betas(b[0].(float64), b[1].(float64)))
		case "eps":
			out = append(out, optim.Eps(c.Float(k)))
		case "amsgrad":
			out = append(out, optim.AMSGrad(c.Bool(k)))
		case "lr_decay":
			out = append(out, optim.LRDecay(c.Float(k)))
		case "initial_accumulator_value":
			out = append(out, optim.InitialAccumulator(c.Float(k)))
		case "alpha":
			out = append(out, optim.Alpha(c.Float(k)))
		case "centered":
			out = append(out, optim.Centered(c.Bool(k)))
		}
	}
	return out
}

func leaf(r torchref.Tensor) *tensor.Tensor {
	if r.DType == "float32" {
		return tensor.New(r.Float32s(), r.Shape...)
	}
	return tensor.New(r.Data, r.Shape...)
}

// TestTorchOptim replays each optimizer trajectory PyTorch recorded.
func TestTorchOptim(t *testing.T) {
	cases := torchref.MustLoad(t, "optim")
	worst := map[string]float64{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			mk := fromTorch[c.Op]
			if mk == nil {
				t.Fatalf("no optimizer for op %q", c.Op)
			}
			steps := c.Int("steps")
			ps := []*tensor.Tensor{leaf(c.Inputs[0]).SetRequiresGrad(true), leaf(c.Inputs[1]).SetRequiresGrad(true)}
			skip := map[[2]int]bool{}
			for _, s := range c.Attrs["skip"].([]any) {
				pair := s.([]any)
				skip[[2]int{int(pair[0].(float64)), int(pair[1].(float64))}] = true
			}
			opt := mk(c, ps)
			tl := 1e-13
			key := c.Op + " f64"
			if c.Inputs[0].DType == "float32" {
				tl, key = 2e-6, c.Op+" f32"
			}
			for s := 1; s <= steps; s++ {
				for i, p := range ps {
					if skip[[2]int{s, i}] {
						p.SetGrad(nil)
						continue
					}
					p.SetGrad(leaf(c.Inputs[2+2*(s-1)+i]))
				}
				opt.Step()
				for i, p := range ps {
					want := c.Outputs[2*(s-1)+i]
					got := p.Float64s()
					if !slices.Equal(p.Shape(), want.Shape) {
						t.Fatalf("shape %v, want %v", p.Shape(), want.Shape)
					}
					for j, w := range want.Data {
						d := math.Abs(got[j] - w)
						worst[key] = max(worst[key], d)
						if !(d <= tl*(1+math.Abs(w))) {
							t.Fatalf("step %d: p%d[%d] = %.17g, want %.17g (diff %.2g)", s, i, j, got[j], w, d)
						}
					}
				}
			}
		})
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("%-12s max |param - torch| over 5 steps: %.2e", k, worst[k])
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Op] = true
	}
	for op := range fromTorch {
		if !seen[op] {
			t.Errorf("optimizer %q has no case in optim.json", op)
		}
	}
}
