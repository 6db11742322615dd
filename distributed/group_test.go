package distributed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// worldOfOne returns this process's group, asserting that no launcher
// started it, and closes it when the test ends.
func worldOfOne(t *testing.T) *Group {
	t.Helper()
	for _, v := range []string{envSize, envRank, envLocalRank, envLocalSize, "PMI_SIZE", "PMIX_RANK"} {
		t.Setenv(v, "")
	}
	g, err := Init()
	if err != nil {
		t.Fatalf("Init without a launcher: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if g.Rank() != 0 || g.Size() != 1 || g.LocalRank() != 0 || g.LocalSize() != 1 || g.MPI() {
		t.Fatalf("Init without a launcher gave %v", g)
	}
	return g
}

// TestWorldOfOne checks that every collective of a world of one is the
// identity, for each dtype on each device, views included.
func TestWorldOfOne(t *testing.T) {
	g := worldOfOne(t)
	if again, _ := Init(); again != g {
		t.Errorf("a second Init gave another group")
	}
	for _, dev := range devtest.Devices(t) {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
			if !dev.Holds(dt) {
				continue
			}
			want := []float64{1, -2, 3.5, 4, 0, 6}
			if dt == tensor.Int32 {
				want[2] = 3
			}
			mk := func() *tensor.Tensor {
				return tensor.From(want, []int{2, 3}, tensor.Of(dt), tensor.On(dev))
			}
			check := func(name string, got *tensor.Tensor, shape []int) {
				t.Helper()
				if got == nil {
					t.Errorf("%v %v %s: nil result", dev, dt, name)
					return
				}
				if !slices.Equal(got.Shape(), shape) || !slices.Equal(got.Float64s(), want) ||
					got.DType() != dt || got.Device() != dev {
					t.Errorf("%v %v %s = %v %v on %v %v, want %v %v", dev, dt, name, got.Shape(), got.DType(), got.Device(), got.Float64s(), shape, want)
				}
			}
			for _, op := range []ReduceOp{Sum, Mean, Max, Min} {
				if op == Mean && dt == tensor.Int32 {
					continue
				}
				x := mk()
				if err := g.AllReduce(x, op); err != nil {
					t.Errorf("%v %v AllReduce %v: %v", dev, dt, op, err)
				}
				check("AllReduce "+op.String(), x, []int{2, 3})
			}
			x := mk()
			if err := g.Broadcast(x, 0); err != nil {
				t.Errorf("%v %v Broadcast: %v", dev, dt, err)
			}
			check("Broadcast", x, []int{2, 3})
			y, err := g.AllGather(mk())
			if err != nil {
				t.Errorf("%v %v AllGather: %v", dev, dt, err)
			}
			check("AllGather", y, []int{2, 3})
			y, err = g.ReduceScatter(mk(), Sum)
			if err != nil {
				t.Errorf("%v %v ReduceScatter: %v", dev, dt, err)
			}
			check("ReduceScatter", y, []int{2, 3})
			w := g.AllReduceAsync(mk().T(), Max)
			if err := w.Wait(); err != nil || w.Result() == nil || !slices.Equal(w.Result().Shape(), []int{3, 2}) {
				t.Errorf("%v %v AllReduceAsync of a view: %v, result %v", dev, dt, err, w.Result())
			}
		}
		y, err := g.AllGather(tensor.Scalar(7, tensor.Float32, dev))
		if err != nil || !slices.Equal(y.Shape(), []int{1}) || y.Float64s()[0] != 7 {
			t.Errorf("%v AllGather of a 0-d tensor = %v, %v; want [7] of shape [1]", dev, y, err)
		}
	}
	if err := g.Barrier(); err != nil {
		t.Errorf("Barrier: %v", err)
	}
}

