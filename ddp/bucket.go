package ddp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/tensor"
)

// A bucket gathers the gradients of some parameters of one dtype and
// device into one flat tensor, reduced by one all-reduce.
type bucket struct {
	dtype   tensor.DType
	dev     tensor.Device
	params  []int // indices into Replica.params, in bucket order
	numel   int
	flat    *tensor.Tensor // on dev: the parameters' contributions
	pending int            // parameters not ready this step
	host    *tensor.Tensor // what is being reduced: flat on the CPU, a copy of it else
	work    Work
}

// clear forgets the bucket's step.
func (b *bucket) clear() {
	b.pending = len(b.params)
	if b.host != nil && b.host != b.flat {
		b.host.Release()
	}
	b.host, b.work = nil, nil
}

// layout puts the parameters into buckets in the given order of their
// indices: a bucket takes parameters of its dtype and device until the
// next would take it past Options.BucketBytes. New lays them out the
// last parameters first, as PyTorch does, since backward produces their
// gradients first; rebuild lays them out again in the order the first
// synchronised backward pass produced them.
func (r *Replica) layout(order []int) {
	type key struct {
		dt  tensor.DType
		dev tensor.Device
	}
	for _, b := range r.buckets {
		b.clear()
		b.flat.Release()
	}
	r.buckets = nil
	open := map[key]int{} // the bucket each dtype and device fills now
	bytes := map[int]int{}
	for _, i := range order {
		p := r.params[i]
		k := key{p.t.DType(), p.t.Device()}
		n := p.t.Numel()
		size := n * k.dt.Size()
		bi, ok := open[k]
		if !ok || bytes[bi]+size > r.opts.BucketBytes {
			bi = len(r.buckets)
			open[k] = bi
			r.buckets = append(r.buckets, &bucket{dtype: k.dt, dev: k.dev})
		}
		b := r.buckets[bi]
		p.bucket, p.off, p.n = bi, b.numel, n
		b.params = append(b.params, i)
		b.numel += n
		bytes[bi] += size
	}
	for _, b := range r.buckets {
		b.flat = tensor.Zeros([]int{b.numel}, tensor.Of(b.dtype), tensor.On(b.dev), tensor.In(r.ctx)).Keep()
		for _, pi := range b.params {
			p := r.params[pi]
			if p.view != nil {
				p.view.Release()
			}
			p.view = b.flat.Narrow(0, p.off, p.n).Reshape(p.t.Shape()...).Keep()
		}
		b.pending = len(b.params)
	}
}

// reversed returns n-1, ..., 1, 0.
func reversed(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = n - 1 - i
	}
	return order
}

// rebuild lays the buckets out again in the order in which rank 0's
// first synchronised backward pass produced the gradients (its arrival
// order, then the parameters it did not reach, last first), as
// PyTorch's DDP does after its first iteration: the engine's order need
// not be the reverse of the parameters' (it reaches the biases of a
// stack of linear layers last), and a bucket that waits for a late
// gradient holds back every bucket after it.
func (r *Replica) rebuild() error {
	order := slices.Clone(r.arrival)
	for _, i := range reversed(len(r.params)) {
		if !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	values := make([]float64, len(order))
	for i, v := range order {
		values[i] = float64(v)
	}
	got, err := r.broadcastValues(values, 0)
	if err != nil {
		return err
	}
	for i, v := range got {
		order[i] = int(v)
	}
	r.rebuilt, r.arrival = true, nil
	return tensor.Catch(func() { r.layout(order) })
}

// hook returns the gradient hook of parameter i: in a synchronised
// Backward it puts the parameter's gradient so far plus g into its
// bucket and starts the all-reduces that are due.
func (r *Replica) hook(i int) func(g *tensor.Tensor) *tensor.Tensor {
	return func(g *tensor.Tensor) *tensor.Tensor {
		switch p := r.params[i]; {
		case r.noSync > 0:
		case !r.armed:
			panic(tensor.NewError("ddp.Replica", tensor.ErrAutograd, fmt.Sprintf("a backward pass outside Replica.Backward "+
				"and NoSync reached parameter %q: its gradient would not be averaged across the ranks; "+
				"call r.Backward(loss), or wrap the pass in r.NoSync", p.name), p.t))
		case p.ready:
			panic(tensor.NewError("ddp.Replica", tensor.ErrAutograd, fmt.Sprintf("parameter %q received a second gradient "+
				"in one Backward", p.name), p.t))
		default:
			p.fired = true
			if !r.rebuilt {
				r.arrival = append(r.arrival, i)
			}
			x := g
			if prev := p.t.Grad(); prev != nil {
				x = prev.Add(g)
			}
			p.view.CopyFrom(x)
			if x != g {
				x.Release()
			}
			r.markReady(i)
		}
		return nil
	}
}

// contributeSoFar puts parameter i's gradient so far (zeros when it has
// none) into its bucket: a parameter that takes no part in this step's
// backward pass.
func (r *Replica) contributeSoFar(i int) {
	p := r.params[i]
	r.ctx.NoGrad(func() {
		if g := p.t.Grad(); g != nil {
			p.view.CopyFrom(g)
		} else {
			p.view.Zero()
		}
	})
	r.markReady(i)
}

// markReady records that parameter i's contribution is in its bucket,
// and starts the all-reduce of every complete bucket whose predecessors
// have started: every rank starts them in the same order.
func (r *Replica) markReady(i int) {
	p := r.params[i]
	p.ready = true
	r.buckets[p.bucket].pending--
	for r.next < len(r.buckets) && r.buckets[r.next].pending == 0 {
		b := r.buckets[r.next]
		b.host = b.flat
		if b.dev != tensor.CPU {
			b.host = b.flat.To(tensor.CPU) // WebGPU has no device-to-device path
		}
		b.work = r.group.AllReduce(b.host, ReduceSum)
		r.next++
	}
}

// markUnreached marks ready, before backward starts, the parameters
// that loss's graph does not reach (Options.FindUnusedParameters).
func (r *Replica) markUnreached(loss *tensor.Tensor) {
	reached := make([]bool, len(r.params))
	seen := map[*tensor.Node]bool{}
	stack := []*tensor.Tensor{loss}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i, ok := r.index[t]; ok {
			reached[i] = true
		}
		n := t.Source()
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		for _, in := range n.Inputs {
			if in != nil && in.RequiresGrad() {
				stack = append(stack, in)
			}
		}
	}
	for i, ok := range reached {
		if !ok {
			r.contributeSoFar(i)
		}
	}
}

