package data

import (
	"fmt"
	"iter"
	"runtime"
	"slices"
	"sync"

	"github.com/tessera-ml/tessera/tensor"
)

// DefaultPrefetch is the number of batches a Loader keeps ready when its
// Config leaves Prefetch at 0.
const DefaultPrefetch = 2

// Config says how a Loader batches a dataset.
type Config struct {
	BatchSize int           // examples per batch, at least 1
	Shuffle   bool          // visit each epoch in the order Permutation(Seed, epoch, n); else 0..n-1
	Seed      uint64        // the shuffle's seed
	DropLast  bool          // leave out each epoch's last batch when it is short
	Device    tensor.Device // where batches are made (default the CPU)
	Prefetch  int           // batches made ahead and queued; 0 means DefaultPrefetch
	Shard     Shard         // this process's part of each epoch in data-parallel training; the zero Shard is all of it

	// Context is the consumer's context, into which Next adopts each
	// batch; nil means tensor.DefaultContext().
	Context *tensor.Context
}

// A Batch is n consecutive examples of an epoch's order.
type Batch struct {
	Tensors  []*tensor.Tensor // one per field of the dataset, of shape [n, field shape...]
	Indices  []int            // the examples' numbers in the dataset, in batch order
	Epoch    int              // the epoch it belongs to, from 0
	Position int              // how many examples of the epoch came before it
}

// Release releases the batch's tensors now (see tensor.Tensor.Release).
func (b *Batch) Release() {
	for _, t := range b.Tensors {
		t.Release()
	}
}

// State is where a Loader stands, as plain values for a checkpoint:
// Position examples of Epoch have been handed out. Seed and Shuffle fix
// the order and Examples the dataset's length; Restore checks them.
type State struct {
	Seed     uint64
	Shuffle  bool
	Epoch    int
	Position int
	Examples int
}

// A Loader cuts a Dataset into batches, epoch after epoch, and makes the
// next ones ahead of the step on a goroutine of its own (started by the
// first Next), in a tensor.Context of its own, on Config.Device. Next
// adopts each batch into the consumer's context. A Loader is used from
// one goroutine, like the training loop it serves; Close stops its
// goroutine.
type Loader struct {
	*plan
	state  State
	prod   *producer
	closed bool
}

// A plan is what the producer reads: the dataset and the configuration,
// never changed after NewLoader. It does not point to the Loader, so a
// Loader dropped without Close becomes garbage and its cleanup stops the
// producer.
type plan struct {
	ds     Dataset
	fields []Field
	cfg    Config
	n      int                  // examples per epoch that make batches: the dataset's length, less the short batch with DropLast
	made   func(*tensor.Tensor) // tests: sees every tensor the producer makes
}

// NewLoader returns a loader of ds at epoch 0, position 0. It returns a
// *tensor.Error wrapping ErrArgument for a nil or empty dataset, a
// dataset with no field, a batch size below 1, a negative Prefetch, or
// DropLast with fewer examples than one batch; ErrDevice when the device
// does not open; ErrDType for a float64 field bound for a GPU.
func NewLoader(ds Dataset, cfg Config) (*Loader, error) {
	const op = "NewLoader"
	switch {
	case ds == nil:
		return nil, argErr(op, tensor.ErrArgument, "nil dataset")
	case ds.Len() <= 0:
		return nil, argErr(op, tensor.ErrArgument, "empty dataset: it has %d examples", ds.Len())
	case len(ds.Fields()) == 0:
		return nil, argErr(op, tensor.ErrArgument, "the dataset has no fields")
	case cfg.BatchSize < 1:
		return nil, argErr(op, tensor.ErrArgument, "batch size %d < 1", cfg.BatchSize)
	case cfg.Prefetch < 0:
		return nil, argErr(op, tensor.ErrArgument, "negative Prefetch %d", cfg.Prefetch)
	}
	if err := cfg.Shard.check(op); err != nil {
		return nil, err
	}
	if cfg.DropLast && cfg.BatchSize > cfg.Shard.Len(ds.Len()) {
		return nil, argErr(op, tensor.ErrArgument, "batch size %d with DropLast leaves no batch of %s", cfg.BatchSize, cfg.Shard.of(ds.Len()))
	}
	if err := tensor.Available(cfg.Device); err != nil {
		return nil, &tensor.Error{Op: "data." + op, Err: tensor.ErrDevice, Detail: err.Error(), Devices: []tensor.Device{cfg.Device}}
	}
	for i, f := range ds.Fields() {
		if !cfg.Device.Holds(f.DType) {
			return nil, argErr(op, tensor.ErrDType, "field %d is float64, which lives on the CPU only; batches go to %v", i, cfg.Device)
		}
	}
	if cfg.Prefetch == 0 {
		cfg.Prefetch = DefaultPrefetch
	}
	if cfg.Context == nil {
		cfg.Context = tensor.DefaultContext()
	}
	l := &Loader{plan: &plan{ds: ds, fields: ds.Fields(), cfg: cfg, n: cfg.Shard.Len(ds.Len())}}
	if cfg.DropLast {
		l.n -= l.n % cfg.BatchSize
	}
	l.state = State{Seed: cfg.Seed, Shuffle: cfg.Shuffle, Examples: ds.Len()}
	return l, nil
}

