package ddp

import (
	"fmt"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// DefaultBucketBytes is the gradient bytes a bucket holds at most when
// Options.BucketBytes is 0: PyTorch's bucket_cap_mb of 25.
const DefaultBucketBytes = 25 << 20

// Options change how a Replica trains. The zero Options are PyTorch's
// defaults.
type Options struct {
	// BucketBytes caps the bytes of gradients gathered into one bucket,
	// one all-reduce (0: DefaultBucketBytes). A parameter larger than the
	// cap has a bucket of its own.
	BucketBytes int
	// FindUnusedParameters lets a synchronised backward pass leave
	// parameters without a gradient (PyTorch's find_unused_parameters):
	// Backward walks the loss's graph first, and a parameter it does not
	// reach contributes its gradient so far (zeros when it has none) at
	// once, so its bucket need not wait for it. A parameter that no rank
	// gave a gradient keeps its Grad unchanged (nil stays nil). Without
	// it, such a parameter is an ErrUnusedParameter.
	FindUnusedParameters bool
	// LocalBuffers turns off the broadcast of buffers (batch norm's
	// running statistics) from rank 0 after each synchronised backward
	// pass (PyTorch's broadcast_buffers=False): each rank keeps its own.
	LocalBuffers bool
}

// A Replica is one rank's copy of a model trained data-parallel, as
// torch.nn.parallel.DistributedDataParallel: Backward averages the
// gradients of every rank's backward pass into each parameter's Grad,
// bucket by bucket while backward runs, so that the optimizer's step,
// the same on every rank, keeps the replicas bitwise equal. See the
// package doc.
//
// A Replica is used by its rank's goroutine alone.
type Replica struct {
	module  nn.Module
	group   Group
	opts    Options
	ctx     *tensor.Context // where the Replica's own tensors live
	params  []*param        // the parameters that require grad, in NamedParameters order
	index   map[*tensor.Tensor]int
	buffers []*tensor.Tensor
	bufName []string
	buckets []*bucket // in the order they are reduced
	noSync  int       // depth of NoSync
	armed   bool      // inside a synchronised Backward
	next    int       // the next bucket to reduce this step
	arrival []int     // the parameters in the order their hooks ran, until rebuilt
	rebuilt bool      // the buckets follow the first synchronised pass's order
	hooks   []*tensor.HookHandle
	closed  bool
}

// A param is a parameter that requires grad, and its place in a bucket.
type param struct {
	name   string
	t      *tensor.Tensor
	bucket int
	off, n int
	view   *tensor.Tensor // its part of the bucket's flat, shaped like t
	fired  bool           // its hook ran this step
	ready  bool           // its contribution is in the bucket this step
}

// New returns the Replica of module for this rank of group. Every rank
// calls New with the same architecture: New checks that every rank has
// the same parameter and buffer names, shapes, dtypes and requires-grad
// flags (else an *Error wrapping ErrMismatch, the same on every rank,
// naming the lowest rank that differs from rank 0 and the first
// parameter or buffer where it differs), then copies rank 0's
// parameters and buffers into every other rank's, in place, and lays
// the gradients out in buckets. Move the module to its device (nn.To)
// before New: New registers gradient hooks on the parameters it finds.
func New(module nn.Module, group Group, opts Options) (*Replica, error) {
	if err := checkArgs(module, group, opts); err != nil {
		return nil, err
	}
	if opts.BucketBytes == 0 {
		opts.BucketBytes = DefaultBucketBytes
	}
	r := &Replica{module: module, group: group, opts: opts, index: map[*tensor.Tensor]int{}}
	var all []*tensor.Tensor
	var ds []descriptor
	err := tensor.Catch(func() {
		for name, p := range nn.NamedParameters(module) {
			all = append(all, p)
			ds = append(ds, describe("parameter", name, p))
			if p.RequiresGrad() {
				r.index[p] = len(r.params)
				r.params = append(r.params, &param{name: name, t: p})
			}
		}
		for name, b := range nn.NamedBuffers(module) {
			r.buffers = append(r.buffers, b)
			r.bufName = append(r.bufName, name)
			ds = append(ds, describe("buffer", name, b))
		}
	})
	if err != nil {
		return nil, &Error{Op: "New", Rank: -1, Err: tensor.ErrArgument, Detail: err.Error()}
	}
	states := append(all, r.buffers...)
	r.ctx = tensor.DefaultContext()
	if len(states) > 0 {
		r.ctx = states[0].Context()
	}
	if err := r.checkSame(ds); err != nil {
		return nil, err
	}
	if err := r.broadcast("New", states); err != nil {
		return nil, err
	}
	if group.Size() > 1 {
		if err := tensor.Catch(func() { r.layout(reversed(len(r.params))) }); err != nil {
			return nil, &Error{Op: "New", Rank: -1, Err: tensor.ErrArgument, Detail: err.Error()}
		}
		for i, p := range r.params {
			r.hooks = append(r.hooks, p.t.RegisterHook(r.hook(i)))
		}
	}
	return r, nil
}

// checkArgs returns an *Error wrapping tensor.ErrArgument for a nil
// module or group, a group whose rank is outside it, or a negative
// bucket size.
func checkArgs(module nn.Module, group Group, opts Options) error {
	var detail string
	switch {
	case module == nil:
		detail = "the module is nil"
	case group == nil:
		detail = "the group is nil"
	case group.Size() < 1 || group.Rank() < 0 || group.Rank() >= group.Size():
		detail = fmt.Sprintf("rank %d of a group of %d", group.Rank(), group.Size())
	case opts.BucketBytes < 0:
		detail = fmt.Sprintf("BucketBytes is %d; want 0 (the default) or more", opts.BucketBytes)
	default:
		return nil
	}
	return &Error{Op: "New", Rank: -1, Err: tensor.ErrArgument, Detail: detail}
}

// Module returns the module r trains.
func (r *Replica) Module() nn.Module { return r.module }

// Group returns the ranks r trains with.
func (r *Replica) Group() Group { return r.group }

// Buckets returns the dotted names of the parameters of each bucket, in
// the order the buckets are reduced: the last parameters first, as
// backward produces their gradients. A world of one has no buckets.
func (r *Replica) Buckets() [][]string {
	out := make([][]string, len(r.buckets))
	for i, b := range r.buckets {
		for _, pi := range b.params {
			out[i] = append(out[i], r.params[pi].name)
		}
	}
	return out
}

// Backward runs autograd.Backward(loss, opts...) and, unless inside
// NoSync, sets the Grad of every parameter that requires grad to the
// mean over the ranks of its gradient (what accumulated before, from
// NoSync passes, included); then, unless Options.LocalBuffers, it copies
// rank 0's buffers into every other rank's. Every rank calls Backward
// once per step, before the optimizer's step. Each bucket's all-reduce
// starts from the gradient hooks as soon as the bucket is complete, so
// that communication overlaps the rest of backward; Backward returns
// when all of them are done.
//
// A parameter that received no gradient is an *Error wrapping
// ErrUnusedParameter, naming it, unless Options.FindUnusedParameters;
// Backward still completes the step's collectives first (the parameter
// contributes its gradient so far, or zeros), so that the other ranks do
// not wait for it. Misuse of autograd.Backward panics as it does.
//
// Train with Backward: autograd.Backward on r's parameters outside
// Backward and NoSync would leave each rank with its own gradients, so
// the hooks panic with a *tensor.Error wrapping ErrAutograd then.
func (r *Replica) Backward(loss *tensor.Tensor, opts ...autograd.Option) error {
	if r.closed {
		return errorf("Backward", tensor.ErrArgument, "the Replica is closed")
	}
	if r.noSync > 0 || r.group.Size() == 1 {
		autograd.Backward(loss, opts...)
		return nil
	}
	if r.armed {
		return errorf("Backward", tensor.ErrArgument, "Backward called while a Backward of this Replica is running")
	}
	r.armed = true
	defer r.reset()
	if r.opts.FindUnusedParameters {
		r.markUnreached(loss)
	}
	autograd.Backward(loss, opts...)
	return r.finish()
}

// NoSync runs f, in which backward passes (Backward or autograd.Backward)
// accumulate each rank's own gradients into Grad without communicating,
// as PyTorch's no_sync: the next Backward outside NoSync averages what
// accumulated. Calls nest.
func (r *Replica) NoSync(f func()) {
	r.noSync++
	defer func() { r.noSync-- }()
	f()
}

// Close takes the Replica's gradient hooks off the model's parameters,
// so that the model trains alone again with autograd.Backward, or can be
// wrapped in a new Replica. Backward on a closed Replica is an *Error
// wrapping tensor.ErrArgument; Close is idempotent. It communicates
// nothing.
func (r *Replica) Close() {
	for _, h := range r.hooks {
		h.Remove()
	}
	r.hooks, r.closed = nil, true
}

// SyncBuffers copies rank 0's buffers into every other rank's, in place.
// Backward does it after each synchronised pass unless
// Options.LocalBuffers; call it before evaluating when it is set.
func (r *Replica) SyncBuffers() error {
	if r.group.Size() == 1 {
		return nil
	}
	return r.broadcast("SyncBuffers", r.buffers)
}

// reset ends a synchronised Backward, completed or not.
func (r *Replica) reset() {
	r.armed = false
	r.next = 0
	for _, p := range r.params {
		p.fired, p.ready = false, false
	}
	for _, b := range r.buckets {
		b.clear()
	}
}
