package train

import (
	"flag"
	"io"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// A Program is one `tessera train` subcommand.
type Program struct {
	Name     string   // the subcommand, such as "mnist-mlp"
	Summary  string   // one line for `tessera train --help`
	Defaults Defaults // the common flags' defaults
	// Parallel says the program trains data-parallel, under mpirun or
	// on the devices -device lists: its Builder deals the data by
	// Run.Shard and makes its tensors in the rank's context and
	// generator (Run.TensorOptions), and its Step calls Run.Backward
	// under Run.Scope. Without it a world of more than one is refused.
	Parallel bool
	// Setup registers the program's own flags on fs and returns the
	// function that builds its Task once the flags are parsed.
	Setup func(fs *flag.FlagSet) Builder
}

// A Builder builds a program's Task for a run; an error it returns for a
// bad flag value should be a UsageError.
type Builder func(r *Run) (Task, error)

// Defaults are a program's values for the common flags.
type Defaults struct {
	Steps     int     // training steps, unless Epochs is set
	Epochs    int     // if positive, train this many epochs by default
	Batch     int     // examples per step
	LR        float64 // learning rate
	EvalEvery int     // steps between evaluations (0: only at the end)
	Curve     string  // what Step returns, for the plot and the bar: "loss" if empty
}

// Run is what a Builder sees: the parsed common flags, the device and
// where to write, and the rank's place in a data-parallel world.
type Run struct {
	Flags
	Device tensor.Device
	Out    io.Writer // the program's messages (samples, notes); io.Discard on ranks but 0
	// Rank and World are this rank's number and the number of ranks (0
	// and 1 alone): the processes of an mpirun launch, or the devices
	// -device lists for the ranks of this process; -batch is each rank's.
	Rank, World int
	// Context is the rank's tensor context. The ranks of one process
	// (-device gpu:0,gpu:1) train side by side on goroutines, so a task
	// makes its tensors in it (TensorOptions, data.Config.Context) and
	// opens its Scopes and NoGrads there (Run.Scope, Run.NoGrad), never
	// in the default context, which serves one goroutine at a time. Main
	// sets tensor.DefaultContext() for the only rank of a process; nil
	// means that too.
	Context *tensor.Context
	// Generator is the rank's default random generator, seeded with
	// -seed: tensor.DefaultGenerator() for rank 0 of a process, so that
	// it draws what one process draws, and a generator of its own for
	// the other ranks of the process (ddp.New replaces their initial
	// parameters by rank 0's anyway). A checkpoint saves rank 0's as
	// "default". Nil means tensor.DefaultGenerator().
	Generator *tensor.Generator

	local   bool         // the ranks are this process's, one per device -device lists
	replica *ddp.Replica // nil in a world of one
	err     error        // the first failed collective of Backward
}

// A Task is a program's model, data and optimizer, stepped by the loop.
type Task interface {
	// Step runs training step n (counted from 0 over the whole run,
	// resumed or not) and returns the value of the training curve,
	// usually the step's loss.
	Step(n int) float64
	// Evaluate returns the validation metrics; the first is the
	// program's headline result.
	Evaluate() []Metric
	// State names what a checkpoint saves and restores.
	State() *State
	// Close releases what the task holds (loader goroutines).
	Close()
}

// Epochal is implemented by tasks whose data comes in epochs, so that
// --epochs applies.
type Epochal interface {
	StepsPerEpoch() int
}

// A Metric is one evaluation result.
type Metric struct {
	Name  string  // such as "test accuracy"
	Value float64 // the value
	// Unit formats Value: "%" prints 100·Value with a percent sign;
	// anything else is printed after the value ("nats/char").
	Unit string
	// WithCurve draws the metric on the training curve's axes (a
	// validation loss beside the training loss) rather than on a panel
	// of its own.
	WithCurve bool
}

// State is what a checkpoint of a task holds. Nil fields are left out.
type State struct {
	Model      nn.Module
	Optimizer  optim.Optimizer
	Schedule   optim.Scheduler
	Loader     *data.Loader
	Generators map[string]*tensor.Generator // the default generator is always saved too
	// Tensors are extra tensors (a recurrent state carried between
	// steps), saved under "extra.<name>"; loading replaces *ptr.
	Tensors map[string]**tensor.Tensor
	// Extra is a pointer to a JSON-encodable value of the program's own
	// (a position in a text, a running reward), saved in the metadata.
	Extra any
}

// TensorOptions returns the options that put a tensor of the task on
// the rank's device, in its context, drawing from its generator:
//
//	w := tensor.Normal([]int{n, m}, 0, 0.02, r.TensorOptions()...)
//	layer := nn.NewLinear(n, m, r.TensorOptions()...)
func (r *Run) TensorOptions() []tensor.Option {
	return []tensor.Option{tensor.On(r.Device), tensor.In(r.context()), tensor.WithGenerator(r.generator())}
}

// Scope runs f under a Scope of the rank's context (tensor.Scope for
// the only rank of a process).
func (r *Run) Scope(f func()) { r.context().Scope(f) }

// NoGrad runs f with graph recording off in the rank's context
// (tensor.NoGrad for the only rank of a process).
func (r *Run) NoGrad(f func()) { r.context().NoGrad(f) }

// context returns r.Context, or the default context when it is unset
// (a Run made by hand).
func (r *Run) context() *tensor.Context {
	if r.Context == nil {
		return tensor.DefaultContext()
	}
	return r.Context
}

// generator returns r.Generator, or the default generator when it is
// unset.
func (r *Run) generator() *tensor.Generator {
	if r.Generator == nil {
		return tensor.DefaultGenerator()
	}
	return r.Generator
}
