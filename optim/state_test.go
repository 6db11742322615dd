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

// stateful lists optimizers and schedules whose whole state a resume
// must carry: buffers, step counts, hyper-parameters a schedule set.
var stateful = []struct {
	name  string
	opt   func(a, b []*tensor.Tensor) optim.Optimizer
	sched func(o optim.Optimizer) optim.Scheduler
}{
	{"SGD nesterov + OneCycleLR", func(a, b []*tensor.Tensor) optim.Optimizer {
		o := optim.NewSGD(a, optim.LR(0.05), optim.Momentum(0.9), optim.Nesterov())
		o.AddParamGroup(b, optim.Momentum(0.5), optim.Nesterov(false), optim.WeightDecay(0.01))
		return o
	}, func(o optim.Optimizer) optim.Scheduler { return optim.NewOneCycleLR(o, 0.1, 10) }},
	{"Adam amsgrad + StepLR", func(a, b []*tensor.Tensor) optim.Optimizer {
		o := optim.NewAdam(a, optim.LR(0.05), optim.AMSGrad())
		o.AddParamGroup(b, optim.LR(0.02), optim.AMSGrad(false))
		return o
	}, func(o optim.Optimizer) optim.Scheduler { return optim.NewStepLR(o, 3, 0.5) }},
	{"AdamW + warm-up and cosine", func(a, b []*tensor.Tensor) optim.Optimizer {
		o := optim.NewAdamW(a, optim.LR(0.05), optim.WeightDecay(0.1))
		o.AddParamGroup(b, optim.WeightDecay(0))
		return o
	}, func(o optim.Optimizer) optim.Scheduler {
		return optim.NewSequentialLR(o, []optim.Scheduler{optim.NewLinearLR(o, 0.1, 1, 3), optim.NewCosineAnnealingLR(o, 7, 0.001)}, []int{3})
	}},
	{"Adagrad + OneCycleLR without momentum", func(a, b []*tensor.Tensor) optim.Optimizer {
		o := optim.NewAdagrad(a, optim.LR(0.1), optim.LRDecay(0.01))
		o.AddParamGroup(b, optim.InitialAccumulator(0.1))
		return o
	}, func(o optim.Optimizer) optim.Scheduler {
		return optim.NewOneCycleLR(o, 0.1, 10, optim.NoCycleMomentum())
	}},
	{"RMSProp centered + cosine", func(a, b []*tensor.Tensor) optim.Optimizer {
		o := optim.NewRMSProp(a, optim.LR(0.01), optim.Centered(), optim.Momentum(0.5))
		o.AddParamGroup(b, optim.Centered(false), optim.Momentum(0))
		return o
	}, func(o optim.Optimizer) optim.Scheduler { return optim.NewCosineAnnealingLR(o, 4, 0) }},
}

// quartic returns the parameters of a small problem in two groups, a
// fixed copy of p0 and p0[:2], and its loss Σ(p - c)² + Σp⁴/10.
func quartic(dev tensor.Device) (a, b []*tensor.Tensor, loss func() *tensor.Tensor) {
	x := tensor.New([]float32{0.8, -1.3, 0.25, 2.0, -0.6, 1.1}, 2, 3).To(dev).SetRequiresGrad(true)
	y := tensor.New([]float32{0.5, -0.2}).To(dev).SetRequiresGrad(true)
	z := tensor.New([]float32{1.5}).To(dev).SetRequiresGrad(true)
	loss = func() *tensor.Tensor {
		s := tensor.Zeros(nil, tensor.On(dev))
		for _, p := range []*tensor.Tensor{x, y, z} {
			s = s.Add(p.SubScalar(0.3).Square().Sum()).Add(p.PowScalar(4).Sum().MulScalar(0.1))
		}
		return s
	}
	return []*tensor.Tensor{x, y}, []*tensor.Tensor{z}, loss
}

// TestResumeBitwise trains each optimizer and schedule 10 steps, and
// again 4 steps, a state dict (tensors copied to the CPU, State and
// ScheduleState through JSON), fresh parameters, optimizer and schedule
// restored from it, and 6 steps: the parameters agree bit for bit, on
// every device.
func TestResumeBitwise(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		for _, c := range stateful {
			run := func(steps int, o optim.Optimizer, s optim.Scheduler, loss func() *tensor.Tensor) {
				for range steps {
					tensor.Scope(func() {
						autograd.Backward(loss())
						o.Step()
						o.ZeroGrad()
						s.Step()
					})
				}
			}
			a, b, loss := quartic(dev)
			o := c.opt(a, b)
			run(10, o, c.sched(o), loss)
			want := append(append([]*tensor.Tensor{}, a...), b...)

			a2, b2, loss2 := quartic(dev)
			o2 := c.opt(a2, b2)
			s2 := c.sched(o2)
			run(4, o2, s2, loss2)
			tensors, st := o2.StateDict()
			saved := map[string]*tensor.Tensor{}
			for k, v := range tensors {
				saved[k] = v.To(tensor.CPU).Clone()
			}
			var st2 optim.State
			var ss optim.ScheduleState
			roundTrip(t, st, &st2)
			roundTrip(t, s2.State(), &ss)
			params := append(append([]*tensor.Tensor{}, a2...), b2...)

			a3, b3, loss3 := quartic(dev)
			for i, p := range append(append([]*tensor.Tensor{}, a3...), b3...) {
				p.Detach().CopyFrom(params[i])
			}
			o3 := c.opt(a3, b3)
			s3 := c.sched(o3)
			run(1, o3, s3, loss3) // state a fresh start would have, to be replaced
			if err := o3.LoadStateDict(saved, st2); err != nil {
				t.Fatalf("%v %s: %v", dev, c.name, err)
			}
			if err := s3.LoadState(ss); err != nil {
				t.Fatalf("%v %s: %v", dev, c.name, err)
			}
			for i, p := range append(append([]*tensor.Tensor{}, a3...), b3...) {
				p.Detach().CopyFrom(params[i])
			}
			run(6, o3, s3, loss3)
			for i, p := range append(append([]*tensor.Tensor{}, a3...), b3...) {
				g, w := p.Float32s(), want[i].Float32s()
				for j := range w {
					if math.Float32bits(g[j]) != math.Float32bits(w[j]) {
						t.Fatalf("%v %s: parameter %d[%d] = %v after resuming, %v without stopping", dev, c.name, i, j, g[j], w[j])
					}
				}
			}
		}
	}
}

