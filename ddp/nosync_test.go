package ddp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// TestConcurrentNoSyncAccumulates: two ranks that each accumulate two
// micro-batches, the first under NoSync, take the step one process takes
// on the union of the four, and the NoSync passes communicate nothing.
func TestConcurrentNoSyncAccumulates(t *testing.T) {
	const world, micro, accSteps = 2, 2, 3
	params := make([][][]float32, world)
	spawn(t, world, func(rank int, g ddp.Group, c *tensor.Context) error {
		var log []string
		model := mlp(sizes, uint64(7+rank), tensor.CPU, c)
		r, err := ddp.New(model, recordingGroup{g, &log}, ddp.Options{})
		if err != nil {
			return err
		}
		opt := optim.NewSGD(nn.Parameters(model), optim.LR(0.1), optim.Momentum(0.9))
		idx := shardBatches(len(problem.y), perRank, micro*accSteps, data.Shard{Rank: rank, World: world})
		for step := range accSteps {
			c.Scope(func() {
				loss := func(k int) *tensor.Tensor {
					x, y := problem.batch(idx[micro*step+k], tensor.CPU, c)
					return nn.CrossEntropy(model.Forward(x), y).DivScalar(micro)
				}
				r.NoSync(func() {
					before := len(log)
					err = r.Backward(loss(0))
					if err == nil && len(log) != before {
						err = fmt.Errorf("NoSync: collectives %v", log[before:])
					}
				})
				if err == nil {
					err = r.Backward(loss(1))
				}
				opt.Step()
				opt.ZeroGrad()
			})
			if err != nil {
				return fmt.Errorf("step %d: %w", step, err)
			}
		}
		params[rank] = values(nn.Parameters(model))
		return nil
	})
	if t.Failed() {
		return
	}
	c := tensor.NewContext()
	model := mlp(sizes, 7, tensor.CPU, c)
	opt := optim.NewSGD(nn.Parameters(model), optim.LR(0.1), optim.Momentum(0.9))
	idx := shardBatches(len(problem.y), world*micro*perRank, accSteps, data.Shard{})
	for step := range accSteps {
		c.Scope(func() {
			x, y := problem.batch(idx[step], tensor.CPU, c)
			autograd.Backward(nn.CrossEntropy(model.Forward(x), y))
			opt.Step()
			opt.ZeroGrad()
		})
	}
	if d := bitwiseEqual(params[0], params[1]); d != "" {
		t.Errorf("the ranks' parameters differ: %s", d)
	}
	if d := firstDifference(params[0], values(nn.Parameters(model)), approx.Rel1(1e-5)); d != "" {
		t.Errorf("two ranks accumulating two micro-batches and one process on their union differ: %s", d)
	}
}

// TestConcurrentUnusedParameters: a parameter the loss does not use is
// an ErrUnusedParameter naming it on the rank that left it out, after a
// step whose collectives completed on every rank; with
// FindUnusedParameters it is no error, a parameter no rank used keeps a
// nil Grad, and one that only rank 0 used gets half its gradient.
func TestConcurrentUnusedParameters(t *testing.T) {
	for _, find := range []bool{false, true} {
		t.Run(fmt.Sprintf("FindUnusedParameters=%v", find), func(t *testing.T) {
			extraGrads := make([][][]float32, 2)
			spawn(t, 2, func(rank int, g ddp.Group, c *tensor.Context) error {
				model := mlp([]int{6, 8, 4}, 3, tensor.CPU, c)
				spare := nn.NewLinear(4, 4, tensor.In(c)) // used by no rank
				extra := nn.NewLinear(4, 4, tensor.In(c)) // used by rank 0 alone
				both := nn.NewSequential(model, spare, extra)
				r, err := ddp.New(both, g, ddp.Options{FindUnusedParameters: find, BucketBytes: 64})
				if err != nil {
					return err
				}
				x, y := problem.batch([]int{0, 1, 2, 3}, tensor.CPU, c)
				out := model.Forward(x)
				if rank == 0 {
					out = extra.Forward(out)
				}
				err = r.Backward(nn.CrossEntropy(out, y))
				unused := "1.weight, 1.bias"
				if rank == 1 {
					unused += ", 2.weight, 2.bias"
				}
				var e *ddp.Error
				switch {
				case !find && (!errors.As(err, &e) || !errors.Is(err, ddp.ErrUnusedParameter) || e.Param != "1.weight" ||
					e.Rank != rank || !strings.Contains(e.Detail, "parameters "+unused+" took")):
					return fmt.Errorf("Backward = %v, want an ErrUnusedParameter naming %s", err, unused)
				case find && err != nil:
					return err
				case find && (spare.Weight.Grad() != nil || spare.Bias.Grad() != nil):
					return fmt.Errorf("a parameter no rank used has a gradient")
				case find && extra.Weight.Grad() == nil:
					return fmt.Errorf("a parameter rank 0 used has no gradient on rank %d", rank)
				case find:
					extraGrads[rank] = values([]*tensor.Tensor{extra.Weight.Grad(), model.Layers[0].(*nn.LinearLayer).Weight.Grad()})
				}
				return nil
			})
			if d := bitwiseEqual(extraGrads[0], extraGrads[1]); find && d != "" {
				t.Errorf("the ranks' gradients differ: %s", d)
			}
		})
	}
}

// TestBackwardOutsideReplicaPanics: autograd.Backward on a replica's
// parameters outside Backward and NoSync panics with ErrAutograd, rather
// than leave each rank its own gradients.
func TestBackwardOutsideReplicaPanics(t *testing.T) {
	c := tensor.NewContext()
	model := mlp(sizes, 1, tensor.CPU, c)
	r, err := ddp.New(model, fakeGroup{rank: 0, size: 2}, ddp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, y := problem.batch([]int{0, 1}, tensor.CPU, c)
	err = tensor.Catch(func() { autograd.Backward(nn.CrossEntropy(model.Forward(x), y)) })
	if err == nil || !strings.Contains(err.Error(), "outside Replica.Backward") {
		t.Errorf("autograd.Backward outside Replica.Backward: %v, want a panic with ErrAutograd", err)
	}
	r.NoSync(func() { autograd.Backward(nn.CrossEntropy(model.Forward(x), y)) })
	if err := r.Backward(nn.CrossEntropy(model.Forward(x), y)); err != nil {
		t.Errorf("Backward after the panic: %v", err)
	}
}

// TestCloseTakesTheHooksOff: after Close the model trains alone with
// autograd.Backward, and the closed Replica's Backward is an error.
func TestCloseTakesTheHooksOff(t *testing.T) {
	c := tensor.NewContext()
	model := mlp(sizes, 1, tensor.CPU, c)
	r, err := ddp.New(model, fakeGroup{rank: 0, size: 2}, ddp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r.Close() // idempotent
	x, y := problem.batch([]int{0, 1}, tensor.CPU, c)
	if err := tensor.Catch(func() { autograd.Backward(nn.CrossEntropy(model.Forward(x), y)) }); err != nil {
		t.Fatalf("autograd.Backward after Close: %v", err)
	}
	for _, p := range nn.Parameters(model) {
		if p.Grad() == nil {
			t.Fatal("a parameter has no gradient after autograd.Backward")
		}
	}
	if err := r.Backward(nn.CrossEntropy(model.Forward(x), y)); !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Backward of a closed Replica: %v, want ErrArgument saying it is closed", err)
	}
}
