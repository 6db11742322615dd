package distributed

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/tensor"
)

// checkMismatch calls collectives with arguments that differ across the
// ranks: every rank must return an error (ErrMismatch, or ErrArgument on
// the rank whose arguments were bad) naming the op and this rank's
// shape, and the ranks must stay in step for the next collective.
func checkMismatch(t *testing.T, g *Group) {
	r := g.Rank()
	tests := []struct {
		name   string
		run    func() error
		op     string
		detail string // in this rank's message
		bad    bool   // this rank's own arguments are invalid: ErrArgument
	}{
		{"shapes", func() error { return g.AllReduce(tensor.Zeros([]int{3 + r}), Sum) },
			"AllReduce", []string{"this rank has float32 [3] (3 elements); ranks hold 3 to 4 elements",
				"this rank has float32 [4] (4 elements); ranks hold 3 to 4 elements"}[r], false},
		{"same numel, other shape", func() error { return g.AllReduce(tensor.Zeros([]int{2 + 2*r, 6 - 3*r}), Sum) },
			"AllReduce", []string{"[2 6]", "[4 3]"}[r], false},
		{"dtypes", func() error {
			return g.AllReduce(tensor.Zeros([]int{3}, tensor.Of([]tensor.DType{tensor.Float32, tensor.Int32}[r])), Max)
		},
			"AllReduce", "dtypes differ", false},
		{"ops", func() error { return g.AllReduce(tensor.Zeros([]int{3}), []ReduceOp{Sum, Max}[r]) },
			"AllReduce", "reduce ops differ", false},
		{"collectives", func() error {
			if r == 0 {
				return g.AllReduce(tensor.Zeros([]int{3}), Sum)
			}
			return g.Broadcast(tensor.Zeros([]int{3}), 0)
		}, []string{"AllReduce", "Broadcast"}[r], "different collectives here (AllReduce and Broadcast", false},
		{"barrier and gather", func() error {
			if r == 0 {
				return g.Barrier()
			}
			_, err := g.AllGather(tensor.Zeros([]int{3}))
			return err
		}, []string{"Barrier", "AllGather"}[r], "different collectives", false},
		{"roots", func() error { return g.Broadcast(tensor.Zeros([]int{3}), r) }, "Broadcast", "roots differ", false},
		{"gather shapes", func() error { _, err := g.AllGather(tensor.Zeros([]int{2, 1 + r})); return err },
			"AllGather", []string{"[2 1]", "[2 2]"}[r], false},
		{"invalid on rank 1", func() error {
			dt := []tensor.DType{tensor.Float32, tensor.Bool}[r]
			return g.AllReduce(tensor.Zeros([]int{3}, tensor.Of(dt)), Sum)
		}, "AllReduce", []string{"another rank called AllReduce with invalid arguments", "bool tensors"}[r], r == 1},
		{"scatter not divisible on rank 0", func() error { _, err := g.ReduceScatter(tensor.Zeros([]int{3 + r}), Sum); return err },
			"ReduceScatter", []string{"not a multiple", "invalid arguments"}[r], r == 0},
	}
	for _, tt := range tests {
		err := tt.run()
		want := ErrMismatch
		if tt.bad {
			want = ErrArgument
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, want) || e.Op != tt.op || e.Rank != r || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("rank %d, %s: error %v; want an *Error of %s on rank %d wrapping %v and saying %q", r, tt.name, err, tt.op, r, want, tt.detail)
		}
	}
	// Still in step: a good collective works.
	x := tensor.Full([]int{4}, float64(r+1))
	if err := g.AllReduce(x, Sum); err != nil || x.Float64s()[3] != 3 {
		t.Errorf("rank %d: AllReduce after the mismatches: %v, %v; want 3s", r, err, x)
	}
}

// checkAsync checks that non-blocking collectives return before the
// communication ends, let the caller compute meanwhile, and give the
// right results when waited for in any order.
func checkAsync(t *testing.T, g *Group) {
	r := g.Rank()
	// Several in flight, waited for in reverse order.
	var ws []*Work
	var xs []*tensor.Tensor
	for k := range 4 {
		x := tensor.Full([]int{1000 * (k + 1)}, float64(k+r))
		xs = append(xs, x)
		ws = append(ws, g.AllReduceAsync(x, Sum))
	}
	gw := g.AllGatherAsync(tensor.Full([]int{2}, float64(r)))
	if err := gw.Wait(); err != nil || !slices.Equal(gw.Result().Float64s(), []float64{0, 0, 1, 1}) {
		t.Errorf("rank %d: AllGatherAsync behind four AllReduceAsync: %v, %v", r, err, gw.Result())
	}
	for k := 3; k >= 0; k-- {
		if err := ws[k].Wait(); err != nil || ws[k].Result() != xs[k] || xs[k].Float64s()[999] != float64(2*k+1) {
			t.Errorf("rank %d: AllReduceAsync %d: %v, %v; want %d", r, k, err, xs[k].Float64s()[999], 2*k+1)
		}
	}

	// Overlap: rank 1 joins late; rank 0's call returns at once and it
	// computes while the all-reduce waits for rank 1.
	const late = 400 * time.Millisecond
	if err := g.Barrier(); err != nil {
		t.Fatal(err)
	}
	if r == 1 {
		time.Sleep(late)
	}
	m := 1 << 20
	x := tensor.Full([]int{m}, float64(r+1))
	start := time.Now()
	w := g.AllReduceAsync(x, Sum)
	issued, done := time.Since(start), w.Done()
	a := tensor.Full([]int{128, 128}, 0.5)
	var products int
	for !w.Done() && time.Since(start) < 10*time.Second {
		a.MatMul(a).Sum().Item()
		products++
	}
	if err := w.Wait(); err != nil || x.Float64s()[m-1] != 3 {
		t.Errorf("rank %d: AllReduceAsync of %d: %v; want 3s", r, m, err)
	}
	if r == 0 {
		if issued > late/2 || done {
			t.Errorf("rank 0: AllReduceAsync took %v to return, done %v, while rank 1 had not joined", issued, done)
		}
		if products == 0 {
			t.Errorf("rank 0 computed nothing while the all-reduce waited %v for rank 1", time.Since(start))
		}
		t.Logf("rank 0: AllReduceAsync returned in %v; %d products computed while it waited for rank 1", issued, products)
	}
}
