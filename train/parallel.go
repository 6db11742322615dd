package train

import (
	"fmt"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/distributed"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// Data-parallel training. Under `mpirun -np N` every rank runs the same
// program with the same flags: -batch is each rank's, so a step trains
// on N·batch examples. The loop wraps the task's model in a ddp.Replica
// (which broadcasts rank 0's parameters), the task draws its rank's part
// of each global batch (Run.Shard, PyTorch's DistributedSampler dealing)
// and calls Run.Backward, which leaves every rank the mean gradient, so
// the replicas stay bitwise equal and N ranks train as one process with
// batch N·batch. The value of each step is the ranks' mean. Rank 0 alone
// prints, saves checkpoints and draws the curves.

// FollowerError is the error of a rank other than 0 that every rank
// meets alike (a bad flag, a world the flags cannot serve): rank 0
// reports it, so the command prints nothing for it and exits with the
// status Err calls for.
type FollowerError struct {
	Rank int
	Err  error
}

func (e *FollowerError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }

func (e *FollowerError) Unwrap() error { return e.Err }

// Shard returns this rank's part of each epoch, for data.Config.Shard:
// rank Rank of World (the whole epoch in a world of one).
func (r *Run) Shard() data.Shard { return data.Shard{Rank: r.Rank, World: r.World} }

// Backward runs the backward pass of loss, the mean loss of this rank's
// part of the batch, and leaves in every parameter's Grad the mean over
// the ranks (ddp.Replica.Backward; autograd.Backward in a world of one).
// A collective that fails stops the run after the step with its error.
func (r *Run) Backward(loss *tensor.Tensor) {
	if r.replica == nil {
		autograd.Backward(loss)
		return
	}
	if err := r.replica.Backward(loss); err != nil && r.err == nil {
		r.err = err
	}
}

// SupervisedStep is the package's SupervisedStep with Run.Backward,
// under a Scope of the rank's context: one optimizer step on the rank's
// next batch of l, data-parallel. l must hand its batches to the rank's
// context (data.Config.Context).
func (r *Run) SupervisedStep(l *data.Loader, opt optim.Optimizer, sched optim.Scheduler, loss func(b *data.Batch) *tensor.Tensor) float64 {
	return supervisedStep(r.context(), l, opt, sched, loss, r.Backward)
}

// join returns the world of the run: o.Group, or distributed.Init's
// group (a world of one without mpirun), and the function that closes
// what join opened.
func join(o Options) (ddp.Group, func() error, error) {
	if o.Group != nil {
		return o.Group, func() error { return nil }, nil
	}
	g, err := distributed.Init()
	if err != nil {
		return nil, nil, err
	}
	return ddp.MPI(g), g.Close, nil
}

// parallel wraps the task's model in a ddp.Replica for a world of more
// than one, after checking that the data can serve the world.
func parallel(p *Program, run *Run, task Task, g ddp.Group) error {
	if run.World == 1 {
		return nil
	}
	s := task.State()
	if s.Loader != nil {
		if n := s.Loader.State().Examples; run.World > n {
			if run.local {
				return usagef("-device lists %d devices, one per rank, but the training set has %d examples: list at most %d", run.World, n, n)
			}
			return usagef("%d ranks but the training set has %d examples: launch at most %d", run.World, n, n)
		}
	}
	if s.Model == nil {
		return fmt.Errorf("%s: no model to train data-parallel", p.Name)
	}
	rep, err := ddp.New(s.Model, g, ddp.Options{})
	if err != nil {
		return err
	}
	run.replica = rep
	return nil
}

// Reasons to stop, agreed by the ranks (the largest wins).
const (
	goOn = iota
	outOfTime
	interrupted
)

// agree returns the largest of the ranks' reasons to stop, so that every
// rank stops after the same step.
func (l *loop) agree(reason int) (int, error) {
	if l.group == nil || l.group.Size() == 1 {
		return reason, nil
	}
	v, err := l.reduce([]float64{float64(reason)}, ddp.ReduceMax)
	if err != nil {
		return 0, err
	}
	return int(v[0]), nil
}

// mean returns the ranks' mean of v: with equal parts of the batch on
// every rank, the value one process with their union batch would have.
func (l *loop) mean(v float64) (float64, error) {
	if l.group == nil || l.group.Size() == 1 {
		return v, nil
	}
	s, err := l.reduce([]float64{v}, ddp.ReduceSum)
	if err != nil {
		return 0, err
	}
	return s[0] / float64(l.group.Size()), nil
}

// reduce all-reduces vs across the ranks by op.
func (l *loop) reduce(vs []float64, op ddp.ReduceOp) ([]float64, error) {
	t := tensor.From(vs, []int{len(vs)}, tensor.In(l.run.context()))
	defer t.Release()
	if err := l.group.AllReduce(t, op).Wait(); err != nil {
		return nil, err
	}
	return t.Float64s(), nil
}

// Metadata key of the world size a checkpoint was saved at.
const metaWorld = "world"

// rescale returns the loader state st, saved by rank 0 of a world of
// from ranks, for a rank of a world of to: the same place, that is the
// same epoch and the same number of its examples handed out to the
// world (Position·from, in the epoch's order), which to ranks share
// evenly only when to divides it. The end of an epoch is the end at any
// world size.
func rescale(st data.State, from, to int) (data.State, error) {
	if from == to {
		return st, nil
	}
	old, now := data.Shard{World: from}, data.Shard{World: to}
	if st.Position == old.Len(st.Examples) {
		st.Position = now.Len(st.Examples)
		return st, nil
	}
	g := st.Position * from
	if g%to != 0 {
		return st, usagef("-resume: the checkpoint was saved by %d ranks after %d examples of epoch %d, which %d ranks cannot share evenly; resume with a number of ranks that divides %d",
			from, g, st.Epoch, to, g)
	}
	st.Position = g / to
	return st, nil
}
