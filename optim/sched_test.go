package optim_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// kw reads keyword argument k of a torch call from m, or def.
func kw(m map[string]any, k string, def float64) float64 {
	if v, ok := m[k]; ok {
		return v.(float64)
	}
	return def
}

// schedOptimizer builds sched.json's optimizer: one group per rate,
// SGD with momentum 0.9 or Adam.
func schedOptimizer(c torchref.Case) optim.Optimizer {
	var lrs []float64
	for _, v := range c.Attrs["lrs"].([]any) {
		lrs = append(lrs, v.(float64))
	}
	p := func() []*tensor.Tensor { return []*tensor.Tensor{tensor.Zeros([]int{2}).SetRequiresGrad(true)} }
	var opt optim.Optimizer
	if c.String("optimizer") == "sgd" {
		opt = optim.NewSGD(p(), optim.LR(lrs[0]), optim.Momentum(0.9))
	} else {
		opt = optim.NewAdam(p(), optim.LR(lrs[0]))
	}
	for _, lr := range lrs[1:] {
		opt.AddParamGroup(p(), optim.LR(lr))
	}
	return opt
}

// newSchedule builds a schedule of kind with torch's keyword arguments.
func newSchedule(opt optim.Optimizer, kind string, a map[string]any) optim.Scheduler {
	switch kind {
	case "step":
		return optim.NewStepLR(opt, int(a["step_size"].(float64)), kw(a, "gamma", 0.1))
	case "cosine":
		return optim.NewCosineAnnealingLR(opt, int(a["T_max"].(float64)), kw(a, "eta_min", 0))
	case "linear":
		return optim.NewLinearLR(opt, kw(a, "start_factor", 1.0/3), kw(a, "end_factor", 1), int(kw(a, "total_iters", 5)))
	case "onecycle":
		var opts []optim.OneCycleOption
		maxLR := 0.0
		if l, ok := a["max_lr"].([]any); ok {
			var lrs []float64
			for _, v := range l {
				lrs = append(lrs, v.(float64))
			}
			opts = append(opts, optim.GroupMaxLR(lrs...))
		} else {
			maxLR = a["max_lr"].(float64)
		}
		opts = append(opts, optim.PctStart(kw(a, "pct_start", 0.3)),
			optim.DivFactors(kw(a, "div_factor", 25), kw(a, "final_div_factor", 1e4)),
			optim.MomentumRange(kw(a, "base_momentum", 0.85), kw(a, "max_momentum", 0.95)))
		if a["anneal_strategy"] == "linear" {
			opts = append(opts, optim.AnnealLinear())
		}
		if a["three_phase"] == true {
			opts = append(opts, optim.ThreePhase())
		}
		if a["cycle_momentum"] == false {
			opts = append(opts, optim.NoCycleMomentum())
		}
		return optim.NewOneCycleLR(opt, maxLR, int(a["total_steps"].(float64)), opts...)
	}
	panic("unknown schedule " + kind)
}

// caseSchedule builds case c's schedule over opt.
func caseSchedule(c torchref.Case, opt optim.Optimizer) optim.Scheduler {
	if c.Op != "sequential" {
		return newSchedule(opt, c.Op, c.Attrs["schedule"].(map[string]any))
	}
	var subs []optim.Scheduler
	for _, s := range c.Attrs["schedules"].([]any) {
		pair := s.([]any)
		subs = append(subs, newSchedule(opt, pair[0].(string), pair[1].(map[string]any)))
	}
	return optim.NewSequentialLR(opt, subs, c.Ints("milestones"))
}

// rates returns each group's learning rate and momentum (Beta1 for Adam).
func rates(opt optim.Optimizer) (lr, mom []float64) {
	for _, g := range opt.Groups() {
		lr = append(lr, g.LR)
		if _, ok := opt.(*optim.Adam); ok {
			mom = append(mom, g.Beta1)
		} else {
			mom = append(mom, g.Momentum)
		}
	}
	return lr, mom
}