// finish completes a synchronised Backward: the parameters that got no
// gradient contribute what they have, every bucket is reduced, and each
// parameter's Grad becomes its bucket's sum over the ranks divided by
// their number.
func (r *Replica) finish() error {
	var unused []string
	for i, p := range r.params {
		if !p.fired {
			unused = append(unused, p.name)
		}
		if !p.ready {
			r.contributeSoFar(i)
		}
	}
	var used []float64 // by parameter: how many ranks had a gradient for it
	if r.opts.FindUnusedParameters {
		mine := make([]float64, len(r.params))
		for i, p := range r.params {
			if p.fired || p.t.Grad() != nil {
				mine[i] = 1
			}
		}
		t := tensor.From(mine, []int{len(mine)}, tensor.In(r.ctx))
		defer t.Release()
		if err := r.group.AllReduce(t, ReduceSum).Wait(); err != nil {
			return r.waitAll(wrap("Backward", err))
		}
		used = t.Float64s()
	}
	if err := r.waitAll(nil); err != nil {
		return err
	}
	var errs []error
	r.ctx.NoGrad(func() {
		errs = append(errs, tensor.Catch(func() { r.writeGrads(used) }))
	})
	// The collectives below run on every rank, whatever this one found.
	if !r.rebuilt {
		errs = append(errs, r.rebuild())
	}
	if !r.opts.LocalBuffers {
		errs = append(errs, r.broadcast("Backward", r.buffers))
	}
	if len(unused) > 0 && !r.opts.FindUnusedParameters {
		errs = append(errs, &Error{Op: "Backward", Rank: r.group.Rank(), Param: unused[0], Err: ErrUnusedParameter,
			Detail: fmt.Sprintf("parameters %s took no part in computing the loss; set Options.FindUnusedParameters "+
				"if that is meant (their gradient so far, or zeros, went into the mean)", strings.Join(unused, ", "))})
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// waitAll waits for every bucket's all-reduce, and returns first or
// else the first error.
func (r *Replica) waitAll(first error) error {
	for i, b := range r.buckets {
		if b.work == nil {
			continue
		}
		if err := b.work.Wait(); err != nil && first == nil {
			first = wrap("Backward", err)
			if e, ok := first.(*Error); ok {
				e.Detail = strings.TrimSuffix(fmt.Sprintf("bucket %d: %s", i, e.Detail), ": ")
			}
		}
	}
	return first
}

// writeGrads sets each parameter's Grad to its part of its bucket's sum
// divided by the number of ranks, skipping the parameters no rank had a
// gradient for (used[i] == 0) when used is not nil. The division runs on
// the host, once, so ranks on different devices get the same bits.
func (r *Replica) writeGrads(used []float64) {
	world := float64(r.group.Size())
	for _, b := range r.buckets {
		mean := b.host.DivScalar(world)
		src := mean
		if b.dev != tensor.CPU {
			src = mean.To(b.dev)
		}
		for _, pi := range b.params {
			p := r.params[pi]
			if used != nil && used[pi] == 0 {
				continue
			}
			g := src.Narrow(0, p.off, p.n).Reshape(p.t.Shape()...).Clone()
			tensor.Realize(g)
			p.t.SetGrad(g)
		}
		if src != mean {
			src.Release()
		}
		mean.Release()
	}
}

// wrap returns err as an *Error of op: itself when it is one, else
// wrapping ErrCollective as well as err (a distributed.Error, say).
func wrap(op string, err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	if !errors.Is(err, ErrCollective) && !errors.Is(err, ErrTimeout) {
		err = fmt.Errorf("%w: %w", ErrCollective, err)
	}
	return &Error{Op: op, Rank: -1, Err: err}
}
