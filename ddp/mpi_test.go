package ddp_test

import (
	"errors"
	"hash/fnv"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/distributed"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest/mpitest"
	"github.com/tessera-ml/tessera/tensor"
)

// childEnv marks this test binary started by mpirun from
// TestMPITrainsAsOneProcess.
const childEnv = "TESSERA_DDP_CHILD"

// TestMPITrainsAsOneProcess runs TestMPIChild as two processes under
// Open MPI's mpirun: through ddp.MPI they train as one process with their
// union batch, bitwise equal after every step, and a mismatched model is
// ErrMismatch naming rank 1. Without Open MPI it skips (fails when
// TESSERA_REQUIRE_MPI=1, as in CI).
func TestMPITrainsAsOneProcess(t *testing.T) {
	out, err, took := mpitest.Job{
		NP: 2, Flags: []string{"--tag-output"}, Env: []string{childEnv + "=1"},
		Args: []string{os.Args[0], "-test.run=^TestMPIChild$", "-test.v", "-test.count=1", "-test.timeout=60s"},
	}.Run(t)
	took = took.Round(time.Millisecond)
	if strings.Count(out, "MPI is not available") == 2 {
		t.Skipf("this build cannot reach MPI:\n%s", out)
	}
	if err != nil || strings.Count(out, "--- PASS: TestMPIChild") != 2 {
		t.Fatalf("mpirun -np 2 (%v): %v\n%s", took, err, out)
	}
	t.Logf("np=2 in %v", took)
}

// TestMPIChild is one rank of TestMPITrainsAsOneProcess; run alone it
// skips.
func TestMPIChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("a rank of TestMPITrainsAsOneProcess, started by mpirun")
	}
	g, err := distributed.Init()
	if errors.Is(err, distributed.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}()
	rank, world := g.Rank(), g.Size()
	c := tensor.NewContext()
	model := mlp(sizes, uint64(100+rank), tensor.CPU, c)
	r, err := ddp.New(model, ddp.MPI(g), ddp.Options{BucketBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	idx := shardBatches(len(problem.y), perRank, steps, data.Shard{Rank: rank, World: world})
	h, err := train(model, r, c, func(step int) (x, y *tensor.Tensor) { return problem.batch(idx[step], tensor.CPU, c) }, steps)
	if err != nil {
		t.Fatal(err)
	}
	alone := trainAlone(t, world)
	losses := tensor.From(h.losses, []int{steps}, tensor.In(c))
	if err := g.AllReduce(losses, distributed.Mean); err != nil {
		t.Fatal(err)
	}
	for step, mean := range losses.Float64s() {
		if want := alone.losses[step]; math.Abs(mean-want) > 1e-5*math.Abs(want) {
			t.Errorf("step %d: the ranks' mean loss is %.9g, one process with their union batch has %.9g", step, mean, want)
		}
		if d := firstDifference(h.params[step], alone.params[step], approx.Rel1(1e-5)); d != "" {
			t.Errorf("step %d: rank %d's parameters and one process's differ: %s", step, rank, d)
		}
		// The ranks' parameters hash alike: the maxima of the hash and
		// of its negation agree.
		hash := float64(bitsHash(h.params[step]))
		m := tensor.From([]float64{hash, -hash}, []int{2}, tensor.In(c))
		if err := g.AllReduce(m, distributed.Max); err != nil {
			t.Fatal(err)
		}
		if v := m.Float64s(); v[0] != -v[1] {
			t.Errorf("step %d: the ranks' parameters differ", step)
		}
	}
	_, err = ddp.New(mlp([]int{6, 16 - rank, 4}, 1, tensor.CPU, c), ddp.MPI(g), ddp.Options{})
	var e *ddp.Error
	if !errors.As(err, &e) || !errors.Is(err, ddp.ErrMismatch) || e.Rank != 1 || e.Param != "0.weight" {
		t.Errorf("New of mismatched models over MPI: %v, want ErrMismatch naming rank 1 and \"0.weight\"", err)
	}
}

// bitsHash hashes the bits of ps to 52 bits, which a float64 holds.
func bitsHash(ps [][]float32) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, p := range ps {
		for _, v := range p {
			u := math.Float32bits(v)
			b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
			h.Write(b[:])
		}
	}
	return h.Sum64() & (1<<52 - 1)
}
