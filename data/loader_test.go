package data

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// numbered returns a dataset of n examples: x[i] = [i·w … i·w+w-1]
// (float32 [w]) and y[i] = i (int32 scalar), so a batch says which
// examples it holds.
func numbered(t *testing.T, n, w int) *InMemory {
	t.Helper()
	x := make([]float32, n*w)
	y := make([]int32, n)
	for i := range x {
		x[i] = float32(i)
	}
	for i := range y {
		y[i] = int32(i)
	}
	d, err := NewInMemory(Col(x, n, w), Col(y, n))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newLoader is NewLoader that fails the test on error and closes the
// loader when the test ends.
func newLoader(t *testing.T, ds Dataset, cfg Config) *Loader {
	t.Helper()
	l, err := NewLoader(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// record is what a test remembers of one Next: the examples and values
// of a batch, or the end of an epoch (nil).
type record struct {
	epoch, pos int
	idx        []int
	x          []float32
	y          []int32
}

// take calls Next k times under a Scope each, as a training step would,
// checks each batch against the numbered dataset of width w, and returns
// what it saw.
func take(t *testing.T, l *Loader, k, w int) []*record {
	t.Helper()
	var out []*record
	for range k {
		tensor.Scope(func() {
			b, ok := l.Next()
			if !ok {
				out = append(out, nil)
				return
			}
			r := &record{epoch: b.Epoch, pos: b.Position, idx: b.Indices, x: b.Tensors[0].Float32s(), y: b.Tensors[1].Int32s()}
			if got, want := b.Tensors[0].Shape(), []int{len(b.Indices), w}; !slices.Equal(got, want) {
				t.Fatalf("input shape %v, want %v", got, want)
			}
			for k, i := range b.Indices {
				if r.y[k] != int32(i) || r.x[k*w] != float32(i*w) || r.x[k*w+w-1] != float32(i*w+w-1) {
					t.Fatalf("example %d of the batch is not dataset example %d: x %v, y %v", k, i, r.x, r.y)
				}
			}
			out = append(out, r)
		})
	}
	return out
}

func TestPermutationIsFixed(t *testing.T) {
	// Pinned, so that checkpoints taken with one Go release resume on
	// another: the values come from testdata/permutation.py, an
	// independent implementation of the documented algorithm.
	got := Permutation(1, 0, 10)
	want := []int{7, 6, 1, 3, 2, 4, 8, 9, 0, 5}
	if !slices.Equal(got, want) {
		t.Fatalf("Permutation(1, 0, 10) = %v, want %v: the documented generator changed", got, want)
	}
	if got, want := Permutation(42, 3, 12), []int{11, 9, 1, 4, 3, 2, 7, 6, 5, 0, 10, 8}; !slices.Equal(got, want) {
		t.Fatalf("Permutation(42, 3, 12) = %v, want %v", got, want)
	}
	if !slices.Equal(Permutation(1, 0, 10), got) {
		t.Fatal("Permutation is not a pure function of its arguments")
	}
	if slices.Equal(Permutation(1, 1, 10), got) || slices.Equal(Permutation(2, 0, 10), got) {
		t.Fatal("another epoch or seed gives the same order")
	}
	for _, n := range []int{0, 1, 7, 1000} {
		p := slices.Sorted(slices.Values(Permutation(9, 3, n)))
		for i, v := range p {
			if v != i {
				t.Fatalf("Permutation(9, 3, %d) is not a permutation", n)
			}
		}
	}
}

func TestPermutationIsUniform(t *testing.T) {
	// Each of 5 examples lands in each of 5 positions with frequency 1/5.
	const n, trials = 5, 20000
	var count [n][n]int
	for s := range trials {
		for pos, i := range Permutation(uint64(s), s%3, n) {
			count[i][pos]++
		}
	}
	for i := range n {
		for pos := range n {
			if f := float64(count[i][pos]) / trials; f < 0.19 || f > 0.21 {
				t.Errorf("example %d at position %d with frequency %.4f, want 0.2", i, pos, f)
			}
		}
	}
}

func TestLoaderEpochs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		batches []int // sizes of one epoch's batches
	}{
		{"in order", Config{BatchSize: 3}, []int{3, 3, 3, 1}},
		{"shuffled", Config{BatchSize: 3, Shuffle: true, Seed: 7}, []int{3, 3, 3, 1}},
		{"drop last", Config{BatchSize: 3, Shuffle: true, Seed: 7, DropLast: true}, []int{3, 3, 3}},
		{"one batch", Config{BatchSize: 20, Prefetch: 1}, []int{10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoader(t, numbered(t, 10, 2), tc.cfg)
			if l.BatchesPerEpoch() != len(tc.batches) {
				t.Errorf("BatchesPerEpoch = %d, want %d", l.BatchesPerEpoch(), len(tc.batches))
			}
			var orders [][]int
			for epoch := range 3 {
				recs := take(t, l, len(tc.batches)+1, 2)
				if recs[len(tc.batches)] != nil {
					t.Fatalf("epoch %d did not end after %d batches", epoch, len(tc.batches))
				}
				var order []int
				for k, r := range recs[:len(tc.batches)] {
					if len(r.idx) != tc.batches[k] || r.epoch != epoch || r.pos != len(order) {
						t.Fatalf("epoch %d batch %d: %d examples, epoch %d, position %d", epoch, k, len(r.idx), r.epoch, r.pos)
					}
					order = append(order, r.idx...)
				}
				want := Permutation(tc.cfg.Seed, epoch, 10)
				if !tc.cfg.Shuffle {
					want = identity(10)
				}
				if !slices.Equal(order, want[:len(order)]) {
					t.Fatalf("epoch %d visits %v, want %v", epoch, order, want)
				}
				orders = append(orders, order)
				if st := l.State(); st.Epoch != epoch+1 || st.Position != 0 {
					t.Fatalf("state after epoch %d: %+v", epoch, st)
				}
			}
			if tc.cfg.Shuffle && slices.Equal(orders[0], orders[1]) {
				t.Error("two epochs in the same order")
			}
		})
	}
}

// Stopping mid-epoch, restoring the state into a fresh loader and going
// on gives exactly the batches of an uninterrupted run, across epochs.
func TestLoaderRestoreContinuesIdentically(t *testing.T) {
	cfg := Config{BatchSize: 4, Shuffle: true, Seed: 42}
	const steps = 20 // 3 batches and an end per epoch of 11: five epochs
	whole := take(t, newLoader(t, numbered(t, 11, 3), cfg), steps, 3)
	for _, cut := range []int{1, 2, 3, 4, 6, 13} {
		first := newLoader(t, numbered(t, 11, 3), cfg)
		got := take(t, first, cut, 3)
		st := first.State()
		first.Close()
		resumed := newLoader(t, numbered(t, 11, 3), Config{BatchSize: 4, Shuffle: true, Seed: 999})
		if err := resumed.Restore(st); err != nil {
			t.Fatal(err)
		}
		got = append(got, take(t, resumed, steps-cut, 3)...)
		for i := range whole {
			a, b := whole[i], got[i]
			if (a == nil) != (b == nil) || a != nil && (a.epoch != b.epoch || a.pos != b.pos ||
				!slices.Equal(a.idx, b.idx) || !slices.Equal(a.x, b.x) || !slices.Equal(a.y, b.y)) {
				t.Fatalf("cut after %d steps (state %+v): step %d differs: %+v, uninterrupted %+v", cut, st, i, b, a)
			}
		}
	}
}

func TestLoaderRestoreWhileRunning(t *testing.T) {
	l := newLoader(t, numbered(t, 9, 1), Config{BatchSize: 2, Shuffle: true, Seed: 3})
	take(t, l, 2, 1)
	st := l.State()
	after := take(t, l, 3, 1)
	if err := l.Restore(st); err != nil {
		t.Fatal(err)
	}
	again := take(t, l, 3, 1)
	for i := range after {
		if !slices.Equal(after[i].idx, again[i].idx) {
			t.Fatalf("after Restore, batch %d is %v, was %v", i, again[i].idx, after[i].idx)
		}
	}
}

func TestLoaderErrors(t *testing.T) {
	ds := numbered(t, 5, 1)
	f64, err := NewInMemory(Col([]float64{1, 2}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ds   Dataset
		cfg  Config
		kind error
		says string
	}{
		{"nil dataset", nil, Config{BatchSize: 1}, tensor.ErrArgument, "nil dataset"},
		{"batch size 0", ds, Config{}, tensor.ErrArgument, "batch size 0 < 1"},
		{"negative batch size", ds, Config{BatchSize: -2}, tensor.ErrArgument, "batch size -2 < 1"},
		{"negative prefetch", ds, Config{BatchSize: 1, Prefetch: -1}, tensor.ErrArgument, "Prefetch"},
		{"no batch with drop-last", ds, Config{BatchSize: 6, DropLast: true}, tensor.ErrArgument, "leaves no batch"},
		{"empty dataset", &TextWindows{seq: []byte("ab"), length: 4, stride: 1}, Config{BatchSize: 1}, tensor.ErrArgument, "empty dataset"},
		{"no such GPU", ds, Config{BatchSize: 1, Device: tensor.GPU(99)}, tensor.ErrDevice, "gpu:99"},
		{"float64 to a GPU", f64, Config{BatchSize: 1, Device: tensor.GPU(0)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLoader(tc.ds, tc.cfg)
			if tc.kind == nil { // float64 to a GPU: ErrDType if gpu:0 opens, ErrDevice if not
				if !errors.Is(err, tensor.ErrDType) && !errors.Is(err, tensor.ErrDevice) {
					t.Fatalf("got %v, want ErrDType or ErrDevice", err)
				}
				return
			}
			var te *tensor.Error
			if l != nil || !errors.As(err, &te) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a *tensor.Error wrapping %v that says %q", err, tc.kind, tc.says)
			}
			if !strings.HasPrefix(err.Error(), "tensor.data.NewLoader: ") {
				t.Errorf("error %q does not name data.NewLoader", err)
			}
		})
	}
}

func TestLoaderRestoreErrors(t *testing.T) {
	l := newLoader(t, numbered(t, 10, 1), Config{BatchSize: 3, DropLast: true})
	good := l.State()
	for _, st := range []State{
		{Examples: 11},
		{Examples: 10, Shuffle: true},
		{Examples: 10, Epoch: -1},
		{Examples: 10, Position: 10}, // drop-last epochs hold 9
		{Examples: 10, Position: -1},
	} {
		if err := l.Restore(st); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("Restore(%+v) = %v, want ErrArgument", st, err)
		}
	}
	if l.State() != good {
		t.Errorf("a refused Restore changed the state to %+v", l.State())
	}
	l.Close()
	l.Close()
	if err := l.Restore(good); !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Restore after Close = %v, want ErrArgument", err)
	}
	err := tensor.Catch(func() { l.Next() })
	if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Next after Close: %v, want ErrArgument saying closed", err)
	}
}

// producers counts the goroutines running a Loader's producer.
func producers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "data.(*plan).produce(")
}

// waitProducers waits up to a second for at most want producers.
func waitProducers(want int) int {
	n := producers()
	for i := 0; i < 100 && n > want; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		n = producers()
	}
	return n
}

func TestLoaderCloseStopsItsGoroutine(t *testing.T) {
	base := waitProducers(0)
	l := newLoader(t, numbered(t, 100, 4), Config{BatchSize: 3, Shuffle: true})
	take(t, l, 2, 4) // the producer now waits with a full queue
	if n := producers(); n != base+1 {
		t.Fatalf("%d producers running, want %d", n, base+1)
	}
	l.Close()
	if n := producers(); n != base {
		t.Fatalf("%d producers after Close, want %d", n, base)
	}
}

func TestLoaderDroppedWithoutCloseStops(t *testing.T) {
	base := waitProducers(0)
	func() {
		l, err := NewLoader(numbered(t, 100, 4), Config{BatchSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		l.Next()
	}()
	if n := waitProducers(base); n != base {
		t.Fatalf("%d producers after the loader was dropped, want %d", n, base)
	}
}
