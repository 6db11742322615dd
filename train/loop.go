package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/tensor"
)

// Options configure Main beyond the command line.
type Options struct {
	Stdout io.Writer // progress, messages and the summary; io.Discard if nil
	// Context stops training when done, as Ctrl-C does: the loop saves a
	// checkpoint and returns. Nil means context.Background().
	Context context.Context
	// Signals makes Ctrl-C (SIGINT) and SIGTERM stop training that way.
	Signals bool
	// AfterStep, if set, is called after each step with its number and
	// value (tests interrupt runs with it), by the first rank of this
	// process: its only one, or rank 0 of the ranks -device lists.
	AfterStep func(step int, value float64)
	// Watch, if set, is called after each step, on every rank, with the
	// rank, the step's number, its value (the ranks' mean) and the
	// rank's task (tests compare the ranks' parameters with it). The
	// ranks of one process call it from their goroutines at once.
	Watch func(rank, step int, value float64, t Task)
	// Group is the ranks to train with; nil means distributed.Init's:
	// every process of an mpirun launch, or this one alone. Main closes
	// the group it opens when it returns.
	Group ddp.Group
}

// Result is what a run did.
type Result struct {
	Device      tensor.Device   // rank 0's device
	Devices     []tensor.Device // the devices of this process's ranks, Device alone unless -device lists several
	Steps       int             // the run's last step + 1 (the resumed ones included)
	Values      []float64       // the training curve of the steps this process ran
	First       int             // the step Values[0] belongs to
	Metrics     []Metric        // the last evaluation
	StepsPerSec float64         // training steps per second, evaluation left out
	World       int             // the ranks that trained together (1 alone)
	PeakMemory  int64           // bytes: the largest peak allocation of the GPUs, or the process's peak resident set
	Interrupted bool            // stopped by Ctrl-C or the context
	Saved       string          // the checkpoint last written, if any
}