// TestLoadStateDictErrors: states that do not fit are errors naming
// the problem, and load nothing.
func TestLoadStateDictErrors(t *testing.T) {
	a, b, loss := quartic(tensor.CPU)
	o := optim.NewAdam(a, optim.LR(0.1))
	o.AddParamGroup(b, optim.AMSGrad())
	for range 2 {
		autograd.Backward(loss())
		o.Step()
		o.ZeroGrad()
	}
	good, st := o.StateDict()
	with := func(edit func(m map[string]*tensor.Tensor, s *optim.State)) (map[string]*tensor.Tensor, optim.State) {
		m := map[string]*tensor.Tensor{}
		for k, v := range good {
			m[k] = v
		}
		s := st
		s.Groups = append([]optim.GroupState{}, st.Groups...)
		s.Steps = append([]int{}, st.Steps...)
		edit(m, &s)
		return m, s
	}
	fresh := optim.NewAdam(a, optim.LR(0.1))
	fresh.AddParamGroup(b, optim.AMSGrad())
	before, beforeSt := fresh.StateDict()
	for _, c := range []struct {
		name, want string
		kind       error
		edit       func(m map[string]*tensor.Tensor, s *optim.State)
	}{
		{"another optimizer", `"SGD" optimizer's`, tensor.ErrArgument, func(_ map[string]*tensor.Tensor, s *optim.State) { s.Optimizer = "SGD" }},
		{"one group", "1 parameter groups", tensor.ErrArgument, func(_ map[string]*tensor.Tensor, s *optim.State) { s.Groups = s.Groups[:1] }},
		{"steps", "steps of 2 parameters", tensor.ErrArgument, func(_ map[string]*tensor.Tensor, s *optim.State) { s.Steps = s.Steps[:2] }},
		{"a bad beta", "invalid beta", tensor.ErrArgument, func(_ map[string]*tensor.Tensor, s *optim.State) { s.Groups[1].Beta2 = 1 }},
		{"a missing buffer", `"state.2.max_exp_avg_sq" is missing`, tensor.ErrArgument, func(m map[string]*tensor.Tensor, _ *optim.State) {
			delete(m, "state.2.max_exp_avg_sq")
		}},
		{"an unknown buffer", `"state.0.momentum_buffer" is not`, tensor.ErrArgument, func(m map[string]*tensor.Tensor, _ *optim.State) {
			m["state.0.momentum_buffer"] = m["state.0.exp_avg"]
		}},
		{"an index out of range", `"state.3.exp_avg" is not`, tensor.ErrArgument, func(m map[string]*tensor.Tensor, _ *optim.State) {
			m["state.3.exp_avg"] = m["state.0.exp_avg"]
		}},
		{"a shape", `"state.1.exp_avg" has shape [2 3]`, tensor.ErrShape, func(m map[string]*tensor.Tensor, _ *optim.State) {
			m["state.1.exp_avg"] = m["state.0.exp_avg"]
		}},
		{"a missing buffer beside a mis-shaped one", `"state.1.exp_avg" is missing`, tensor.ErrShape, func(m map[string]*tensor.Tensor, _ *optim.State) {
			delete(m, "state.1.exp_avg")
			m["state.1.exp_avg_sq"] = m["state.0.exp_avg"]
		}},
		{"a parameter that has not stepped", "has not stepped", tensor.ErrArgument, func(_ map[string]*tensor.Tensor, s *optim.State) { s.Steps[0] = 0 }},
		{"an integer buffer", "not a float tensor", tensor.ErrArgument, func(m map[string]*tensor.Tensor, _ *optim.State) {
			m["state.1.exp_avg"] = tensor.New([]int32{1, 2})
		}},
	} {
		m, s := with(c.edit)
		err := fresh.LoadStateDict(m, s)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %v naming %q", c.name, err, c.kind, c.want)
		}
		after, afterSt := fresh.StateDict()
		if len(after) != len(before) || len(afterSt.Steps) != len(beforeSt.Steps) || afterSt.Steps[0] != 0 || fresh.Groups()[1].Beta2 != 0.999 {
			t.Errorf("%s: a failed load changed the optimizer", c.name)
		}
	}
	// A float64 state loads into float32 parameters, cast.
	d := []*tensor.Tensor{tensor.Zeros([]int{2, 3}, tensor.Of(tensor.Float64)).SetRequiresGrad(true)}
	o64 := optim.NewSGD(d, optim.Momentum(0.9))
	d[0].SetGrad(tensor.Ones([]int{2, 3}, tensor.Of(tensor.Float64)))
	o64.Step()
	m64, s64 := o64.StateDict()
	o32 := optim.NewSGD(a[:1], optim.Momentum(0.9))
	if err := o32.LoadStateDict(m64, s64); err != nil {
		t.Fatal(err)
	}
	if m, _ := o32.StateDict(); m["state.0.momentum_buffer"].DType() != tensor.Float32 || m["state.0.momentum_buffer"].Float32s()[0] != 1 {
		t.Errorf("a float64 momentum buffer loaded as %v", m["state.0.momentum_buffer"])
	}
}
