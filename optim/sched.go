package optim

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/tessera-ml/tessera/tensor"
)

// A Scheduler sets the learning rates of an optimizer's parameter
// groups as it steps, as torch.optim.lr_scheduler's schedules do: each
// group's rate starts from the rate it had when the first schedule was
// made (PyTorch's initial_lr), the constructor takes the first step (so
// the optimizer starts at the schedule's first rate), and Step, called
// after each optimizer Step (or epoch), takes the next.
type Scheduler interface {
	// Step advances the schedule and sets every group's learning rate.
	Step()
	// LastLR returns the learning rates Step (or the constructor) last
	// set, one per group, as get_last_lr().
	LastLR() []float64
	// State returns the schedule's progress, for a checkpoint.
	State() ScheduleState
	// LoadState restores the progress State returned into a schedule
	// built with the same arguments over the same optimizer.
	LoadState(st ScheduleState) error
}

// ScheduleState is a schedule's progress, PyTorch's scheduler
// state_dict without the constructor's arguments (build the same
// schedule, then LoadState): the epoch, the steps taken, each group's
// base and last learning rates, and the states of a SequentialLR's
// schedules. It encodes to JSON exactly (for checkpoint.SetMeta with
// checkpoint.MetaSchedule).
type ScheduleState struct {
	Kind      string          `json:"kind"`
	LastEpoch int             `json:"last_epoch"`
	StepCount int             `json:"step_count,omitempty"`
	BaseLRs   []float64       `json:"base_lrs,omitempty"`
	LastLR    []float64       `json:"last_lr"`
	Schedules []ScheduleState `json:"schedules,omitempty"`
}

// sched is what the schedules share: PyTorch's _LRScheduler.
type sched struct {
	kind      string
	opt       Optimizer
	baseLRs   []float64
	lastEpoch int
	stepCount int
	lastLR    []float64
	// get computes the next rates from the groups (get_lr, the chainable
	// form); closed, when not nil, from the epoch alone
	// (_get_closed_form_lr), which SequentialLR uses at a milestone.
	get, closed func(groups []*Group) []float64
	// limit, when positive, is the largest epoch the schedule has.
	limit int
}

// init records the groups' initial learning rates (set by the first
// schedule made over opt) and takes the first step.
func (s *sched) init(kind string, opt Optimizer, get, closed func([]*Group) []float64) {
	checkOptimizer(kind, opt)
	s.kind, s.opt, s.get, s.closed, s.lastEpoch = kind, opt, get, closed, -1
	for _, g := range opt.Groups() {
		if !g.hasInitialLR {
			g.initialLR, g.hasInitialLR = g.LR, true
		}
		s.baseLRs = append(s.baseLRs, g.initialLR)
	}
	s.initialStep()
}

func (s *sched) initialStep() {
	s.stepCount = 0
	s.Step()
}

// groups returns the optimizer's groups, checking that none was added
// since the schedule was made.
func (s *sched) groups() []*Group {
	gs := s.opt.Groups()
	if len(gs) != len(s.baseLRs) {
		fail(s.kind, "the optimizer has %d parameter groups; the schedule was made for %d", len(gs), len(s.baseLRs))
	}
	return gs
}

// Step advances the schedule by one epoch and sets every group's
// learning rate. It panics with ErrArgument when a group was added
// since the schedule was made, and past a OneCycleLR's total steps.
func (s *sched) Step() {
	gs := s.groups()
	if s.limit > 0 && s.lastEpoch+1 > s.limit {
		fail(s.kind, "tried to step %d times; the specified number of total steps is %d", s.lastEpoch+2, s.limit)
	}
	s.stepCount++
	s.lastEpoch++
	s.set(gs, s.get(gs))
}

// stepTo is PyTorch's step(epoch): it jumps to epoch, with the closed
// form when the schedule has one.
func (s *sched) stepTo(epoch int) {
	gs := s.groups()
	s.stepCount++
	s.lastEpoch = epoch
	if s.closed != nil {
		s.set(gs, s.closed(gs))
	} else {
		s.set(gs, s.get(gs))
	}
}

func (s *sched) set(gs []*Group, lrs []float64) {
	for i, g := range gs {
		g.LR = lrs[i]
	}
	s.lastLR = lrs
}

// LastLR returns the learning rates the schedule last set.
func (s *sched) LastLR() []float64 { return slices.Clone(s.lastLR) }

