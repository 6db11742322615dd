package distributed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestMPIChild is one rank of a job that TestMPI or TestMPIKilledRank
// starts under mpirun; run alone it skips.
func TestMPIChild(t *testing.T) {
	part := os.Getenv(childEnv)
	if part == "" {
		t.Skip("a rank of the np=2 tests (TestMPI), started by mpirun")
	}
	g, err := Init()
	if !cgoEnabled {
		// Built without cgo: under mpirun, Init says what is missing.
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install libopenmpi-dev openmpi-bin") {
			t.Fatalf("Init under mpirun without cgo: %v, want ErrUnavailable saying how to get MPI", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Init under mpirun: %v", err)
	}
	if g.Size() != 2 || !g.MPI() || g.LocalSize() != 2 || g.LocalRank() != g.Rank() {
		t.Fatalf("Init under mpirun -np 2 on one machine gave %v", g)
	}
	switch part {
	case "collectives":
		devs := devtest.Devices(t)
		t.Logf("rank %d: %v on %v", g.Rank(), g, devs)
		for _, dev := range devs {
			checkCollectives(t, g, dev)
		}
		checkMismatch(t, g)
		checkAsync(t, g)
	case "kill", "exit", "close", "abort":
		rankEnds(t, g, part)
	default:
		t.Fatalf("%s=%q: no such part", childEnv, part)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if h, err := Init(); h != nil || !errors.Is(err, ErrClosed) {
		t.Errorf("Init after Close under MPI: %v, %v; want ErrClosed", h, err)
	}
	if err := g.Barrier(); !errors.Is(err, ErrClosed) {
		t.Errorf("Barrier after Close: %v, want ErrClosed", err)
	}
}

// value is rank r's element i: multiples of 1/4 below 2^10 in magnitude,
// so that sums and means of two are exact in float32; their signs differ
// across ranks, so Max and Min differ from either input.
func value(r, i int, dt tensor.DType) float64 {
	v := float64((i*7+r*11)%23-11) + 100*float64(i%5)
	if dt != tensor.Int32 {
		v /= 4
	}
	return v
}

func values(r, n int, dt tensor.DType) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = value(r, i, dt)
	}
	return out
}

// reduce is the float64 reference of op over every rank's element i.
func reduce(op ReduceOp, size, i int, dt tensor.DType) float64 {
	acc := value(0, i, dt)
	for r := 1; r < size; r++ {
		v := value(r, i, dt)
		switch op {
		case Sum, Mean:
			acc += v
		case Max:
			acc = max(acc, v)
		case Min:
			acc = min(acc, v)
		}
	}
	if op == Mean {
		acc /= float64(size)
	}
	return acc
}

// same reports the first element where got differs from want, exactly.
func same(t *testing.T, what string, got *tensor.Tensor, shape []int, want []float64) {
	t.Helper()
	if got == nil || !slices.Equal(got.Shape(), shape) {
		t.Errorf("%s: got %v, want shape %v", what, got, shape)
		return
	}
	g := got.Float64s()
	for i := range want {
		if g[i] != want[i] {
			t.Errorf("%s: element %d is %v, want %v", what, i, g[i], want[i])
			return
		}
	}
}