// BatchesPerEpoch returns how many batches each epoch has.
func (l *Loader) BatchesPerEpoch() int { return (l.n + l.cfg.BatchSize - 1) / l.cfg.BatchSize }

// State returns where the loader stands: the batches Next has returned
// count as handed out, those made ahead do not.
func (l *Loader) State() State { return l.state }

// Next returns the next batch of the current epoch, its tensors adopted
// into the consumer's context (Config.Context) and so owned by the
// innermost Scope open there. At the end of an epoch it returns false
// once, and the following call starts the next epoch.
//
// Next panics with a *tensor.Error wrapping ErrArgument after Close, and
// with the producer's panic value when making a batch failed (a GPU out
// of memory, say); the loader's State is then that before the failed
// batch, and the next call tries it again.
func (l *Loader) Next() (*Batch, bool) {
	if l.closed {
		panic(argErr("Loader.Next", tensor.ErrArgument, "the loader is closed"))
	}
	if l.prod == nil {
		l.prod = l.start(l.state)
	}
	it := <-l.prod.out
	if it.failure != nil {
		l.stop()
		panic(it.failure)
	}
	l.state.Epoch, l.state.Position = it.epoch, it.position
	if it.batch == nil {
		return nil, false
	}
	for _, t := range it.batch.Tensors {
		l.cfg.Context.Adopt(t)
	}
	return it.batch, true
}

// Batches returns an iterator over the rest of the current epoch. Each
// iteration runs in a Scope of the consumer's context, which releases
// the batch and everything computed in the loop body when the iteration
// ends; read out what must outlive it (loss.Item()) or return it from a
// ScopeKeep. After a break, the next Batches continues where it stopped.
func (l *Loader) Batches() iter.Seq[*Batch] {
	return func(yield func(*Batch) bool) {
		for more := true; more; {
			l.cfg.Context.Scope(func() {
				var b *Batch
				if b, more = l.Next(); more {
					more = yield(b)
				}
			})
		}
	}
}

// Restore sets the loader to st, taken from State of a loader of the same
// dataset: the batches that follow are those that followed then, in the
// order of st's seed (Config.Seed is ignored from then on). Batches
// made ahead are released. It returns a *tensor.Error wrapping
// ErrArgument when st does not fit this loader (another dataset length
// or shuffle mode, a position outside the epoch) or the loader is
// closed.
func (l *Loader) Restore(st State) error {
	const op = "Loader.Restore"
	switch {
	case l.closed:
		return argErr(op, tensor.ErrArgument, "the loader is closed")
	case st.Examples != l.ds.Len():
		return argErr(op, tensor.ErrArgument, "the state is of a dataset of %d examples, this loader's has %d", st.Examples, l.ds.Len())
	case st.Shuffle != l.cfg.Shuffle:
		return argErr(op, tensor.ErrArgument, "the state has Shuffle %v, this loader %v", st.Shuffle, l.cfg.Shuffle)
	case st.Epoch < 0 || st.Position < 0 || st.Position > l.n:
		return argErr(op, tensor.ErrArgument, "epoch %d, position %d is outside the epochs of %d examples", st.Epoch, st.Position, l.n)
	}
	l.stop()
	l.state = st
	return nil
}

// Close stops the loader's goroutine and releases the batches it made
// ahead. Batches already returned stay valid. Close is idempotent.
func (l *Loader) Close() {
	l.stop()
	l.closed = true
}

// An item is what the producer queues: a batch, or the end of an epoch
// (batch nil), or the panic that stopped it (failure), with the state
// after it.
type item struct {
	batch           *Batch
	epoch, position int
	failure         any
}

