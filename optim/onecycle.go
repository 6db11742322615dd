package optim

import "math"

// OneCycleLR is torch.optim.lr_scheduler.OneCycleLR: the 1cycle policy.
// Each group's learning rate rises from max_lr/div_factor to max_lr over
// the first pct_start of the total steps, then falls to
// max_lr/(div_factor·final_div_factor) (three phases: back to the start,
// then down), annealed along a cosine or a line, while the momentum (SGD
// and RMSProp's Momentum, Adam's Beta1) cycles the other way between
// max_momentum and base_momentum. It replaces each group's initial rate
// (PyTorch's initial_lr) with max_lr/div_factor, and Step panics past
// the total number of steps.
type OneCycleLR struct {
	sched
	cfg            oneCycle
	maxLRs, minLRs []float64
	phases         []phase
	beta1          bool // cycle Beta1 rather than Momentum
}

// phase is one phase of the cycle: its last step, and which values the
// learning rate and momentum move between.
type phase struct {
	end              float64
	startLR, endLR   int // 0: initial, 1: max, 2: min
	startMom, endMom int // 0: max momentum, 1: base momentum
}

type oneCycle struct {
	pctStart, divFactor, finalDiv float64
	baseMom, maxMom               float64
	linear, threePhase, noMom     bool
	groupMaxLR                    []float64
}

// A OneCycleOption changes an argument of NewOneCycleLR from PyTorch's
// default.
type OneCycleOption func(*oneCycle)

// PctStart sets the fraction of the steps spent raising the learning
// rate (default 0.3), in [0, 1].
func PctStart(p float64) OneCycleOption { return func(c *oneCycle) { c.pctStart = p } }

// AnnealLinear anneals along lines instead of cosines
// (anneal_strategy="linear").
func AnnealLinear() OneCycleOption { return func(c *oneCycle) { c.linear = true } }

// NoCycleMomentum leaves the momentum alone (cycle_momentum=False).
func NoCycleMomentum() OneCycleOption { return func(c *oneCycle) { c.noMom = true } }

// MomentumRange sets the momentum's bounds (defaults base 0.85, max
// 0.95).
func MomentumRange(base, max float64) OneCycleOption {
	return func(c *oneCycle) { c.baseMom, c.maxMom = base, max }
}

// DivFactors sets div_factor, the ratio of max_lr to the first rate
// (default 25), and final_div_factor, the ratio of the first rate to the
// last (default 1e4).
func DivFactors(div, final float64) OneCycleOption {
	return func(c *oneCycle) { c.divFactor, c.finalDiv = div, final }
}

// ThreePhase uses three phases: up, back down to the first rate, then
// down to the last (three_phase=True).
func ThreePhase() OneCycleOption { return func(c *oneCycle) { c.threePhase = true } }

// GroupMaxLR gives each parameter group its own max_lr (max_lr as a
// list), one per group, instead of NewOneCycleLR's maxLR.
func GroupMaxLR(lrs ...float64) OneCycleOption {
	return func(c *oneCycle) { c.groupMaxLR = append([]float64(nil), lrs...) }
}

// NewOneCycleLR returns a OneCycleLR over opt peaking at maxLR, for
// totalSteps steps (Step may be called totalSteps times), with PyTorch's
// defaults changed by opts. It sets the groups' learning rates (and
// momenta) to the first step's. It panics with ErrArgument for
// totalSteps below 1, a rate, factor or momentum that is negative or not
// finite, a PctStart outside [0, 1], GroupMaxLR of another length than
// the groups, a nil option, and an optimizer without Momentum or Betas
// (Adagrad) unless NoCycleMomentum.
func NewOneCycleLR(opt Optimizer, maxLR float64, totalSteps int, opts ...OneCycleOption) *OneCycleLR {
	const op = "OneCycleLR"
	checkOptimizer(op, opt)
	c := oneCycle{pctStart: 0.3, divFactor: 25, finalDiv: 1e4, baseMom: 0.85, maxMom: 0.95}
	for i, o := range opts {
		checkArg(op, o != nil, "option %d is nil", i)
		o(&c)
	}
	groups := opt.Groups()
	maxLRs := c.groupMaxLR
	if maxLRs == nil {
		maxLRs = make([]float64, len(groups))
		for i := range maxLRs {
			maxLRs[i] = maxLR
		}
	}
	checkArg(op, len(maxLRs) == len(groups), "expected %d values for max_lr, got %d", len(groups), len(maxLRs))
	checkArg(op, totalSteps >= 1, "expected a positive number of total steps, got %d", totalSteps)
	checkArg(op, c.pctStart >= 0 && c.pctStart <= 1, "expected pct_start between 0 and 1, got %g", c.pctStart)
	for _, v := range append(maxLRs, c.divFactor, c.finalDiv, c.baseMom, c.maxMom) {
		checkArg(op, v >= 0 && finite(v), "rates, factors and momenta must be non-negative and finite, got %g", v)
	}
	checkArg(op, c.divFactor > 0 && c.finalDiv > 0, "division factors must be positive, got %g and %g", c.divFactor, c.finalDiv)
	s := &OneCycleLR{cfg: c, maxLRs: maxLRs}
	s.limit = totalSteps
	n := float64(totalSteps)
	if c.threePhase {
		s.phases = []phase{{end: c.pctStart*n - 1, startLR: 0, endLR: 1, startMom: 0, endMom: 1},
			{end: 2*c.pctStart*n - 2, startLR: 1, endLR: 0, startMom: 1, endMom: 0},
			{end: n - 1, startLR: 0, endLR: 2, startMom: 0, endMom: 0}}
	} else {
		s.phases = []phase{{end: c.pctStart*n - 1, startLR: 0, endLR: 1, startMom: 0, endMom: 1},
			{end: n - 1, startLR: 1, endLR: 2, startMom: 1, endMom: 0}}
	}
	if !c.noMom {
		b, ok := opt.(interface{ accepts(string) bool })
		checkArg(op, ok && (b.accepts("Betas") || b.accepts("Momentum")), "optimizer %T must support momentum or betas with momentum cycling", opt)
		s.beta1 = b.accepts("Betas")
	}
	for i, g := range groups {
		g.initialLR, g.hasInitialLR = maxLRs[i]/c.divFactor, true
		s.minLRs = append(s.minLRs, g.initialLR/c.finalDiv)
		s.setMomentum(g, c.maxMom)
	}
	s.init(op, opt, s.rates, nil)
	return s
}

func (s *OneCycleLR) setMomentum(g *Group, m float64) {
	switch {
	case s.cfg.noMom:
	case s.beta1:
		g.Beta1 = m
	default:
		g.Momentum = m
	}
}

func (s *OneCycleLR) anneal(start, end, pct float64) float64 {
	if s.cfg.linear {
		return (end-start)*pct + start
	}
	return end + (start-end)/2.0*(math.Cos(math.Pi*pct)+1)
}

func (s *OneCycleLR) rates(gs []*Group) []float64 {
	step := float64(s.lastEpoch)
	moms := [2]float64{s.cfg.maxMom, s.cfg.baseMom}
	return lrs(gs, func(i int, g *Group) float64 {
		vals := [3]float64{g.initialLR, s.maxLRs[i], s.minLRs[i]}
		start, k := 0.0, 0
		for k < len(s.phases)-1 && step > s.phases[k].end {
			start = s.phases[k].end
			k++
		}
		ph := s.phases[k]
		pct := (step - start) / (ph.end - start)
		s.setMomentum(g, s.anneal(moms[ph.startMom], moms[ph.endMom], pct))
		return s.anneal(vals[ph.startLR], vals[ph.endLR], pct)
	})
}
