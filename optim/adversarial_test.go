package optim_test

import (
	"fmt"
	"math"
	"testing"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

type T = tensor.Tensor

// TestAdversarialArguments calls every exported function and method of
// package optim (checked against go/doc, so a new export without a case
// fails) with adversarial arguments: nil, released, empty, non-float and
// GPU parameters and gradients, NaN, ±Inf and negative hyper-parameters,
// nil options, optimizers and schedules, and corrupt state. Each call
// must return (a returned error counts as a result) or panic with a
// *tensor.Error, within a time limit.
func TestAdversarialArguments(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	A.Run(t, ".", gpu, ok, optimCases())
}

// params returns adversarial parameter lists, each parameter with a
// gradient of its own shape where it can have one.
func params() map[string][]*T {
	out := map[string][]*T{"nil": nil, "empty": {}, "nil element": {nil}}
	for _, a := range A.Tensors() {
		p := a.T
		tensor.Catch(func() { p.SetRequiresGrad(true); p.SetGrad(tensor.OnesLike(p)) })
		out[a.Name] = []*T{p}
	}
	g := tensor.Ones([]int{2, 3}).SetRequiresGrad(true)
	g.SetGrad(tensor.Full([]int{2, 3}, math.NaN()))
	out["nan grad"] = []*T{g}
	dup := tensor.Ones([]int{2}).SetRequiresGrad(true)
	out["duplicate"] = []*T{dup, dup}
	return out
}

// options are adversarial option lists.
var options = map[string][]optim.Option{
	"none": nil, "nil": {nil}, "LR(NaN)": {optim.LR(math.NaN())}, "LR(+Inf)": {optim.LR(math.Inf(1))}, "LR(-1)": {optim.LR(-1)},
	"Momentum(NaN)": {optim.Momentum(math.NaN())}, "Momentum(2)": {optim.Momentum(2)}, "Dampening(-1)": {optim.Dampening(-1)},
	"WeightDecay(NaN)": {optim.WeightDecay(math.NaN())}, "WeightDecay(-Inf)": {optim.WeightDecay(math.Inf(-1))},
	"Betas(1, NaN)": {optim.Betas(1, math.NaN())}, "Betas(-1, 2)": {optim.Betas(-1, 2)}, "Eps(0)": {optim.Eps(0)}, "Eps(NaN)": {optim.Eps(math.NaN())},
	"Alpha(-1)": {optim.Alpha(-1)}, "Alpha(Inf)": {optim.Alpha(math.Inf(1))}, "LRDecay(NaN)": {optim.LRDecay(math.NaN())},
	"InitialAccumulator(-1)": {optim.InitialAccumulator(-1)}, "Nesterov()": {optim.Nesterov()}, "Nesterov(true, false)": {optim.Nesterov(true, false)},
	"AMSGrad(true)": {optim.AMSGrad(true)}, "Centered(true)": {optim.Centered(true)}, "Maximize()": {optim.Maximize()},
	"Nesterov, momentum": {optim.Nesterov(), optim.Momentum(0.9)},
}

var constructors = map[string]func([]*T, ...optim.Option) optim.Optimizer{
	"SGD":     func(p []*T, o ...optim.Option) optim.Optimizer { return optim.NewSGD(p, o...) },
	"Adam":    func(p []*T, o ...optim.Option) optim.Optimizer { return optim.NewAdam(p, o...) },
	"AdamW":   func(p []*T, o ...optim.Option) optim.Optimizer { return optim.NewAdamW(p, o...) },
	"RMSProp": func(p []*T, o ...optim.Option) optim.Optimizer { return optim.NewRMSProp(p, o...) },
	"Adagrad": func(p []*T, o ...optim.Option) optim.Optimizer { return optim.NewAdagrad(p, o...) },
}

// build calls f with the optimizer named kind over each adversarial
// parameter list and option list, after a Step.
func build(kind string, f func(o optim.Optimizer)) func(A.Try) {
	return func(try A.Try) {
		for pn := range params() {
			try("params "+pn, func() { o := constructors[kind](params()[pn]); o.Step(); f(o) })
		}
		for on, opts := range options {
			try("options "+on, func() { o := constructors[kind](params()["[2 3]"], opts...); o.Step(); f(o) })
		}
	}
}

// state calls f with kind's optimizer, adversarial state tensors and a
// corrupt State.
func state(kind string) func(A.Try) {
	return func(try A.Try) {
		p := params()["[2 3]"]
		o := constructors[kind](p)
		o.Step()
		tensors, st := o.StateDict()
		bad := map[string]map[string]*T{"nil map": nil, "empty": {}, "extra": {"state.9.x": tensor.Ones([]int{1})}}
		for _, a := range A.Tensors() {
			m := map[string]*T{}
			for k := range tensors {
				m[k] = a.T
			}
			bad["all "+a.Name] = m
		}
		for name, m := range bad {
			try(name, func() { _ = constructors[kind](p).LoadStateDict(m, st) })
		}
		for name, s := range map[string]optim.State{"zero": {}, "other kind": {Optimizer: "Lion", Groups: st.Groups, Steps: st.Steps},
			"negative steps": {Optimizer: st.Optimizer, Groups: st.Groups, Steps: []int{-5}}, "no groups": {Optimizer: st.Optimizer, Steps: st.Steps}} {
			try(name, func() { _ = constructors[kind](p).LoadStateDict(tensors, s) })
		}
	}
}

func optimizerCases(kind string) []A.Case {
	return []A.Case{
		A.C(kind+".AddParamGroup", build(kind, func(o optim.Optimizer) {
			for _, ps := range params() {
				tensor.Catch(func() { o.AddParamGroup(ps, optim.LR(math.NaN()), nil) })
			}
		})),
		A.C(kind+".Groups", build(kind, func(o optim.Optimizer) { o.Groups()[0].LR = math.NaN(); o.Step() })),
		A.C(kind+".LoadStateDict", state(kind)),
		A.C(kind+".Params", build(kind, func(o optim.Optimizer) { o.(interface{ Params() []*T }).Params() })),
		A.C(kind+".StateDict", build(kind, func(o optim.Optimizer) { o.StateDict() })),
		A.C(kind+".Step", build(kind, func(o optim.Optimizer) { o.Step(); o.Step() })),
		A.C(kind+".ZeroGrad", build(kind, func(o optim.Optimizer) { o.ZeroGrad(); o.Step() })),
	}
}

var schedules = map[string]func(o optim.Optimizer, f float64, n int) optim.Scheduler{
	"CosineAnnealingLR": func(o optim.Optimizer, f float64, n int) optim.Scheduler { return optim.NewCosineAnnealingLR(o, n, f) },
	"LinearLR":          func(o optim.Optimizer, f float64, n int) optim.Scheduler { return optim.NewLinearLR(o, f, 1, n) },
	"OneCycleLR":        func(o optim.Optimizer, f float64, n int) optim.Scheduler { return optim.NewOneCycleLR(o, f, n) },
	"StepLR":            func(o optim.Optimizer, f float64, n int) optim.Scheduler { return optim.NewStepLR(o, n, f) },
	"SequentialLR": func(o optim.Optimizer, f float64, n int) optim.Scheduler {
		return optim.NewSequentialLR(o, []optim.Scheduler{optim.NewStepLR(o, 2, f), optim.NewLinearLR(o, 0.5, 1, 2)}, []int{n})
	},
}

// sched calls f with the schedule named kind built with adversarial
// arguments over an SGD (and over a nil optimizer), after a Step.
func sched(kind string, f func(s optim.Scheduler)) func(A.Try) {
	return func(try A.Try) {
		newOpt := func() optim.Optimizer { return optim.NewSGD(params()["[2 3]"], optim.LR(0.1), optim.Momentum(0.9)) }
		try("nil optimizer", func() { f(schedules[kind](nil, 0.5, 3)) })
		for _, v := range A.Floats {
			try(fmt.Sprint("float ", v), func() { s := schedules[kind](newOpt(), v, 3); s.Step(); f(s) })
		}
		for _, n := range A.Ints {
			try(fmt.Sprint("int ", n), func() { s := schedules[kind](newOpt(), 0.5, n); s.Step(); f(s) })
		}
	}
}

func schedCases(kind string) []A.Case {
	return []A.Case{
		A.C(kind+".LastLR", sched(kind, func(s optim.Scheduler) { s.LastLR() })),
		A.C(kind+".LoadState", sched(kind, func(s optim.Scheduler) {
			st := s.State()
			for _, bad := range []optim.ScheduleState{{}, {Kind: st.Kind, LastEpoch: -9}, {Kind: st.Kind, LastEpoch: math.MaxInt, LastLR: []float64{math.NaN()}},
				{Kind: st.Kind, BaseLRs: []float64{1, 2, 3}, LastLR: st.LastLR}, {Kind: st.Kind, LastEpoch: st.LastEpoch, LastLR: st.LastLR, Schedules: []optim.ScheduleState{{}}}} {
				_ = s.LoadState(bad)
				tensor.Catch(s.Step)
			}
		})),
		A.C(kind+".State", sched(kind, func(s optim.Scheduler) { s.State() })),
		A.C(kind+".Step", sched(kind, func(s optim.Scheduler) {
			for range 5 {
				s.Step()
			}
		})),
	}
}

func optimCases() []A.Case {
	var cases []A.Case
	for kind := range constructors {
		if kind != "AdamW" {
			cases = append(cases, optimizerCases(kind)...)
		}
	}
	for kind := range schedules {
		cases = append(cases, schedCases(kind)...)
	}
	cycle := func(opts ...optim.OneCycleOption) func(A.Try) {
		return A.One(func() {
			s := optim.NewOneCycleLR(optim.NewSGD(params()["[2 3]"], optim.Momentum(0.9)), 0.1, 4, opts...)
			s.Step()
		})
	}
	newOpt := func(kind string) func(A.Try) {
		return func(try A.Try) {
			for pn, ps := range params() {
				try(pn, func() { constructors[kind](ps) })
			}
			for on, o := range options {
				try(on, func() { constructors[kind](params()["[2 3]"], o...).Step() })
			}
		}
	}
	return append(cases,
		A.C("NewSGD", newOpt("SGD")), A.C("NewAdam", newOpt("Adam")), A.C("NewAdamW", newOpt("AdamW")),
		A.C("NewRMSProp", newOpt("RMSProp")), A.C("NewAdagrad", newOpt("Adagrad")),
		A.C("NewCosineAnnealingLR", sched("CosineAnnealingLR", func(optim.Scheduler) {})),
		A.C("NewLinearLR", sched("LinearLR", func(optim.Scheduler) {})),
		A.C("NewOneCycleLR", sched("OneCycleLR", func(optim.Scheduler) {})),
		A.C("NewStepLR", sched("StepLR", func(optim.Scheduler) {})),
		A.C("NewSequentialLR", A.One(func() { optim.NewSequentialLR(optim.NewSGD(params()["[2 3]"]), nil, nil) })),
		A.C("NewSequentialLR", A.One(func() { optim.NewSequentialLR(optim.NewSGD(params()["[2 3]"]), []optim.Scheduler{nil}, []int{}) })),
		A.C("Group.Params", A.One(func() { var g *optim.Group; g.Params() })),
		A.C("AMSGrad", A.One(func() { optim.NewAdam(params()["[2 3]"], optim.AMSGrad(true, false, true)).Step() })),
		A.C("Alpha", A.One(func() { optim.NewRMSProp(params()["[2 3]"], optim.Alpha(math.NaN())).Step() })),
		A.C("Betas", A.One(func() { optim.NewAdam(params()["[2 3]"], optim.Betas(math.Inf(1), 0)).Step() })),
		A.C("Centered", A.One(func() { optim.NewSGD(params()["[2 3]"], optim.Centered()).Step() })),
		A.C("Dampening", A.One(func() { optim.NewSGD(params()["[2 3]"], optim.Dampening(math.NaN())).Step() })),
		A.C("Eps", A.One(func() { optim.NewAdagrad(params()["[2 3]"], optim.Eps(-1)).Step() })),
		A.C("InitialAccumulator", A.One(func() { optim.NewAdagrad(params()["[2 3]"], optim.InitialAccumulator(math.Inf(1))).Step() })),
		A.C("LR", A.One(func() { optim.NewSGD(params()["[2 3]"], optim.LR(math.Inf(-1))).Step() })),
		A.C("LRDecay", A.One(func() { optim.NewAdagrad(params()["[2 3]"], optim.LRDecay(-1)).Step() })),
		A.C("Maximize", A.One(func() { optim.NewAdam(params()["[2 3]"], optim.Maximize(true, true)).Step() })),
		A.C("Momentum", A.One(func() { optim.NewSGD(params()["[2 3]"], optim.Momentum(math.Inf(1))).Step() })),
		A.C("Nesterov", A.One(func() { optim.NewSGD(params()["[2 3]"], optim.Nesterov()).Step() })),
		A.C("WeightDecay", A.One(func() { optim.NewAdam(params()["[2 3]"], optim.WeightDecay(-1)).Step() })),
		A.C("AnnealLinear", cycle(optim.AnnealLinear(), nil)),
		A.C("DivFactors", cycle(optim.DivFactors(0, math.NaN()))),
		A.C("GroupMaxLR", cycle(optim.GroupMaxLR())),
		A.C("GroupMaxLR", cycle(optim.GroupMaxLR(math.Inf(1)))),
		A.C("MomentumRange", cycle(optim.MomentumRange(2, -1))),
		A.C("NoCycleMomentum", A.One(func() {
			optim.NewOneCycleLR(optim.NewAdagrad(params()["[2 3]"]), 0.1, 3, optim.NoCycleMomentum()).Step()
		})),
		A.C("PctStart", cycle(optim.PctStart(math.NaN()))),
		A.C("ThreePhase", cycle(optim.ThreePhase(), optim.PctStart(0.9))),
	)
}