// roundTrip encodes v to JSON and decodes it into out, as a checkpoint's
// metadata does.
func roundTrip(t *testing.T, v, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// TestTorchSchedules replays sched.json: the learning rate and momentum
// of every group after construction and after each step agree with
// PyTorch's; and a schedule saved half-way (State, the optimizer's
// State, through JSON) and restored into fresh objects continues with
// bitwise the rates of the uninterrupted run.
func TestTorchSchedules(t *testing.T) {
	cases := torchref.MustLoad(t, "sched")
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Op] = true
		t.Run(c.Name, func(t *testing.T) {
			steps := c.Int("steps")
			opt := schedOptimizer(c)
			s := caseSchedule(c, opt)
			wantLR, wantMom := c.Outputs[0], c.Outputs[1]
			groups := len(opt.Groups())
			var gotLR [][]float64
			worst := 0.0
			var saved optim.ScheduleState
			var savedOpt optim.State
			half := steps / 2
			for step := 0; step <= steps; step++ {
				if step > 0 {
					opt.Step()
					s.Step()
				}
				lr, mom := rates(opt)
				gotLR = append(gotLR, lr)
				for g := range groups {
					w := wantLR.Data[step*groups+g]
					if w != 0 {
						worst = max(worst, math.Abs(lr[g]-w)/math.Abs(w))
					}
					if math.Abs(lr[g]-w) > 1e-13*math.Abs(w) {
						t.Fatalf("step %d group %d: lr %.17g, PyTorch %.17g", step, g, lr[g], w)
					}
					if w := wantMom.Data[step*groups+g]; math.Abs(mom[g]-w) > 1e-13*w {
						t.Fatalf("step %d group %d: momentum %.17g, PyTorch %.17g", step, g, mom[g], w)
					}
				}
				if lr := s.LastLR(); lr[groups-1] != gotLR[step][groups-1] {
					t.Fatalf("LastLR %v, groups %v", lr, gotLR[step])
				}
				if step == half {
					roundTrip(t, s.State(), &saved)
					_, st := opt.StateDict()
					roundTrip(t, st, &savedOpt)
				}
			}
			t.Logf("max relative |lr - torch| over %d steps: %.1e", steps, worst)
			opt2 := schedOptimizer(c)
			s2 := caseSchedule(c, opt2)
			if err := opt2.LoadStateDict(nil, savedOpt); err != nil {
				t.Fatal(err)
			}
			if err := s2.LoadState(saved); err != nil {
				t.Fatal(err)
			}
			for step := half + 1; step <= steps; step++ {
				s2.Step()
				lr, _ := rates(opt2)
				for g := range groups {
					if math.Float64bits(lr[g]) != math.Float64bits(gotLR[step][g]) {
						t.Fatalf("resumed at %d: step %d group %d: %v, uninterrupted %v", half, step, g, lr[g], gotLR[step][g])
					}
				}
			}
		})
	}
	for _, k := range []string{"step", "cosine", "linear", "onecycle", "sequential"} {
		if !seen[k] {
			t.Errorf("no case for schedule %q", k)
		}
	}
}