// Main runs program p with the command-line args (after its name). Bad
// flags are UsageErrors; -h prints the flags and returns flag.ErrHelp.
// Training that diverges (a NaN or infinite training value) stops with
// an error.
//
// Under mpirun every rank runs Main with the same args and trains
// data-parallel (see Run.Shard and Run.Backward); ranks other than 0
// write nothing, and their errors name the rank, or are FollowerErrors
// when every rank meets them alike (a UsageError). With -device naming
// several devices, Main trains one rank per device of this process the
// same way (see local.go) and returns rank 0's Result.
func Main(p *Program, args []string, o Options) (res *Result, err error) {
	out := o.Stdout
	if out == nil {
		out = io.Discard
	}
	g, leave, err := join(o)
	if err != nil {
		return nil, err
	}
	rank, world := g.Rank(), g.Size()
	defer func() {
		if cerr := leave(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil && rank != 0 {
			var u UsageError
			if errors.As(err, &u) {
				err = &FollowerError{Rank: rank, Err: err}
			} else {
				err = fmt.Errorf("rank %d: %w", rank, err)
			}
		}
	}()
	if rank != 0 {
		out = io.Discard
	}
	f, build, err := parse(p, args, out)
	if err != nil {
		return nil, err
	}
	devs, notice, err := f.devices()
	if err != nil {
		return nil, err
	}
	if len(devs) > 1 && world > 1 {
		return nil, usagef("-device %q names %d devices, one per rank of this process, but mpirun started %d ranks already: give each process one device, or run without mpirun", f.Device, len(devs), world)
	}
	if len(devs) > 1 && !p.Parallel {
		return nil, usagef("%s does not train data-parallel: give -device one device", p.Name)
	}
	if world > 1 && !p.Parallel {
		return nil, usagef("%s does not train data-parallel: run it without mpirun, or with -np 1", p.Name)
	}
	fmt.Fprintf(out, "tessera train %s: %s\n", p.Name, notice)
	tensor.ManualSeed(f.Seed)
	for _, d := range devs {
		if d.Kind == tensor.KindGPU {
			if g, err := tensor.GPUDevice(d); err == nil {
				g.ResetPeak()
			}
		}
	}
	if n := max(world, len(devs)); n > 1 {
		fmt.Fprintf(out, "data-parallel over %d ranks: -batch %d each, %d examples a step\n", n, f.Batch, n*f.Batch)
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Signals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	s := &session{p: p, f: f, o: o, ctx: ctx, devs: devs}
	if len(devs) > 1 {
		return s.local(args, out)
	}
	run := &Run{Flags: f, Device: devs[0], Out: out, Rank: rank, World: world, Context: tensor.DefaultContext(), Generator: tensor.DefaultGenerator()}
	return s.train(run, build, g)
}

// A session is what the ranks of one process share: the program, its
// flags, Main's options, the context that stops them, and their devices.
type session struct {
	p    *Program
	f    Flags
	o    Options
	ctx  context.Context
	devs []tensor.Device
}

// train builds run's task with build and trains it as run.Rank of the
// world of g, returning the rank's Result.
func (s *session) train(run *Run, build Builder, g ddp.Group) (*Result, error) {
	p, f, out := s.p, s.f, run.Out
	task, err := build(run)
	if err != nil {
		return nil, err
	}
	defer task.Close()
	total := f.Steps
	if f.Epochs > 0 {
		e, ok := task.(Epochal)
		if !ok {
			return nil, usagef("-epochs: %s has no epochs; give -steps", p.Name)
		}
		total = f.Epochs * e.StepsPerEpoch()
	}
	hist := &History{Curve: curveName(p)}
	start := 0
	if f.Resume != "" {
		if start, err = restore(f.Resume, p.Name, task.State(), hist, run); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "resumed from %s at step %d\n", f.Resume, start)
		if start > total {
			return nil, usagef("-resume %q is at step %d, past the %d steps asked for", f.Resume, start, total)
		}
	}

	if err := parallel(p, run, task, g); err != nil {
		return nil, err
	}

	res := &Result{Device: run.Device, Devices: s.devs, First: start, World: run.World}
	l := &loop{p: p, f: f, task: task, hist: hist, out: out, res: res, lastEval: -1, run: run, group: g, watch: s.o.Watch}
	after := s.o.AfterStep
	if run.Rank != 0 && len(s.devs) > 1 {
		after = nil
	}
	if err := l.loop(s.ctx, start, total, after); err != nil {
		return res, err
	}
	res.PeakMemory = peakMemory(s.devs)
	if res.Interrupted {
		path := f.Checkpoint
		if path == "" {
			path = p.Name + "-interrupted.safetensors"
		}
		if err := l.save(path, res.Steps); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "\ninterrupted at step %d: checkpoint saved to %s (continue with -resume %s)\n", res.Steps, path, path)
		return res, nil
	}
	l.summary()
	if f.Checkpoint != "" {
		if err := l.save(f.Checkpoint, res.Steps); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "checkpoint saved to %s\n", f.Checkpoint)
	}
	if f.Plot != "" && run.Rank == 0 {
		if err := hist.Plot(f.Plot, p.Name); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "curves drawn in %s\n", f.Plot)
	}
	return res, nil
}

func curveName(p *Program) string {
	if p.Defaults.Curve != "" {
		return p.Defaults.Curve
	}
	return "loss"
}

// loop is one run of the step loop.
type loop struct {
	p    *Program
	f    Flags
	task Task
	hist *History
	out  io.Writer
	res  *Result

	lastEval int // the step of the last evaluation

	run   *Run
	group ddp.Group
	watch func(int, int, float64, Task)
}

