// Command tessera trains models and inspects devices.
//
//	tessera train [flags]   train an MNIST classifier on the default device
//	tessera train <program> [flags]   run a training program (tessera train --help lists them)
//	tessera devices         list WebGPU adapters and the GPU memory budget
//	tessera bench [flags]   run the benchmark suite on every device (and PyTorch with -torch)
//	tessera help            print this usage
//
// The device comes from TESSERA_DEVICE (auto, cpu, gpu, gpu:N); auto uses
// a real GPU when one exists and the CPU otherwise, and says which.
//
// Every problem is reported as one line on stderr: a bad command, flag or
// argument exits with status 2, a failure while running (no device,
// unreadable data, a tensor error, the GPU out of memory, a diverging
// loss, a checkpoint that cannot be saved or is damaged) with status 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	trainpkg "github.com/tessera-ml/tessera/train"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands maps each subcommand to its function, which parses its own
// arguments and writes its output to stdout.
var commands = map[string]func(args []string, stdout io.Writer) error{
	"train":   train,
	"devices": devices,
	"bench":   benchCmd,
}

// run runs the command line args (without the program name) and returns
// the exit status: 0, 1 for a failure, 2 for a usage error. Errors and
// panics, of the tensor package's *Error type or any other, are printed as
// one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tessera: no command given (want train, bench, devices or help)")
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "tessera help: unexpected argument %q (run tessera train -h for the flags of train)\n", args[1])
			return 2
		}
		usage(stdout)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tessera: unknown command %q (want train, bench, devices or help)\n", name)
		return 2
	}
	err := catch(func() error { return cmd(args[1:], stdout) })
	code := report(name, err, stderr)
	if leaveWorld != nil { // after the report: under mpirun the ranks leave together, rank 0's line written
		if cerr := leaveWorld(); cerr != nil && code == 0 {
			fmt.Fprintf(stderr, "tessera %s: %s\n", name, oneLine(cerr))
			code = 1
		}
		leaveWorld = nil
	}
	return code
}

// report prints err of command name on stderr, as one line, and returns
// the exit status: 0 for none or -h, 2 for a usage error, 1 otherwise.
// A rank of mpirun's but 0 prints nothing for an error every rank meets
// (a FollowerError): rank 0 reports it.
func report(name string, err error, stderr io.Writer) int {
	var uerr usageError
	var terr trainpkg.UsageError
	var follower *trainpkg.FollowerError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &follower):
		return 2
	case errors.As(err, &uerr), errors.As(err, &terr):
		fmt.Fprintf(stderr, "tessera %s: %s\n", name, oneLine(err))
		return 2
	default:
		fmt.Fprintf(stderr, "tessera %s: %s\n", name, oneLine(err))
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  tessera train [flags]   train an MNIST classifier on the default device (see tessera train -h)
  tessera train <program> [flags]   run a training program: mnist-mlp, charrnn, lstm, pong, timeseries, ... (see tessera train --help)
  tessera devices         list WebGPU adapters and the GPU memory budget
  tessera bench [flags]   run the benchmark suite on every device (see tessera bench -h)
  tessera help            print this usage
`)
}

// A usageError is a mistake in the command line (exit status 2).
type usageError string

func (e usageError) Error() string { return string(e) }

func usagef(format string, args ...any) error { return usageError(fmt.Sprintf(format, args...)) }

// catch runs f and turns a panic into its error: a *tensor.Error (misuse,
// or an environment failure such as GPU memory exhausted), any other error
// value, or anything else, marked as an internal error when it is a Go
// runtime error (a bug). The command prints one line instead of a
// goroutine dump.
func catch(f func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		var rerr runtime.Error
		switch e := r.(type) {
		case error:
			err = e
			if errors.As(e, &rerr) {
				err = fmt.Errorf("internal error (please report it): %w", e)
			}
		default:
			err = fmt.Errorf("internal error (please report it): %v", r)
		}
	}()
	return f()
}

// oneLine renders err as one line: the "tessera: " prefix of the device
// package's errors dropped (the command's name already says it) and line
// breaks (in driver messages) folded into spaces.
func oneLine(err error) string {
	msg := strings.TrimPrefix(err.Error(), "tessera: ")
	return strings.Join(strings.Fields(msg), " ")
}

// parseFlags parses args with fs and reports a usage error in one line,
// or flag.ErrHelp after printing the flags to stdout for -h. Positional
// arguments are refused.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: tessera %s [flags]\n", fs.Name())
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v (run tessera %s -h for the flags)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (run tessera %s -h for the flags)", fs.Arg(0), fs.Name())
	}
	return nil
}
