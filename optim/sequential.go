package optim

import (
	"fmt"
	"slices"
	"sort"
)

// SequentialLR runs schedules one after another, switching at the
// milestones (epochs), as torch.optim.lr_scheduler.SequentialLR: the
// first schedule runs until the first milestone, where the second
// restarts from its first epoch, and so on. A warm-up then a cosine
// decay, as a GPT is trained:
//
//	warm := optim.NewLinearLR(opt, 0.01, 1, 100)
//	cos := optim.NewCosineAnnealingLR(opt, steps-100, 0)
//	sched := optim.NewSequentialLR(opt, []optim.Scheduler{warm, cos}, []int{100})
type SequentialLR struct {
	opt        Optimizer
	schedules  []*sched
	milestones []int
	lastEpoch  int
	lastLR     []float64
}

// scheduled is implemented by this package's schedules.
type scheduled interface{ inner() *sched }

func (s *sched) inner() *sched { return s }

// NewSequentialLR returns a SequentialLR of schedules, all made over
// opt (after it, so each has already taken its first step, which this
// undoes), switching at milestones, one fewer than schedules and
// increasing from 1. It resets the groups' learning rates and takes the
// first schedule's first step again. It panics with ErrArgument for no
// schedules, a schedule of another optimizer or given twice, one not of
// this package, and milestones of the wrong number or order.
func NewSequentialLR(opt Optimizer, schedules []Scheduler, milestones []int) *SequentialLR {
	const op = "SequentialLR"
	checkOptimizer(op, opt)
	checkArg(op, len(schedules) >= 1, "needs at least one schedule")
	checkArg(op, len(milestones) == len(schedules)-1,
		"expects one milestone fewer than schedules, got %d schedules and %d milestones", len(schedules), len(milestones))
	for i, m := range milestones {
		checkArg(op, m >= 1 && (i == 0 || m > milestones[i-1]), "milestones must increase from 1, got %v", milestones)
	}
	s := &SequentialLR{opt: opt, milestones: slices.Clone(milestones)}
	for i, sc := range schedules {
		b, ok := sc.(scheduled)
		checkArg(op, ok, "schedule %d (%T) is not one of package optim's", i, sc)
		in := b.inner()
		checkArg(op, sameOptimizer(in.opt, opt), "schedule %d belongs to another optimizer", i)
		checkArg(op, !slices.Contains(s.schedules, in), "schedule %d is given twice", i)
		s.schedules = append(s.schedules, in)
	}
	groups := s.schedules[0].groups()
	for _, g := range groups {
		g.LR = g.initialLR
	}
	for _, sc := range s.schedules {
		sc.lastEpoch--
	}
	s.schedules[0].initialStep()
	s.lastLR = s.schedules[0].LastLR()
	return s
}

// Step advances the current schedule, or starts the next one at a
// milestone, and sets every group's learning rate.
func (s *SequentialLR) Step() {
	s.lastEpoch++
	idx := sort.Search(len(s.milestones), func(i int) bool { return s.milestones[i] > s.lastEpoch })
	sc := s.schedules[idx]
	if idx > 0 && s.milestones[idx-1] == s.lastEpoch {
		sc.stepTo(0)
	} else {
		sc.Step()
	}
	s.lastLR = sc.LastLR()
}

// LastLR returns the learning rates Step last set.
func (s *SequentialLR) LastLR() []float64 { return slices.Clone(s.lastLR) }

// State returns the epoch, the last rates and every schedule's state.
func (s *SequentialLR) State() ScheduleState {
	st := ScheduleState{Kind: "SequentialLR", LastEpoch: s.lastEpoch, LastLR: slices.Clone(s.lastLR)}
	for _, sc := range s.schedules {
		st.Schedules = append(st.Schedules, sc.State())
	}
	return st
}

// LoadState restores st into the SequentialLR and its schedules, all or
// nothing; it returns an ErrArgument error for a state of another kind
// or with another number of schedules, and as each schedule's LoadState.
func (s *SequentialLR) LoadState(st ScheduleState) error {
	msg := ""
	switch {
	case st.Kind != "SequentialLR":
		msg = fmt.Sprintf("the state is a %q schedule's, not SequentialLR's", st.Kind)
	case len(st.Schedules) != len(s.schedules):
		msg = fmt.Sprintf("the state has %d schedules, the SequentialLR %d", len(st.Schedules), len(s.schedules))
	case st.LastEpoch < 0 || len(st.LastLR) != len(s.lastLR) || st.StepCount != 0 || len(st.BaseLRs) > 0:
		msg = fmt.Sprintf("epoch %d or %d rates for %d groups out of place", st.LastEpoch, len(st.LastLR), len(s.lastLR))
	}
	for i, sc := range s.schedules {
		if msg == "" {
			if m := sc.checkState(st.Schedules[i]); m != "" {
				msg = fmt.Sprintf("schedule %d: %s", i, m)
			}
		}
	}
	if msg != "" {
		return loadError("SequentialLR", msg)
	}
	for i, sc := range s.schedules {
		sc.restore(st.Schedules[i])
	}
	s.lastEpoch, s.lastLR = st.LastEpoch, slices.Clone(st.LastLR)
	return nil
}
