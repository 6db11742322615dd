package data

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// watch makes l report every tensor its producer makes, and returns a
// function listing those still holding memory.
func watch(l *Loader) (live func() []*tensor.Tensor) {
	var mu sync.Mutex
	var made []*tensor.Tensor
	l.made = func(t *tensor.Tensor) {
		mu.Lock()
		made = append(made, t)
		mu.Unlock()
	}
	return func() []*tensor.Tensor {
		mu.Lock()
		defer mu.Unlock()
		var out []*tensor.Tensor
		for _, t := range made {
			if !released(t) {
				out = append(out, t)
			}
		}
		return out
	}
}

// released reports whether t's memory is gone.
func released(t *tensor.Tensor) bool { return strings.Contains(t.String(), "<released>") }

// allocated returns the bytes allocated on dev once its work is done, or
// 0 on the CPU.
func allocated(t *testing.T, dev tensor.Device) int64 {
	t.Helper()
	if dev.Kind != tensor.KindGPU {
		return 0
	}
	if err := tensor.Sync(dev); err != nil {
		t.Fatal(err)
	}
	g, err := tensor.GPUDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	return g.Stats().Allocated
}

// A training loop under Scope releases each batch with its step, in the
// consumer's own context; Close releases the batches made ahead; nothing
// the loader made keeps memory, on either device.
func TestLoaderBatchesLeaveWithTheStep(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			ds := numbered(t, 33, 7)
			base := allocated(t, dev)
			consumer := tensor.NewContext()
			l := newLoader(t, ds, Config{BatchSize: 5, Shuffle: true, Seed: 5, Device: dev, Context: consumer, Prefetch: 3})
			live := watch(l)
			var steps [][]*tensor.Tensor
			for step := range 9 { // past the end of epoch 0 (7 batches)
				consumer.Scope(func() {
					b, ok := l.Next()
					if !ok {
						return
					}
					for _, x := range b.Tensors {
						if x.Device() != dev || x.Context() != consumer {
							t.Fatalf("step %d: batch tensor on %v in another context, want %v in the consumer's", step, x.Device(), dev)
						}
					}
					x, y := b.Tensors[0], b.Tensors[1]
					got := x.Sum().Item() + y.Cast(tensor.Float32).Sum().Item()
					want := 0.0
					for _, i := range b.Indices {
						want += float64(i) + float64(7*i*7+21) // y[i] + sum of x[i]
					}
					if got != want {
						t.Fatalf("step %d: sums %v, want %v", step, got, want)
					}
					steps = append(steps, b.Tensors)
				})
				for _, x := range steps[len(steps)-1] {
					if !released(x) {
						t.Fatalf("step %d: a batch tensor outlived the step's Scope", step)
					}
				}
			}
			for i := 0; len(live()) == 0; i++ {
				if i == 200 {
					t.Fatal("no batch was made ahead in 2 s")
				}
				time.Sleep(10 * time.Millisecond)
			}
			l.Close()
			if n := len(live()); n != 0 {
				t.Fatalf("%d tensors the loader made still hold memory after Close", n)
			}
			if got := allocated(t, dev); got != base {
				t.Fatalf("%d bytes allocated after Close, %d before the loader", got, base)
			}
		})
	}
}

// The range form runs each iteration in a Scope: each batch and what the
// body computed from it are gone when the iteration ends, also after a
// break, and the next range continues where the break left off.
func TestLoaderBatchesIterator(t *testing.T) {
	l := newLoader(t, numbered(t, 10, 1), Config{BatchSize: 3})
	live := watch(l)
	var seen []int
	var kept []*tensor.Tensor
	for b := range l.Batches() {
		kept = append(kept, b.Tensors[0], b.Tensors[0].MulScalar(2))
		seen = append(seen, b.Indices...)
		if len(seen) == 6 {
			break
		}
	}
	for b := range l.Batches() {
		kept = append(kept, b.Tensors[1])
		seen = append(seen, b.Indices...)
	}
	if !slices.Equal(seen, identity(10)) {
		t.Fatalf("two ranges saw %v, want the epoch 0…9", seen)
	}
	if st := l.State(); st.Epoch != 1 || st.Position != 0 {
		t.Fatalf("state after the epoch: %+v", st)
	}
	for i, x := range kept {
		if !released(x) {
			t.Fatalf("tensor %d of a loop body outlived its iteration", i)
		}
	}
	l.Close()
	if n := len(live()); n != 0 {
		t.Fatalf("%d tensors the loader made still hold memory", n)
	}
}

