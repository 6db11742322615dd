package ddp_test

import (
	"math"
	"os"
	"testing"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// The tests' training problem: an MLP over a dataset dealt by
// data.Shard, per-rank batch perRank.
var (
	sizes   = []int{6, 16, 12, 4}
	problem = newDataset(96, 6, 4)
)

const (
	perRank = 4
	steps   = 6
)

// trainRanks trains one replica per device of devs, each rank on its own
// goroutine (RunLocal), and returns each rank's history and its buckets
// after New.
func trainRanks(t *testing.T, devs []tensor.Device, opts ddp.Options) ([]history, [][][]string) {
	t.Helper()
	world := len(devs)
	hs := make([]history, world)
	buckets := make([][][]string, world)
	err := ddp.RunLocal(devs, testTimeout, func(rank int, dev tensor.Device, g ddp.Group, c *tensor.Context) error {
		model := mlp(sizes, uint64(100+rank), dev, c) // New must replace rank 1's draw by rank 0's
		r, err := ddp.New(model, g, opts)
		if err != nil {
			return err
		}
		buckets[rank] = r.Buckets()
		idx := shardBatches(len(problem.y), perRank, steps, data.Shard{Rank: rank, World: world})
		hs[rank], err = train(model, r, c, func(step int) (x, y *tensor.Tensor) {
			return problem.batch(idx[step], dev, c)
		}, steps)
		return err
	})
	if err != nil {
		t.Error(err)
	}
	return hs, buckets
}

// trainAlone trains the model of rank 0 in one process on the union of
// the ranks' batches (batch world·perRank), on the CPU.
func trainAlone(t *testing.T, world int) history {
	t.Helper()
	c := tensor.NewContext()
	model := mlp(sizes, 100, tensor.CPU, c)
	idx := shardBatches(len(problem.y), world*perRank, steps, data.Shard{})
	h, err := train(model, nil, c, func(step int) (x, y *tensor.Tensor) {
		return problem.batch(idx[step], tensor.CPU, c)
	}, steps)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkAsOneProcess checks that the ranks' replicas are bitwise equal
// after every step (want bitwise) or within 1e-6, and that the mean of
// their losses and their parameters match one process training on the
// union of their batches within 1e-5 relative.
func checkAsOneProcess(t *testing.T, hs []history, alone history, bitwise bool) {
	t.Helper()
	for step := range steps {
		for rank := 1; rank < len(hs); rank++ {
			if d := bitwiseEqual(hs[0].grads[step], hs[rank].grads[step]); d != "" {
				t.Errorf("step %d: the gradients of ranks 0 and %d differ: %s", step, rank, d)
			}
			diff := bitwiseEqual(hs[0].params[step], hs[rank].params[step])
			if !bitwise {
				diff = firstDifference(hs[0].params[step], hs[rank].params[step], approx.Rel1(1e-6))
			}
			if diff != "" {
				t.Errorf("step %d: the parameters of ranks 0 and %d differ: %s", step, rank, diff)
			}
		}
		mean := 0.0
		for _, h := range hs {
			mean += h.losses[step] / float64(len(hs))
		}
		if want := alone.losses[step]; math.Abs(mean-want) > 1e-5*math.Abs(want) {
			t.Errorf("step %d: the ranks' mean loss is %.9g, one process with their union batch has %.9g", step, mean, want)
		}
		if d := firstDifference(hs[0].params[step], alone.params[step], approx.Rel1(1e-5)); d != "" {
			t.Errorf("step %d: rank 0's parameters and one process's differ: %s", step, d)
		}
	}
}

// TestConcurrentRanksTrainAsOneProcess: two CPU ranks in one process,
// batch 4 each, train step for step as one process with batch 8, and
// their parameters are bitwise equal after every step.
func TestConcurrentRanksTrainAsOneProcess(t *testing.T) {
	hs, _ := trainRanks(t, []tensor.Device{tensor.CPU, tensor.CPU}, ddp.Options{})
	if t.Failed() {
		return
	}
	checkAsOneProcess(t, hs, trainAlone(t, 2), true)
}

// TestConcurrentThreeRanks: the mean over three ranks, whose division
// by 3 is not exact.
func TestConcurrentThreeRanks(t *testing.T) {
	hs, _ := trainRanks(t, []tensor.Device{tensor.CPU, tensor.CPU, tensor.CPU}, ddp.Options{BucketBytes: 256})
	if t.Failed() {
		return
	}
	checkAsOneProcess(t, hs, trainAlone(t, 3), true)
}

// TestConcurrentRanksOnCPUAndGPU: one rank on the CPU and one on a GPU
// (lavapipe in CI) average to bitwise-equal gradients. Their parameters
// agree within 1e-6 rather than bitwise: the optimizer's update runs on
// two kinds of kernels. TestConcurrentRanksOnTwoGPUs gives bits.
func TestConcurrentRanksOnCPUAndGPU(t *testing.T) {
	gpu := devtest.MustGPU(t)
	hs, _ := trainRanks(t, []tensor.Device{tensor.CPU, gpu}, ddp.Options{BucketBytes: 1024})
	if t.Failed() {
		return
	}
	checkAsOneProcess(t, hs, trainAlone(t, 2), false)
}

// TestConcurrentRanksOnTwoGPUs: two ranks on two GPU devices of one
// process (two logical GPUs of one adapter, lavapipe in CI: see
// TestMain) train step for step as one process with their union batch,
// and their parameters are bitwise equal after every step.
func TestConcurrentRanksOnTwoGPUs(t *testing.T) {
	gpu := devtest.MustGPU(t)
	second := tensor.GPU(gpu.Index + 1)
	if err := tensor.Available(second); err != nil {
		t.Fatalf("a second logical GPU (%s=%s): %v", tensor.LogicalGPUsEnv, os.Getenv(tensor.LogicalGPUsEnv), err)
	}
	hs, _ := trainRanks(t, []tensor.Device{gpu, second}, ddp.Options{BucketBytes: 1024})
	if t.Failed() {
		return
	}
	checkAsOneProcess(t, hs, trainAlone(t, 2), true)
}

// TestBucketSizeDoesNotChangeResults: buckets of one parameter each and
// one bucket of all give the same bits, and the buckets take the
// parameters last first.
func TestBucketSizeDoesNotChangeResults(t *testing.T) {
	devs := []tensor.Device{tensor.CPU, tensor.CPU}
	tiny, tb := trainRanks(t, devs, ddp.Options{BucketBytes: 1})
	one, ob := trainRanks(t, devs, ddp.Options{})
	if t.Failed() {
		return
	}
	wantTiny := [][]string{{"4.bias"}, {"4.weight"}, {"2.bias"}, {"2.weight"}, {"0.bias"}, {"0.weight"}}
	if !equalBuckets(tb[0], wantTiny) || !equalBuckets(tb[1], wantTiny) {
		t.Errorf("BucketBytes 1: buckets %v, want %v", tb, wantTiny)
	}
	wantOne := [][]string{{"4.bias", "4.weight", "2.bias", "2.weight", "0.bias", "0.weight"}}
	if !equalBuckets(ob[0], wantOne) {
		t.Errorf("default BucketBytes: buckets %v, want %v", ob[0], wantOne)
	}
	for step := range steps {
		if d := bitwiseEqual(tiny[1].params[step], one[1].params[step]); d != "" {
			t.Errorf("step %d: tiny buckets and one bucket differ: %s", step, d)
		}
	}
	// A cap between the parameters' sizes groups them: 4.bias (16 bytes)
	// and 4.weight (192) fit in 250, and 2.bias (48) would take them past.
	spawn(t, 2, func(rank int, g ddp.Group, c *tensor.Context) error {
		r, err := ddp.New(mlp(sizes, 1, tensor.CPU, c), g, ddp.Options{BucketBytes: 250})
		if err != nil {
			return err
		}
		want := [][]string{{"4.bias", "4.weight"}, {"2.bias"}, {"2.weight"}, {"0.bias"}, {"0.weight"}}
		if got := r.Buckets(); !equalBuckets(got, want) {
			t.Errorf("BucketBytes 250: buckets %v, want %v", got, want)
		}
		return nil
	})
}

func equalBuckets(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
