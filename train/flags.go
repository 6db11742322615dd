package train

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// Flags are the flags every program shares.
type Flags struct {
	Device     string  // cpu, gpu, gpu:N or default (TESSERA_DEVICE, then auto), or a list of devices, one per rank of this process
	Steps      int     // training steps (0 when --epochs sets them)
	Epochs     int     // training epochs (0 when --steps sets them)
	Batch      int     // examples per step (each rank's under mpirun or with a -device list)
	LR         float64 // learning rate
	Seed       uint64  // seed of every random choice
	EvalEvery  int     // steps between evaluations; 0 only at the end
	Checkpoint string  // file to save at the end and on Ctrl-C
	// CheckpointEvery saves the checkpoint every this many steps too
	// (0: only at the end and on Ctrl-C).
	CheckpointEvery int
	Resume          string        // checkpoint to continue from
	Plot            string        // PNG file for the training curves
	MaxTime         time.Duration // stop training after this long (0: no limit)
}

// A UsageError is a mistake in the command line: the command prints it
// as one line and exits with status 2.
type UsageError string

func (e UsageError) Error() string { return string(e) }

func usagef(format string, args ...any) error { return UsageError(fmt.Sprintf(format, args...)) }

// parse parses args for p: the common flags with p's defaults, then p's
// own. It returns the flags, p's Builder, and flag.ErrHelp after
// printing the flags to help for -h.
func parse(p *Program, args []string, help io.Writer) (Flags, Builder, error) {
	d := p.Defaults
	f := Flags{}
	fs := flag.NewFlagSet("train "+p.Name, flag.ContinueOnError)
	fs.StringVar(&f.Device, "device", "default", "cpu, gpu, gpu:N, or default (TESSERA_DEVICE, else a real GPU if any, else the CPU); "+
		"a list such as gpu:0,gpu:1 trains data-parallel, one rank per device of this process, as mpirun's ranks do: "+
		"GPUs of one kind of adapter (TESSERA_LOGICAL_GPUS=2 offers each adapter as two) or the CPU repeated, "+
		"never the CPU with GPUs, whose optimizer steps round differently, so the ranks would drift apart")
	fs.IntVar(&f.Steps, "steps", 0, fmt.Sprintf("training steps (default %s)", defaultLength(d)))
	fs.IntVar(&f.Epochs, "epochs", 0, "training epochs, instead of -steps, for programs with epochs")
	fs.IntVar(&f.Batch, "batch", d.Batch, "examples per step (each rank's, under mpirun or with a -device list)")
	fs.Float64Var(&f.LR, "lr", d.LR, "learning rate, positive")
	fs.Uint64Var(&f.Seed, "seed", 1, "random seed: the same seed gives the same losses on the same device")
	fs.IntVar(&f.EvalEvery, "eval-every", d.EvalEvery, "steps between evaluations (0: only at the end)")
	fs.StringVar(&f.Checkpoint, "checkpoint", "", "save a checkpoint to this file at the end and on Ctrl-C")
	fs.IntVar(&f.CheckpointEvery, "checkpoint-every", 0, "also save the -checkpoint every this many steps, replacing it atomically (0: only at the end)")
	fs.StringVar(&f.Resume, "resume", "", "continue from this checkpoint (same program and flags)")
	fs.StringVar(&f.Plot, "plot", "", "draw the training and validation curves into this PNG file")
	fs.DurationVar(&f.MaxTime, "max-time", 0, "stop training after this long, such as 10m (0: no limit); the end is as after the last step")
	build := p.Setup(fs)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(help, "usage: tessera train %s [flags]\n%s\n", p.Name, p.Summary)
			fs.SetOutput(help)
			fs.PrintDefaults()
			return f, nil, err
		}
		return f, nil, usagef("%v (run tessera train %s -h for the flags)", err, p.Name)
	}
	if fs.NArg() > 0 {
		return f, nil, usagef("unexpected argument %q (run tessera train %s -h for the flags)", fs.Arg(0), p.Name)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case set["steps"] && set["epochs"]:
		return f, nil, usagef("-steps and -epochs exclude each other; give one")
	case !set["steps"] && !set["epochs"]:
		f.Steps, f.Epochs = d.Steps, d.Epochs
	}
	return f, build, f.check(set)
}

func defaultLength(d Defaults) string {
	if d.Epochs > 0 {
		return fmt.Sprintf("%d epochs", d.Epochs)
	}
	return fmt.Sprint(d.Steps)
}

// check checks the flags as far as they can be checked before the task
// exists; set holds the flags given on the command line.
func (f Flags) check(set map[string]bool) error {
	switch {
	case set["steps"] && f.Steps < 1:
		return usagef("-steps must be at least 1, got %d", f.Steps)
	case set["epochs"] && f.Epochs < 1:
		return usagef("-epochs must be at least 1, got %d", f.Epochs)
	case f.Batch < 1:
		return usagef("-batch must be at least 1, got %d", f.Batch)
	case !(f.LR > 0) || math.IsInf(f.LR, 1):
		return usagef("-lr must be a positive finite number, got %v", f.LR)
	case f.MaxTime < 0:
		return usagef("-max-time must not be negative, got %v", f.MaxTime)
	case f.EvalEvery < 0:
		return usagef("-eval-every must be 0 or more, got %d", f.EvalEvery)
	case f.CheckpointEvery < 0:
		return usagef("-checkpoint-every must be 0 or more, got %d", f.CheckpointEvery)
	case f.CheckpointEvery > 0 && f.Checkpoint == "":
		return usagef("-checkpoint-every needs -checkpoint, the file to save")
	case f.Plot != "" && !strings.EqualFold(filepath.Ext(f.Plot), ".png"):
		return usagef("-plot %q must name a .png file", f.Plot)
	}
	if f.Device != "default" {
		if _, err := parseDevices(f.Device); err != nil {
			return err
		}
	}
	for _, out := range []struct{ flag, path string }{{"checkpoint", f.Checkpoint}, {"plot", f.Plot}} {
		if out.path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(out.path)); err != nil || !st.IsDir() {
			return usagef("-%s %q: the folder %q does not exist", out.flag, out.path, filepath.Dir(out.path))
		}
	}
	if f.Resume != "" {
		if st, err := os.Stat(f.Resume); err != nil || st.IsDir() {
			return usagef("-resume %q: no such checkpoint file", f.Resume)
		}
	}
	return nil
}

// devices returns the devices the flags name, one per rank of this
// process, and a sentence saying which; see parseDevices.
func (f Flags) devices() ([]tensor.Device, string, error) {
	if !strings.Contains(f.Device, ",") {
		d, notice, err := f.device()
		return []tensor.Device{d}, notice, err
	}
	devs, err := parseDevices(f.Device)
	if err != nil {
		return nil, "", err
	}
	if err := sameAdapters(f.Device, devs); err != nil {
		return nil, "", err
	}
	return devs, "training on " + deviceList(devs) + ", one rank each", nil
}

// device returns the one device the flags name, and a sentence saying
// which.
func (f Flags) device() (tensor.Device, string, error) {
	if f.Device == "default" {
		return tensor.DefaultDevice()
	}
	d, err := tensor.ParseDevice(f.Device)
	if err != nil {
		return d, "", err
	}
	if err := tensor.Available(d); err != nil {
		return d, "", err
	}
	return d, "training on " + d.String(), nil
}
