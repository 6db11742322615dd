package train

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/tensor"
)

// Data-parallel training on the devices of one process. With -device
// gpu:0,gpu:1 Main runs one rank per device on goroutines (ddp.RunLocal)
// in an in-process world, each with a Run of its own: its device, its
// tensor.Context, its default generator, and its own Builder (the flags
// parsed again), so that nothing of one rank's task is shared with
// another's. The ranks then train as mpirun's do (see doc.go): a global
// batch of World·-batch examples, rank 0's parameters broadcast at the
// start, the mean gradient in every rank's Grad, rank 0 alone printing
// and saving.

// localTimeout is how long a rank of this process waits in a collective
// for the other ranks before the run ends with an error naming them (a
// safety net: a rank that fails or panics aborts the world at once).
const localTimeout = 5 * time.Minute

// A rankPanic is the panic of one rank of this process with an error
// (a *tensor.Error: misuse, or the GPU out of memory), raised again by
// local on Main's goroutine once every rank has stopped, as a process
// of one rank raises it. Other panics, runtime errors and values that
// are not errors, are bugs: RunLocal crashes the program with them.
type rankPanic struct {
	rank  int
	value any
}

func (p *rankPanic) Error() string { return fmt.Sprintf("rank %d panicked: %v", p.rank, p.value) }

// local trains s.p on s.devs, one rank each, and returns rank 0's
// Result. Its error is the first rank's own (not the ErrAborted the
// others meet for it): a UsageError as it is, since every rank meets it
// alike, any other naming the rank and its device. A rank's panic with
// an error is raised again here, on the caller's goroutine, as in a
// process of one rank, after the world has been aborted and every rank
// has stopped.
func (s *session) local(args []string, out io.Writer) (*Result, error) {
	n := len(s.devs)
	results := make([]*Result, n)
	errs := make([]error, n)
	ddp.RunLocal(s.devs, localTimeout, func(rank int, dev tensor.Device, g ddp.Group, c *tensor.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if e, ok := v.(error); !ok || errors.As(e, new(runtime.Error)) {
					panic(v) // a bug: RunLocal aborts the world and crashes with its stack
				}
				err = &rankPanic{rank: rank, value: v}
			}
			errs[rank] = err
		}()
		w, gen := out, tensor.DefaultGenerator()
		if rank != 0 {
			w, gen = io.Discard, tensor.NewGenerator(s.f.Seed)
		}
		_, build, err := parse(s.p, args, io.Discard)
		if err != nil {
			return err
		}
		run := &Run{Flags: s.f, Device: dev, Out: w, Rank: rank, World: n, Context: c, Generator: gen, local: true}
		results[rank], err = s.train(run, build, g)
		return err
	})
	return results[0], rankError(errs, s.devs)
}

// rankError returns the error of the ranks' errs that caused the
// others (see local), re-panicking a rank's panic, or nil when every
// rank succeeded.
func rankError(errs []error, devs []tensor.Device) error {
	for _, err := range errs {
		if p := (*rankPanic)(nil); errors.As(err, &p) {
			panic(p.value)
		}
	}
	for rank, err := range errs {
		if err == nil || errors.Is(err, ddp.ErrAborted) {
			continue
		}
		if u := UsageError(""); errors.As(err, &u) {
			return err
		}
		return fmt.Errorf("rank %d on %v: %w", rank, devs[rank], err)
	}
	for rank, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d on %v: %w", rank, devs[rank], err)
		}
	}
	return nil
}