// loop runs steps start … total-1, evaluating every EvalEvery steps and
// after the last, until ctx is done. The ranks agree before each step
// whether to stop, so that all stop after the same one.
func (l *loop) loop(ctx context.Context, start, total int, after func(int, float64)) error {
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(l.out), progressbar.OptionSetDescription(l.p.Name),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("steps"),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(250*time.Millisecond))
	bar.Set(start)
	var busy time.Duration
	l.res.Steps = start
	began := time.Now()
	for step := start; step < total; step++ {
		reason := goOn
		if ctx.Err() != nil {
			reason = interrupted
		} else if l.f.MaxTime > 0 && time.Since(began) >= l.f.MaxTime {
			reason = outOfTime
		}
		reason, err := l.agree(reason)
		if err != nil {
			fmt.Fprintln(l.out)
			return err
		}
		if reason == interrupted {
			l.res.Interrupted = true
			break
		}
		if reason == outOfTime {
			if step > start && l.lastEval != step-1 {
				l.evaluate(step - 1)
			}
			fmt.Fprintf(l.out, "\n-max-time %v reached after %d steps\n", l.f.MaxTime, step-start)
			break
		}
		t0 := time.Now()
		v := l.task.Step(step)
		if err := l.run.err; err != nil {
			fmt.Fprintln(l.out)
			return err
		}
		if v, err = l.mean(v); err != nil {
			fmt.Fprintln(l.out)
			return err
		}
		busy += time.Since(t0)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			fmt.Fprintln(l.out)
			return fmt.Errorf("training diverged: the %s is %v at step %d (try a smaller -lr than %g)", l.hist.Curve, v, step, l.f.LR)
		}
		l.res.Values = append(l.res.Values, v)
		l.res.Steps = step + 1
		l.hist.addStep(step, v)
		if (l.f.EvalEvery > 0 && (step+1)%l.f.EvalEvery == 0) || step == total-1 {
			l.evaluate(step)
		}
		if n := l.f.CheckpointEvery; n > 0 && (step+1)%n == 0 && step+1 < total { // the last is saved by Main
			if err := l.save(l.f.Checkpoint, step+1); err != nil {
				fmt.Fprintln(l.out)
				return err
			}
		}
		bar.Describe(fmt.Sprintf("%s (%s %.4g)", l.p.Name, l.hist.Curve, v))
		bar.Add(1)
		if after != nil {
			after(step, v)
		}
		if l.watch != nil {
			l.watch(l.run.Rank, step, v, l.task)
		}
	}
	if !l.res.Interrupted {
		bar.Finish()
	}
	fmt.Fprintln(l.out)
	if n := l.res.Steps - start; n > 0 {
		l.res.StepsPerSec = float64(n) / busy.Seconds()
	}
	return nil
}

// A SaveError reports a checkpoint that could not be saved (a full
// disk, a file-size limit, a folder gone). The file at Path is as it
// was, the last checkpoint saved there if any (checkpoint.Save replaces
// it atomically), and saving read the task's state without changing it.
type SaveError struct {
	Path string
	Step int   // the steps the checkpoint was to hold
	Err  error // a *checkpoint.FileError, or SetMeta's error
}

func (e *SaveError) Error() string {
	return fmt.Sprintf("cannot save the checkpoint after step %d, the file is left as it was: %v", e.Step, e.Err)
}

func (e *SaveError) Unwrap() error { return e.Err }

// save writes a checkpoint of the run after steps steps to path, or
// returns a *SaveError; only rank 0 writes.
func (l *loop) save(path string, steps int) error {
	if l.run.Rank != 0 {
		return nil
	}
	if err := save(path, l.p.Name, steps, l.run.World, l.task.State(), l.run.generator(), l.hist); err != nil {
		return &SaveError{Path: path, Step: steps, Err: err}
	}
	l.res.Saved = path
	return nil
}

// evaluate runs the task's evaluation after step and records it.
func (l *loop) evaluate(step int) {
	l.lastEval = step
	l.res.Metrics = l.task.Evaluate()
	l.hist.addEval(step, l.res.Metrics)
}

// summary prints the final metrics, the rate and the peak memory.
func (l *loop) summary() {
	r := l.res
	n := r.Steps - r.First
	on, peak := r.Device.String(), formatBytes(r.PeakMemory)
	if len(r.Devices) > 1 {
		on, peak = deviceList(r.Devices), peak+" (the largest of the devices')"
	}
	fmt.Fprintf(l.out, "%s: %d steps on %s (%d this run), %.2f steps/s, peak memory %s\n", l.p.Name, r.Steps, on, n, r.StepsPerSec, peak)
	if r.World > 1 {
		fmt.Fprintf(l.out, "  data-parallel over %d ranks: %d examples a step, %.1f examples/s in all\n", r.World, r.World*l.f.Batch, r.StepsPerSec*float64(r.World*l.f.Batch))
	}
	if len(r.Values) > 0 {
		fmt.Fprintf(l.out, "  final training %s: %.5g\n", l.hist.Curve, r.Values[len(r.Values)-1])
	}
	for _, m := range r.Metrics {
		fmt.Fprintf(l.out, "  %s: %s\n", m.Name, m.Format())
	}
}

// Format renders the metric's value with its unit.
func (m Metric) Format() string {
	if m.Unit == "%" {
		return fmt.Sprintf("%.2f%%", 100*m.Value)
	}
	return strings.TrimSpace(fmt.Sprintf("%.5g %s", m.Value, m.Unit))
}

// Find returns the metric named name in ms and whether there is one.
func Find(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
