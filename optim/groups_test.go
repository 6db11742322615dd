package optim_test

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// groupOptimizers builds the optimizers of groups.json from their torch
// keyword arguments.
var groupOptimizers = map[string]struct {
	mk   func(ps []*tensor.Tensor, o ...optim.Option) optim.Optimizer
	keys []string
}{
	"sgd": {func(ps []*tensor.Tensor, o ...optim.Option) optim.Optimizer { return optim.NewSGD(ps, o...) },
		[]string{"momentum", "dampening", "weight_decay", "nesterov"}},
	"adam": {func(ps []*tensor.Tensor, o ...optim.Option) optim.Optimizer { return optim.NewAdam(ps, o...) },
		[]string{"betas", "eps", "weight_decay", "amsgrad"}},
	"adamw": {func(ps []*tensor.Tensor, o ...optim.Option) optim.Optimizer { return optim.NewAdamW(ps, o...) },
		[]string{"betas", "eps", "weight_decay", "amsgrad"}},
}

// groupsOptimizer builds case c's optimizer over ps in its parameter
// groups: group 0 takes the optimizer's options, with its own overrides
// copied into its Hyper; later groups come through AddParamGroup.
func groupsOptimizer(c torchref.Case, ps []*tensor.Tensor) optim.Optimizer {
	o := groupOptimizers[c.Op]
	defaults := kwOpts(c.Attrs, o.keys...)
	pick := func(g map[string]any) []*tensor.Tensor {
		var out []*tensor.Tensor
		for _, i := range g["params"].([]any) {
			out = append(out, ps[int(i.(float64))])
		}
		return out
	}
	groups := c.Attrs["groups"].([]any)
	first := groups[0].(map[string]any)
	opt := o.mk(pick(first), defaults...)
	if len(first) > 1 {
		own := o.mk([]*tensor.Tensor{tensor.Zeros([]int{1})}, append(defaults, kwOpts(first, o.keys...)...)...)
		opt.Groups()[0].Hyper = own.Groups()[0].Hyper
	}
	for _, g := range groups[1:] {
		opt.AddParamGroup(pick(g.(map[string]any)), kwOpts(g.(map[string]any), o.keys...)...)
	}
	return opt
}

// warmupCosine returns the case's SequentialLR of a LinearLR warm-up
// and a CosineAnnealingLR, or nil when it has none.
func warmupCosine(c torchref.Case, opt optim.Optimizer) optim.Scheduler {
	if !c.Has("warmup") {
		return nil
	}
	w := c.Attrs["warmup"].([]any)
	iters := int(w[1].(float64))
	warm := optim.NewLinearLR(opt, w[0].(float64), 1, iters)
	cos := optim.NewCosineAnnealingLR(opt, c.Int("cosine"), 0)
	return optim.NewSequentialLR(opt, []optim.Scheduler{warm, cos}, []int{iters})
}

// TestTorchGroups replays groups.json: parameter groups with their own
// options through Adam, AdamW and SGD (one with a warm-up and cosine
// schedule) match PyTorch step for step, on every device (float32
// cases on a GPU), and the state tensors carry PyTorch's names.
func TestTorchGroups(t *testing.T) {
	cases := torchref.MustLoad(t, "groups")
	for _, dev := range devtest.Devices(t) {
		for _, c := range cases {
			f32 := c.Inputs[0].DType == "float32"
			if dev != tensor.CPU && !f32 {
				continue
			}
			t.Run(dev.String()+"/"+c.Name, func(t *testing.T) {
				n := len(c.Inputs) / (c.Int("steps") + 1)
				ps := make([]*tensor.Tensor, n)
				for i := range ps {
					ps[i] = leaf(c.Inputs[i]).To(dev).SetRequiresGrad(true)
				}
				opt := groupsOptimizer(c, ps)
				sched := warmupCosine(c, opt)
				tl := 1e-13
				if f32 {
					tl = 2e-6
				}
				worst := 0.0
				for s := 0; s < c.Int("steps"); s++ {
					for i, p := range ps {
						p.SetGrad(leaf(c.Inputs[n*(s+1)+i]).To(dev))
					}
					opt.Step()
					if sched != nil {
						sched.Step()
					}
					for i, p := range ps {
						want := c.Outputs[n*s+i].Data
						for j, v := range p.Float64s() {
							d := math.Abs(v - want[j])
							worst = max(worst, d)
							if !(d <= tl*(1+math.Abs(want[j]))) {
								t.Fatalf("step %d: p%d[%d] = %.17g, PyTorch %.17g", s+1, i, j, v, want[j])
							}
						}
					}
				}
				tensors, _ := opt.StateDict()
				if got, want := slices.Sorted(maps.Keys(tensors)), strs(c.Attrs["state_keys"]); !slices.Equal(got, want) {
					t.Errorf("state names %q, PyTorch %q", got, want)
				}
				t.Logf("max |param - torch| over %d steps: %.1e", c.Int("steps"), worst)
			})
		}
	}
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestParamGroups: the groups keep their own options, Params lists the
// parameters group after group, frozen or unused parameters are
// skipped, and groups may be added empty.
func TestParamGroups(t *testing.T) {
	a := tensor.Ones([]int{2}).SetRequiresGrad(true)
	b := tensor.Ones([]int{3}).SetRequiresGrad(true)
	frozen := tensor.Ones([]int{1})
	opt := optim.NewSGD([]*tensor.Tensor{a}, optim.LR(0.5), optim.Momentum(0.9))
	opt.AddParamGroup([]*tensor.Tensor{b, frozen}, optim.LR(0.1))
	opt.AddParamGroup(nil)
	gs := opt.Groups()
	if len(gs) != 3 || gs[0].LR != 0.5 || gs[1].LR != 0.1 || gs[1].Momentum != 0.9 || gs[2].LR != 0.5 {
		t.Fatalf("groups %+v %+v %+v", gs[0].Hyper, gs[1].Hyper, gs[2].Hyper)
	}
	if got := opt.Params(); len(got) != 3 || got[0] != a || got[1] != b || got[2] != frozen {
		t.Errorf("Params %v", got)
	}
	a.SetGrad(tensor.Ones([]int{2}))
	b.SetGrad(tensor.Ones([]int{3}))
	opt.Step()
	if v := a.Float32s()[0]; v != 0.5 {
		t.Errorf("group 0 stepped to %v, want 1 - 0.5", v)
	}
	if v := b.Float32s()[0]; math.Abs(float64(v)-0.9) > 1e-7 {
		t.Errorf("group 1 stepped to %v, want 1 - 0.1", v)
	}
	if v := frozen.Float32s()[0]; v != 1 {
		t.Errorf("a parameter without a gradient moved to %v", v)
	}
	tensors, st := opt.StateDict()
	if got := slices.Sorted(maps.Keys(tensors)); !slices.Equal(got, []string{"state.0.momentum_buffer", "state.1.momentum_buffer"}) {
		t.Errorf("state names %q", got)
	}
	if !slices.Equal(st.Steps, []int{1, 1, 0}) || len(st.Groups) != 3 || !slices.Equal(st.Groups[1].Params, []int{1, 2}) {
		t.Errorf("state %+v", st)
	}
	if s := st.Groups[2].Params; s == nil || len(s) != 0 {
		t.Errorf("an empty group's parameters encode as %v, want []", s)
	}
}