// State returns the schedule's progress.
func (s *sched) State() ScheduleState {
	return ScheduleState{Kind: s.kind, LastEpoch: s.lastEpoch, StepCount: s.stepCount,
		BaseLRs: slices.Clone(s.baseLRs), LastLR: slices.Clone(s.lastLR)}
}

// LoadState restores st, returning an ErrArgument error, and changing
// nothing, when st is another kind of schedule's, has another number of
// groups, or holds an epoch or a rate out of range.
func (s *sched) LoadState(st ScheduleState) error {
	if msg := s.checkState(st); msg != "" {
		return loadError(s.kind, msg)
	}
	s.restore(st)
	return nil
}

// restore sets the progress from st, which checkState accepted.
func (s *sched) restore(st ScheduleState) {
	s.lastEpoch, s.stepCount = st.LastEpoch, st.StepCount
	s.baseLRs, s.lastLR = slices.Clone(st.BaseLRs), slices.Clone(st.LastLR)
}

func (s *sched) checkState(st ScheduleState) string {
	switch {
	case st.Kind != s.kind:
		return fmt.Sprintf("the state is a %q schedule's, not %s's", st.Kind, s.kind)
	case len(st.BaseLRs) != len(s.baseLRs) || len(st.LastLR) != len(s.baseLRs):
		return fmt.Sprintf("the state has %d base and %d last rates for %d parameter groups", len(st.BaseLRs), len(st.LastLR), len(s.baseLRs))
	case st.LastEpoch < -1 || st.StepCount < 0 || s.limit > 0 && st.LastEpoch > s.limit || len(st.Schedules) > 0:
		return fmt.Sprintf("epoch %d, step count %d or nested schedules out of place", st.LastEpoch, st.StepCount)
	}
	for _, v := range append(slices.Clone(st.BaseLRs), st.LastLR...) {
		if !(v >= 0) || math.IsInf(v, 1) {
			return fmt.Sprintf("invalid learning rate %g", v)
		}
	}
	return ""
}

func loadError(kind, msg string) error {
	return &tensor.Error{Op: "optim." + kind + ".LoadState", Err: tensor.ErrArgument, Detail: "nothing loaded: " + msg}
}

// lrs returns f(i, g) for every group.
func lrs(gs []*Group, f func(i int, g *Group) float64) []float64 {
	out := make([]float64, len(gs))
	for i, g := range gs {
		out[i] = f(i, g)
	}
	return out
}

// checkArg panics with ErrArgument for op unless ok.
func checkArg(op string, ok bool, format string, args ...any) {
	if !ok {
		fail(op, format, args...)
	}
}

// checkOptimizer panics with ErrArgument for op when opt is nil (or a
// nil pointer of an optimizer type).
func checkOptimizer(op string, opt Optimizer) {
	v := reflect.ValueOf(opt)
	checkArg(op, opt != nil && !(v.Kind() == reflect.Pointer && v.IsNil()), "the optimizer is nil")
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// sameOptimizer reports whether a and b are the same optimizer.
func sameOptimizer(a, b Optimizer) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta != nil && ta == tb && ta.Comparable() && a == b
}

// StepLR multiplies each group's learning rate by gamma every stepSize
// epochs, as torch.optim.lr_scheduler.StepLR.
type StepLR struct {
	sched
	stepSize int
	gamma    float64
}

// NewStepLR returns a StepLR over opt with step size stepSize (≥ 1)
// and factor gamma (PyTorch's default is 0.1). It sets the groups'
// learning rates to the first epoch's. It panics with ErrArgument for a
// step size below 1 or a negative or non-finite gamma.
func NewStepLR(opt Optimizer, stepSize int, gamma float64) *StepLR {
	checkArg("StepLR", stepSize >= 1, "step size must be at least 1, got %d", stepSize)
	checkArg("StepLR", gamma >= 0 && finite(gamma), "gamma must be non-negative and finite, got %g", gamma)
	s := &StepLR{stepSize: stepSize, gamma: gamma}
	s.init("StepLR", opt, s.rates, s.closedForm)
	return s
}

func (s *StepLR) rates(gs []*Group) []float64 {
	return lrs(gs, func(_ int, g *Group) float64 {
		if s.lastEpoch == 0 || s.lastEpoch%s.stepSize != 0 {
			return g.LR
		}
		return g.LR * s.gamma
	})
}

func (s *StepLR) closedForm(gs []*Group) []float64 {
	return lrs(gs, func(i int, _ *Group) float64 {
		return s.baseLRs[i] * math.Pow(s.gamma, float64(s.lastEpoch/s.stepSize))
	})
}