// checkCollectives checks every collective on dev for each dtype it
// holds, against float64 references of the ranks' known inputs.
func checkCollectives(t *testing.T, g *Group, dev tensor.Device) {
	r, n := g.Rank(), g.Size()
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
		if !dev.Holds(dt) {
			continue
		}
		at := fmt.Sprintf("rank %d, %v %v", r, dev, dt)
		mk := func(rank int, shape ...int) *tensor.Tensor {
			return tensor.From(values(rank, prod(shape), dt), shape, tensor.Of(dt), tensor.On(dev))
		}
		for _, op := range []ReduceOp{Sum, Mean, Max, Min} {
			if op == Mean && !dt.IsFloat() {
				continue
			}
			want := make([]float64, 5*7)
			for i := range want {
				want[i] = reduce(op, n, i, dt)
			}
			x := mk(r, 5, 7)
			if err := g.AllReduce(x, op); err != nil {
				t.Errorf("%s: AllReduce %v: %v", at, op, err)
			}
			same(t, at+": AllReduce "+op.String(), x, []int{5, 7}, want)

			// Into a transposed view: the base holds the result transposed.
			base := tensor.Zeros([]int{7, 5}, tensor.Of(dt), tensor.On(dev))
			view := base.T()
			view.CopyFrom(mk(r, 5, 7))
			if err := g.AllReduceAsync(view, op).Wait(); err != nil {
				t.Errorf("%s: AllReduceAsync %v of a view: %v", at, op, err)
			}
			same(t, at+": AllReduce "+op.String()+" of a view", base.T().Contiguous(), []int{5, 7}, want)
		}

		x := mk(r, 3, 4)
		if err := g.Broadcast(x, 1); err != nil {
			t.Errorf("%s: Broadcast: %v", at, err)
		}
		same(t, at+": Broadcast from 1", x, []int{3, 4}, values(1, 12, dt))

		y, err := g.AllGather(mk(r, 3, 4))
		if err != nil {
			t.Errorf("%s: AllGather: %v", at, err)
		}
		var all []float64
		for k := range n {
			all = append(all, values(k, 12, dt)...)
		}
		same(t, at+": AllGather", y, []int{3 * n, 4}, all)

		for _, op := range []ReduceOp{Sum, Mean, Max, Min} {
			if op == Mean && !dt.IsFloat() {
				continue
			}
			y, err := g.ReduceScatter(mk(r, 2*n, 3), op)
			if err != nil {
				t.Errorf("%s: ReduceScatter %v: %v", at, op, err)
			}
			var want []float64
			for i := r * 6; i < (r+1)*6; i++ {
				want = append(want, reduce(op, n, i, dt))
			}
			same(t, at+": ReduceScatter "+op.String(), y, []int{2, 3}, want)
		}
	}
	// A parameter (requires grad, grad mode on) takes a broadcast, as at
	// the start of data-parallel training.
	p := tensor.Full([]int{2, 3}, float64(r+1), tensor.On(dev)).SetRequiresGrad(true)
	if err := g.Broadcast(p, 0); err != nil {
		t.Errorf("rank %d, %v: Broadcast into a parameter: %v", r, dev, err)
	}
	same(t, fmt.Sprintf("rank %d, %v: Broadcast into a parameter", r, dev), p, []int{2, 3}, []float64{1, 1, 1, 1, 1, 1})
	if !p.RequiresGrad() || !p.IsLeaf() {
		t.Errorf("rank %d, %v: the parameter no longer requires grad or is no longer a leaf after Broadcast", r, dev)
	}
	// Sums that round give every rank the same bits.
	noisy := tensor.Randn([]int{4096}, tensor.WithGenerator(tensor.NewGenerator(uint64(1+r))), tensor.On(dev)).MulScalar(1e3)
	if err := g.AllReduce(noisy, Sum); err != nil {
		t.Errorf("rank %d, %v: AllReduce of random values: %v", r, dev, err)
	}
	if all, err := g.AllGather(noisy); err != nil {
		t.Errorf("rank %d, %v: AllGather: %v", r, dev, err)
	} else {
		f := all.Float32s()
		for i := range 4096 {
			if math.Float32bits(f[i]) != math.Float32bits(f[4096+i]) {
				t.Errorf("rank %d, %v: element %d of the sum is %v on rank 0, %v on rank 1", r, dev, i, f[i], f[4096+i])
				break
			}
		}
	}
	// Empty tensors move nothing, on every rank alike.
	z := tensor.Zeros([]int{0, 3}, tensor.On(dev))
	if err := g.AllReduce(z, Sum); err != nil {
		t.Errorf("rank %d, %v: AllReduce of [0 3]: %v", r, dev, err)
	}
	if y, err := g.AllGather(z); err != nil || !slices.Equal(y.Shape(), []int{0, 3}) {
		t.Errorf("rank %d, %v: AllGather of [0 3]: %v, %v", r, dev, y, err)
	}
	// A larger all-reduce, past any small-message path of MPI.
	m := 1 << 18
	if dev.Kind == tensor.KindGPU {
		m = 1 << 16
	}
	want := make([]float64, m)
	for i := range want {
		want[i] = reduce(Sum, n, i, tensor.Float32)
	}
	x := tensor.From(values(r, m, tensor.Float32), []int{m}, tensor.Of(tensor.Float32), tensor.On(dev))
	if err := g.AllReduce(x, Sum); err != nil {
		t.Errorf("rank %d, %v: AllReduce of %d: %v", r, dev, m, err)
	}
	same(t, fmt.Sprintf("rank %d, %v: AllReduce of %d", r, dev, m), x, []int{m}, want)
	if err := g.Barrier(); err != nil {
		t.Errorf("rank %d: Barrier: %v", r, err)
	}
}

func prod(shape []int) int {
	p := 1
	for _, d := range shape {
		p *= d
	}
	return p
}

// rankEnds is part kill, exit, abort or close of TestMPIRankEnds: after
// a barrier, rank 1 is killed (SIGKILL), exits with status 3, calls
// Abort(7), or closes its group and exits, while rank 0 waits for it in
// an AllReduce.
func rankEnds(t *testing.T, g *Group, part string) {
	if err := g.Barrier(); err != nil {
		t.Fatal(err)
	}
	if g.Rank() == 1 {
		switch part {
		case "kill":
			fmt.Println("rank 1 kills itself")
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				p.Kill() // SIGKILL on Unix
			}
			time.Sleep(time.Minute)
		case "exit":
			fmt.Println("rank 1 exits with status 3")
			os.Exit(3)
		case "abort":
			fmt.Println("rank 1 aborts with status 7")
			g.Abort(7)
		}
		fmt.Printf("rank 1 closes: %v\n", g.Close())
		time.Sleep(500 * time.Millisecond) // for rank 0 to say what it got
		os.Exit(0)
	}
	err := g.AllReduce(tensor.Ones([]int{1 << 10}), Sum)
	fmt.Printf("rank 0: AllReduce returned %v\n", err)
	if part != "close" || !errors.Is(err, ErrMismatch) {
		t.Errorf("rank 0: AllReduce returned %v while rank 1 did not take part", err)
	}
	time.Sleep(time.Minute) // until mpirun ends the job
}