// A producer is the goroutine making batches ahead.
type producer struct {
	out     chan item     // closed when the goroutine ends
	done    chan struct{} // closed to stop it
	once    sync.Once
	cleanup runtime.Cleanup
}

// start launches the producer at st, and a cleanup that
// stops it should the Loader be dropped without Close.
func (l *Loader) start(st State) *producer {
	p := &producer{out: make(chan item, l.cfg.Prefetch), done: make(chan struct{})}
	go l.plan.produce(p, st.Seed, st.Epoch, st.Position)
	p.cleanup = runtime.AddCleanup(l, (*producer).halt, p)
	return p
}

// stop ends the producer, if any; see halt.
func (l *Loader) stop() {
	if p := l.prod; p != nil {
		l.prod = nil
		p.cleanup.Stop()
		p.halt()
	}
}

// halt stops the goroutine, waits for it to end, and releases the
// batches it queued.
func (p *producer) halt() {
	p.once.Do(func() { close(p.done) })
	for it := range p.out {
		if it.batch != nil {
			it.batch.Release()
		}
	}
}

// produce makes the batches from (epoch, position) on, in the order of
// seed, in a context of its own, until stopped or a batch fails.
func (l *plan) produce(p *producer, seed uint64, epoch, position int) {
	defer close(p.out)
	ctx := tensor.NewContext()
	order := l.order(seed, epoch)
	for {
		it := item{epoch: epoch, position: position}
		if position >= l.n {
			it.epoch, it.position = epoch+1, 0
		} else {
			n := min(l.cfg.BatchSize, l.n-position)
			it.position += n
			it.batch, it.failure = l.make(ctx, epoch, position, order[position:position+n])
		}
		select {
		case p.out <- it:
		case <-p.done:
			if it.batch != nil {
				it.batch.Release()
			}
			return
		}
		if it.failure != nil {
			return
		}
		if epoch, position = it.epoch, it.position; it.batch == nil {
			order = l.order(seed, epoch)
		}
	}
}

// order returns the examples of epoch in the order they are visited:
// the shard's part of the epoch's order.
func (l *plan) order(seed uint64, epoch int) []int {
	order := identity(l.ds.Len())
	if l.cfg.Shuffle {
		order = Permutation(seed, epoch, l.ds.Len())
	}
	return l.cfg.Shard.Deal(order)
}

// make builds the batch of examples idx in ctx on the loader's device. A
// panic (from the dataset or the device) is returned as failure, with
// the tensors already made released.
func (l *plan) make(ctx *tensor.Context, epoch, position int, idx []int) (b *Batch, failure any) {
	b = &Batch{Indices: slices.Clone(idx), Epoch: epoch, Position: position}
	defer func() {
		if r := recover(); r != nil {
			b.Release()
			b, failure = nil, r
		}
	}()
	opts := []tensor.Option{tensor.On(l.cfg.Device), tensor.In(ctx)}
	for f, field := range l.fields {
		shape := append([]int{len(idx)}, field.Shape...)
		var t *tensor.Tensor
		switch field.DType {
		case tensor.Float32:
			t = build[float32](l.ds, f, field.DType, shape, idx, opts)
		case tensor.Float64:
			t = build[float64](l.ds, f, field.DType, shape, idx, opts)
		case tensor.Int32:
			t = build[int32](l.ds, f, field.DType, shape, idx, opts)
		case tensor.Bool:
			t = build[bool](l.ds, f, field.DType, shape, idx, opts)
		default:
			panic(fmt.Sprintf("data: field %d has dtype %v", f, field.DType))
		}
		b.Tensors = append(b.Tensors, t)
		if l.made != nil {
			l.made(t)
		}
	}
	return b, nil
}

// build gathers field f of the examples idx and makes them a tensor of
// shape with opts; dt is T's dtype. A batch beyond the CPU budget panics with the
// out-of-memory *tensor.Error before its host slice is made (make
// catches the panic and reports it as the batch's failure).
func build[T tensor.Element](ds Dataset, f int, dt tensor.DType, shape, idx []int, opts []tensor.Option) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	// The host slice, and the tensor made from it.
	if err := tensor.CheckHostMemory("data.Loader", n, 2*dt.Size()); err != nil {
		panic(err)
	}
	dst := make([]T, n)
	ds.Gather(f, idx, dst)
	return tensor.From(dst, shape, opts...)
}