// CosineAnnealingLR anneals each group's learning rate from its base
// rate to etaMin along a half cosine over tMax epochs (and back up over
// the next tMax, and so on), as torch.optim.lr_scheduler.CosineAnnealingLR
// in its recursive form, which follows changes made to the rates from
// outside.
type CosineAnnealingLR struct {
	sched
	tMax   int
	etaMin float64
}

// NewCosineAnnealingLR returns a CosineAnnealingLR over opt with period
// tMax (≥ 1) and floor etaMin (PyTorch's default is 0). It panics with
// ErrArgument for tMax below 1 or a negative or non-finite etaMin.
func NewCosineAnnealingLR(opt Optimizer, tMax int, etaMin float64) *CosineAnnealingLR {
	checkArg("CosineAnnealingLR", tMax >= 1, "T_max must be at least 1, got %d", tMax)
	checkArg("CosineAnnealingLR", etaMin >= 0 && finite(etaMin), "eta_min must be non-negative and finite, got %g", etaMin)
	s := &CosineAnnealingLR{tMax: tMax, etaMin: etaMin}
	s.init("CosineAnnealingLR", opt, s.rates, s.closedForm)
	return s
}

func (s *CosineAnnealingLR) rates(gs []*Group) []float64 {
	e, t, eta := float64(s.lastEpoch), float64(s.tMax), s.etaMin
	return lrs(gs, func(i int, g *Group) float64 {
		switch {
		case s.lastEpoch == 0:
			return g.LR
		case s.stepCount == 1 && s.lastEpoch > 0:
			return eta + (s.baseLRs[i]-eta)*(1+math.Cos(e*math.Pi/t))/2
		case pyMod(s.lastEpoch-1-s.tMax, 2*s.tMax) == 0:
			return g.LR + (s.baseLRs[i]-eta)*(1-math.Cos(math.Pi/t))/2
		}
		return (1+math.Cos(math.Pi*e/t))/(1+math.Cos(math.Pi*(e-1)/t))*(g.LR-eta) + eta
	})
}

func (s *CosineAnnealingLR) closedForm(gs []*Group) []float64 {
	e, t, eta := float64(s.lastEpoch), float64(s.tMax), s.etaMin
	return lrs(gs, func(i int, _ *Group) float64 {
		return eta + (s.baseLRs[i]-eta)*(1+math.Cos(math.Pi*e/t))/2
	})
}

// pyMod is Python's a % b for b > 0: never negative.
func pyMod(a, b int) int { return ((a % b) + b) % b }

// LinearLR multiplies each group's base learning rate by a factor that
// moves linearly from start to end over totalIters epochs,
// then stays, as torch.optim.lr_scheduler.LinearLR: a warm-up from a
// small start factor to 1, or a linear decay.
type LinearLR struct {
	sched
	start, end float64
	total      int
}

// NewLinearLR returns a LinearLR over opt (PyTorch's defaults are
// start 1/3, end 1, totalIters 5). It panics with ErrArgument unless
// 0 < start ≤ 1, 0 ≤ end ≤ 1 and totalIters ≥ 1 (PyTorch 1.13 accepts a
// start factor of 0, then divides by zero at the first step).
func NewLinearLR(opt Optimizer, start, end float64, totalIters int) *LinearLR {
	checkArg("LinearLR", start > 0 && start <= 1, "the start factor must be in (0, 1], got %g", start)
	checkArg("LinearLR", end >= 0 && end <= 1, "the end factor must be in [0, 1], got %g", end)
	checkArg("LinearLR", totalIters >= 1, "total iterations must be at least 1, got %d", totalIters)
	s := &LinearLR{start: start, end: end, total: totalIters}
	s.init("LinearLR", opt, s.rates, s.closedForm)
	return s
}

func (s *LinearLR) rates(gs []*Group) []float64 {
	return lrs(gs, func(_ int, g *Group) float64 {
		switch {
		case s.lastEpoch == 0:
			return g.LR * s.start
		case s.lastEpoch > s.total:
			return g.LR
		}
		return g.LR * (1 + (s.end-s.start)/(float64(s.total)*s.start+float64(s.lastEpoch-1)*(s.end-s.start)))
	})
}

func (s *LinearLR) closedForm(gs []*Group) []float64 {
	return lrs(gs, func(i int, _ *Group) float64 {
		return s.baseLRs[i] * (s.start + (s.end-s.start)*float64(min(s.total, s.lastEpoch))/float64(s.total))
	})
}
