package ddp

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// RunLocal trains on several devices of one process, as one rank per
// device: it runs f for each device of devs on its own goroutine, as
// rank i of a new in-process world (NewLocalGroups with timeout) with a
// Context of its own, and returns when every rank has returned: nil, or
// the ranks' errors joined, each naming its rank.
//
//	err := ddp.RunLocal([]tensor.Device{tensor.GPU(0), tensor.GPU(1)}, 0,
//		func(rank int, dev tensor.Device, g ddp.Group, c *tensor.Context) error {
//			model := build(tensor.On(dev), tensor.In(c))
//			r, err := ddp.New(model, g, ddp.Options{})
//			...
//		})
//
// A rank that fails (f returns an error, or panics with a *tensor.Error
// or an *Error, which RunLocal recovers) aborts the world
// (LocalGroup.Abort), so that the other ranks' collectives fail at once
// with ErrAborted naming it instead of waiting for it. Other panics are
// bugs and crash the program, as they would without RunLocal.
func RunLocal(devs []tensor.Device, timeout time.Duration, f func(rank int, dev tensor.Device, g Group, c *tensor.Context) error) error {
	if len(devs) == 0 || f == nil {
		return errorf("RunLocal", tensor.ErrArgument, "no devices or a nil function")
	}
	gs := NewLocalGroups(len(devs), timeout)
	errs := make([]error, len(devs))
	var wg sync.WaitGroup
	for rank, dev := range devs {
		wg.Go(func() {
			err := runRank(rank, dev, gs[rank], f)
			if err != nil {
				errs[rank] = fmt.Errorf("rank %d on %v: %w", rank, dev, err)
				gs[rank].Abort(err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runRank runs f for one rank, turning a typed panic into its error.
func runRank(rank int, dev tensor.Device, g *LocalGroup, f func(int, tensor.Device, Group, *tensor.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			switch e := p.(type) {
			case *tensor.Error:
				err = e
			case *Error:
				err = e
			default:
				g.Abort(fmt.Errorf("panic: %v", p))
				panic(p)
			}
		}
	}()
	return f(rank, dev, g, tensor.NewContext())
}