// TestScheduleMisuse: bad arguments panic with ErrArgument; stepping a
// OneCycleLR past its total panics and changes nothing; states of other
// schedules or shapes are errors that load nothing.
func TestScheduleMisuse(t *testing.T) {
	ps := func() []*tensor.Tensor { return []*tensor.Tensor{tensor.Zeros([]int{1}).SetRequiresGrad(true)} }
	sgd := optim.NewSGD(ps(), optim.LR(0.1))
	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"StepLR size 0", "step size", func() { optim.NewStepLR(sgd, 0, 0.1) }},
		{"StepLR gamma NaN", "gamma", func() { optim.NewStepLR(sgd, 1, math.NaN()) }},
		{"Cosine T_max 0", "T_max", func() { optim.NewCosineAnnealingLR(sgd, 0, 0) }},
		{"Cosine eta_min -1", "eta_min", func() { optim.NewCosineAnnealingLR(sgd, 3, -1) }},
		{"LinearLR start 0", "start factor", func() { optim.NewLinearLR(sgd, 0, 1, 5) }},
		{"LinearLR end 2", "end factor", func() { optim.NewLinearLR(sgd, 0.5, 2, 5) }},
		{"LinearLR 0 iterations", "total iterations", func() { optim.NewLinearLR(sgd, 0.5, 1, 0) }},
		{"OneCycle 0 steps", "total steps", func() { optim.NewOneCycleLR(sgd, 0.1, 0) }},
		{"OneCycle pct 1.5", "pct_start", func() { optim.NewOneCycleLR(sgd, 0.1, 10, optim.PctStart(1.5)) }},
		{"OneCycle max lr Inf", "finite", func() { optim.NewOneCycleLR(sgd, math.Inf(1), 10) }},
		{"OneCycle two max lrs", "max_lr", func() { optim.NewOneCycleLR(sgd, 0, 10, optim.GroupMaxLR(1, 2)) }},
		{"OneCycle Adagrad", "momentum", func() { optim.NewOneCycleLR(optim.NewAdagrad(ps()), 0.1, 10) }},
		{"OneCycle nil option", "option 0", func() { optim.NewOneCycleLR(sgd, 0.1, 10, nil) }},
		{"Sequential milestones", "one milestone fewer", func() {
			optim.NewSequentialLR(sgd, []optim.Scheduler{optim.NewStepLR(sgd, 1, 1)}, []int{3})
		}},
		{"Sequential order", "increase", func() {
			a, b, c := optim.NewStepLR(sgd, 1, 1), optim.NewStepLR(sgd, 1, 1), optim.NewStepLR(sgd, 1, 1)
			optim.NewSequentialLR(sgd, []optim.Scheduler{a, b, c}, []int{4, 4})
		}},
		{"Sequential other optimizer", "another optimizer", func() {
			other := optim.NewSGD(ps())
			optim.NewSequentialLR(sgd, []optim.Scheduler{optim.NewStepLR(sgd, 1, 1), optim.NewStepLR(other, 1, 1)}, []int{2})
		}},
		{"Sequential twice", "twice", func() {
			a := optim.NewStepLR(sgd, 1, 1)
			optim.NewSequentialLR(sgd, []optim.Scheduler{a, a}, []int{2})
		}},
		{"a group added after the schedule", "parameter groups", func() {
			o := optim.NewSGD(ps())
			s := optim.NewStepLR(o, 1, 0.5)
			o.AddParamGroup(ps())
			s.Step()
		}},
	} {
		err := tensor.Catch(c.f)
		if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrArgument naming %q", c.name, err, c.want)
		}
	}

	o := optim.NewAdam(ps(), optim.LR(0.1))
	s := optim.NewOneCycleLR(o, 0.1, 2)
	s.Step()
	s.Step()
	before := s.State()
	if err := tensor.Catch(s.Step); !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "total steps is 2") {
		t.Errorf("stepping past the total: %v", err)
	}
	if after := s.State(); after.LastEpoch != before.LastEpoch || after.StepCount != before.StepCount {
		t.Errorf("a refused step moved the schedule from %+v to %+v", before, after)
	}
	cos := optim.NewCosineAnnealingLR(o, 5, 0)
	for name, st := range map[string]optim.ScheduleState{
		"another kind":    s.State(),
		"two groups":      {Kind: "CosineAnnealingLR", BaseLRs: []float64{1, 2}, LastLR: []float64{1, 2}},
		"a negative rate": {Kind: "CosineAnnealingLR", BaseLRs: []float64{-1}, LastLR: []float64{1}},
	} {
		if err := cos.LoadState(st); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("LoadState with %s: %v", name, err)
		}
	}
	seq := optim.NewSequentialLR(o, []optim.Scheduler{optim.NewLinearLR(o, 0.5, 1, 2), optim.NewStepLR(o, 2, 0.5)}, []int{2})
	bad := seq.State()
	bad.Schedules[1].LastLR = nil
	if err := seq.LoadState(bad); !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "schedule 1") {
		t.Errorf("SequentialLR.LoadState with a bad inner state: %v", err)
	}
}