// failing panics with failure when Gather is asked for field 1 of
// example bad.
type failing struct {
	*InMemory
	bad     int
	failure any
}

func (d *failing) Gather(f int, idx []int, dst any) {
	if f == 1 && slices.Contains(idx, d.bad) {
		panic(d.failure)
	}
	d.InMemory.Gather(f, idx, dst)
}

// A batch that cannot be made panics in the consumer's Next with the
// producer's panic value, releases what it made, leaves the state before
// it, and stops the goroutine; the next Next tries again.
func TestLoaderFailureReachesTheConsumer(t *testing.T) {
	base := waitProducers(0)
	typed := &tensor.Error{Op: "test", Err: tensor.ErrIndex, Detail: "example 7 is unreadable"}
	for _, failure := range []any{typed, "a bug in a Dataset"} {
		ds := &failing{InMemory: numbered(t, 10, 2), bad: 7, failure: failure}
		l := newLoader(t, ds, Config{BatchSize: 3})
		live := watch(l)
		take(t, l, 2, 2) // examples 0–5
		for range 2 {
			var got any
			func() {
				defer func() { got = recover() }()
				l.Next()
			}()
			if got != failure {
				t.Fatalf("Next panicked with %v, want %v", got, failure)
			}
			if st := l.State(); st.Epoch != 0 || st.Position != 6 {
				t.Fatalf("state after the failure %+v, want epoch 0 position 6", st)
			}
			if n := waitProducers(base); n != base {
				t.Fatalf("%d producers after a failure, want %d", n, base)
			}
			if n := len(live()); n != 0 {
				t.Fatalf("%d tensors of the failed batch still hold memory", n)
			}
		}
		if failure == typed {
			if err := tensor.Catch(func() { l.Next() }); !errors.Is(err, tensor.ErrIndex) {
				t.Fatalf("tensor.Catch(Next) = %v, want the producer's *tensor.Error", err)
			}
		}
		l.Close()
	}
}

// Batches handed to a goroutine-free consumer on the default context
// join the Scope open when Next is called, as in DESIGN.md's loop.
func TestLoaderDefaultContext(t *testing.T) {
	l := newLoader(t, numbered(t, 4, 1), Config{BatchSize: 2})
	var b *Batch
	tensor.Scope(func() {
		b, _ = l.Next()
		if b.Tensors[0].Context() != tensor.DefaultContext() {
			t.Fatal("batch not in the default context")
		}
	})
	if !released(b.Tensors[0]) || !released(b.Tensors[1]) {
		t.Fatal("the default context's Scope did not release the batch")
	}
	// Outside any Scope, the batch is the caller's to release.
	b, _ = l.Next()
	if released(b.Tensors[0]) {
		t.Fatal("a batch taken outside a Scope was released")
	}
	b.Release()
	if !released(b.Tensors[0]) || !released(b.Tensors[1]) {
		t.Fatal("Batch.Release left memory")
	}
}

// hugeFields is a dataset whose examples are each 32 GiB of float32:
// any batch of it is beyond the CPU budget of any machine running CI.
type hugeFields struct{ gathered atomic.Bool }

func (h *hugeFields) Len() int { return 4 }
func (h *hugeFields) Fields() []Field {
	return []Field{{DType: tensor.Float32, Shape: []int{1 << 33}}}
}
func (h *hugeFields) Gather(int, []int, any) { h.gathered.Store(true) }

// A batch beyond the CPU budget is the typed out-of-memory error from
// Next, before its host slice is made (never Go's fatal out-of-memory),
// and the loader can be closed afterwards.
func TestLoaderBatchBeyondTheBudget(t *testing.T) {
	ds := &hugeFields{}
	l, err := NewLoader(ds, Config{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = tensor.Catch(func() { l.Next() })
	if !errors.Is(err, tensor.ErrOutOfMemory) || !strings.Contains(err.Error(), "data.Loader") {
		t.Fatalf("Next of a 64 GiB batch: %v, want an out-of-memory *tensor.Error naming data.Loader", err)
	}
	if ds.gathered.Load() {
		t.Error("the loader gathered into a slice beyond the budget")
	}
}