// TestArgumentErrors checks that unusable arguments are an *Error
// wrapping ErrArgument, naming the op and rank, not a panic.
func TestArgumentErrors(t *testing.T) {
	g := worldOfOne(t)
	f := tensor.Zeros([]int{3})
	released := tensor.Zeros([]int{3})
	released.Release()
	tests := []struct {
		name, op, detail string
		run              func() error
	}{
		{"nil", "AllReduce", "nil", func() error { return g.AllReduce(nil, Sum) }},
		{"bool", "AllReduce", "bool", func() error { return g.AllReduce(tensor.Zeros([]int{2}, tensor.Of(tensor.Bool)), Sum) }},
		{"mean of int32", "AllReduce", "Mean of int32", func() error {
			return g.AllReduce(tensor.Zeros([]int{2}, tensor.Of(tensor.Int32)), Mean)
		}},
		{"unknown op", "AllReduce", "unknown", func() error { return g.AllReduce(f, ReduceOp(9)) }},
		{"expanded", "AllReduce", "expanded view", func() error { return g.AllReduce(tensor.Zeros([]int{1}).Expand(4), Sum) }},
		{"released", "AllGather", "", func() error { _, err := g.AllGather(released); return err }},
		{"root", "Broadcast", "root 1", func() error { return g.Broadcast(f, 1) }},
		{"negative root", "Broadcast", "root -1", func() error { return g.Broadcast(f, -1) }},
		{"gather nil", "AllGather", "nil", func() error { _, err := g.AllGather(nil); return err }},
		{"scatter 0-d", "ReduceScatter", "0-d", func() error { _, err := g.ReduceScatter(tensor.Scalar(1, tensor.Float32, tensor.CPU), Sum); return err }},
	}
	for _, tt := range tests {
		err := tt.run()
		var e *Error
		if !errors.As(err, &e) || e.Op != tt.op || e.Rank != 0 || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("%s: error %v, want a distributed *Error of %s mentioning %q", tt.name, err, tt.op, tt.detail)
			continue
		}
		if tt.name == "released" {
			if !errors.Is(err, tensor.ErrReleased) {
				t.Errorf("%s: %v does not wrap tensor.ErrReleased", tt.name, err)
			}
		} else if !errors.Is(err, ErrArgument) {
			t.Errorf("%s: %v does not wrap ErrArgument", tt.name, err)
		}
	}
}

// TestClose checks that collectives after Close fail with ErrClosed,
// that Close waits for work in flight, and that a world of one can be
// made again.
func TestClose(t *testing.T) {
	g := worldOfOne(t)
	w := g.AllReduceAsync(tensor.Ones([]int{4}), Sum)
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !w.Done() || w.Wait() != nil {
		t.Errorf("work issued before Close: done %v, Wait %v", w.Done(), w.Wait())
	}
	if err := g.AllReduce(tensor.Ones([]int{4}), Sum); !errors.Is(err, ErrClosed) {
		t.Errorf("AllReduce after Close: %v, want ErrClosed", err)
	}
	if _, err := g.AllGather(tensor.Ones([]int{4})); !errors.Is(err, ErrClosed) {
		t.Errorf("AllGather after Close: %v, want ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	h := worldOfOne(t)
	if h == g {
		t.Errorf("Init after Close returned the closed group")
	}
}

// TestWaitElsewhere checks that Wait from a goroutine that does not
// hold the default context reports the tensor package's ErrContext as an
// error instead of panicking, and that the same work can then be waited
// for by its owner.
func TestWaitElsewhere(t *testing.T) {
	g := worldOfOne(t)
	var err error
	tensor.Scope(func() {
		w := g.AllGatherAsync(tensor.Ones([]int{2}))
		done := make(chan error)
		go func() { done <- w.Wait() }()
		err = <-done
	})
	if !errors.Is(err, tensor.ErrContext) {
		t.Errorf("Wait from another goroutine inside the owner's Scope: %v, want ErrContext", err)
	}
}

// ExampleError shows the form of a collective's error.
func ExampleError() {
	err := error(&Error{Op: "AllReduce", Rank: 1, Err: ErrMismatch,
		Detail: "shapes differ across ranks: this rank has float32 [3 4] (12 elements); ranks hold 12 to 20 elements"})
	fmt.Println(err)
	fmt.Println(errors.Is(err, ErrMismatch))
	// Output:
	// distributed: rank 1: AllReduce: ranks disagree: shapes differ across ranks: this rank has float32 [3 4] (12 elements); ranks hold 12 to 20 elements
	// true
}
