package tensor_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// Goroutines that run loops of their own must not interfere (DESIGN.md,
// "Goroutines"): each has its Context, with its Scopes and grad mode.
// CI runs these tests under -race.

const concSteps = 25

// task is a small classification problem drawn from seed: 48 samples of
// 12 features, 3 classes, on dev, in context c.
func task(seed uint64, dev tensor.Device, c *tensor.Context) (x, y *tensor.Tensor) {
	g := tensor.NewGenerator(seed)
	x = tensor.Randn([]int{48, 12}, tensor.WithGenerator(g), tensor.On(dev), tensor.In(c)).Keep()
	w := tensor.Randn([]int{12, 3}, tensor.WithGenerator(g), tensor.On(dev), tensor.In(c))
	y = x.MatMul(w).ArgMaxDim(1, false).Keep()
	w.Release()
	return x, y
}

// train builds an MLP from seed in context c (nil: the default context)
// and trains it with Adam for concSteps steps, one Scope per step,
// returning the loss of every step. batch, when not nil, supplies each
// step's input instead of the fixed x.
func train(t *testing.T, seed uint64, dev tensor.Device, c *tensor.Context, batch func(step int) *tensor.Tensor) []float64 {
	if c == nil {
		c = tensor.DefaultContext()
	}
	x, y := task(seed, dev, c)
	defer x.Release()
	defer y.Release()
	model := nn.NewMLP([]int{12, 16, 3}, (*tensor.Tensor).Tanh,
		tensor.On(dev), tensor.In(c), tensor.WithGenerator(tensor.NewGenerator(seed+100)))
	defer func() {
		for _, p := range nn.Parameters(model) {
			p.Release()
		}
	}()
	opt := optim.NewAdam(nn.Parameters(model), optim.LR(0.05))
	losses := make([]float64, concSteps)
	for step := range losses {
		err := tensor.Catch(func() {
			c.Scope(func() {
				in := x
				if batch != nil {
					in = batch(step)
				}
				loss := nn.CrossEntropy(model.Forward(in), y)
				autograd.Backward(loss)
				opt.Step()
				opt.ZeroGrad()
				losses[step] = loss.Item()
			})
		})
		if err != nil {
			t.Errorf("seed %d, step %d: %v", seed, step, err)
			return losses
		}
	}
	return losses
}

func sameCurve(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("%s: step %d loss %v, alone %v", what, i, got[i], want[i])
			return
		}
	}
	if !(want[len(want)-1] < want[0]) {
		t.Errorf("%s: did not train (%v -> %v)", what, want[0], want[len(want)-1])
	}
}

// Two models trained at once, one in the default context and one in a
// context of its own, give the loss curves each gives alone, bit for bit,
// on every device.
func TestConcurrentTrainingMatchesAlone(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			aloneA := train(t, 1, dev, nil, nil)
			aloneB := train(t, 2, dev, tensor.NewContext(), nil)
			var gotA, gotB []float64
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); gotA = train(t, 1, dev, nil, nil) }()
			go func() { defer wg.Done(); gotB = train(t, 2, dev, tensor.NewContext(), nil) }()
			wg.Wait()
			sameCurve(t, "model A (default context)", gotA, aloneA)
			sameCurve(t, "model B (own context)", gotB, aloneB)
		})
	}
}

// An inference loop under NoGrad in its own context runs beside a
// training loop: the trainer keeps recording its graph (its curve equals
// the one alone), and the inference loop records nothing and answers the
// same every time.
func TestConcurrentInferenceBesideTraining(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			alone := train(t, 3, dev, nil, nil)
			c := tensor.NewContext()
			served := nn.NewMLP([]int{12, 16, 3}, (*tensor.Tensor).Tanh,
				tensor.On(dev), tensor.In(c), tensor.WithGenerator(tensor.NewGenerator(9)))
			query := tensor.Randn([]int{5, 12}, tensor.On(dev), tensor.In(c), tensor.WithGenerator(tensor.NewGenerator(10))).Keep()
			var first []float32
			stop := make(chan struct{})
			done := make(chan error, 1)
			answered := make(chan struct{}) // closed at the first answer
			go func() {
				answers := 0
				for {
					select {
					case <-stop:
						done <- nil
						return
					default:
					}
					var got []float32
					err := tensor.Catch(func() {
						c.NoGrad(func() {
							c.Scope(func() {
								out := served.Forward(query)
								if out.RequiresGrad() {
									panic(errors.New("inference under NoGrad recorded a graph"))
								}
								got = out.Float32s()
							})
						})
					})
					if err != nil {
						done <- err
						return
					}
					if first == nil {
						first = got
					} else if i, ok := sameBits(got, first); !ok {
						done <- fmt.Errorf("the inference loop's answer changed at element %d", i)
						return
					}
					if answers++; answers == 1 {
						close(answered)
					}
				}
			}()
			// Train only once the inference loop is serving, so that the two
			// overlap however fast a training step is.
			select {
			case <-answered:
			case err := <-done:
				t.Fatal(err)
			case <-time.After(time.Minute):
				t.Fatal("the inference loop answered nothing in a minute")
			}
			got := train(t, 3, dev, nil, nil)
			close(stop)
			if err := <-done; err != nil {
				t.Error(err)
			}
			sameCurve(t, "trainer beside an inference loop", got, alone)
		})
	}
}

// A producer goroutine builds each step's batch in its own context; the
// training loop adopts it into its step's Scope, which then releases it
// with everything computed from it: the curve equals the one with the
// batches made in the loop, and no storage is left behind.
func TestConcurrentProducerBatches(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			batchAt := func(step int, c *tensor.Context) *tensor.Tensor {
				g := tensor.NewGenerator(uint64(1000 + step))
				return tensor.Randn([]int{48, 12}, tensor.WithGenerator(g), tensor.On(dev), tensor.In(c))
			}
			inline := train(t, 4, dev, nil, func(step int) *tensor.Tensor { return batchAt(step, nil) })

			base := settle(t)
			pc := tensor.NewContext()
			batches := make(chan *tensor.Tensor, 3)
			go func() {
				defer close(batches)
				for step := range concSteps {
					batches <- batchAt(step, pc)
				}
			}()
			got := train(t, 4, dev, nil, func(int) *tensor.Tensor { return tensor.Adopt(<-batches) })
			sameCurve(t, "batches from a producer goroutine", got, inline)
			if n := waitLive(base); n > base {
				t.Errorf("%d live storages after training on produced batches, %d before", n, base)
			}
		})
	}
}

// Releasing a tensor that another goroutine is reading gives that reader
// results or ErrReleased, never a raw runtime panic or a corrupted sum.
func TestConcurrentReleaseWhileInUse(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			for range 20 {
				x := tensor.Ones([]int{4096}, tensor.On(dev), tensor.In(tensor.NewContext()))
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 50 {
						var sum float64
						err := tensor.Catch(func() { sum = x.MulScalar(2).Sum().Item() })
						switch {
						case errors.Is(err, tensor.ErrReleased):
							return
						case err != nil:
							t.Errorf("reader: %v", err)
							return
						case sum != 8192:
							t.Errorf("reader: sum %v, want 8192", sum)
							return
						}
					}
				}()
				x.Release()
				wg.Wait()
			}
		})
	}
}

// The scopes and grad modes of two contexts are independent: NoGrad in
// one leaves recording on in the other, and a Scope ending in one
// releases none of the other's tensors.
func TestContextsAreIndependent(t *testing.T) {
	a, b := tensor.NewContext(), tensor.NewContext()
	w := tensor.Ones([]int{3}, tensor.In(a)).SetRequiresGrad(true)
	xb := tensor.Ones([]int{3}, tensor.In(b))
	var inB *tensor.Tensor
	a.NoGrad(func() {
		if a.GradEnabled() || !b.GradEnabled() || !tensor.GradEnabled() {
			t.Fatal("NoGrad of one context changed another's grad mode")
		}
		inB = xb.Mul(w) // xb decides: b records
	})
	if !inB.RequiresGrad() || inB.Context() != b {
		t.Errorf("an op on b's tensor under a's NoGrad: requires grad %v, context b %v", inB.RequiresGrad(), inB.Context() == b)
	}
	var kept *tensor.Tensor
	b.Scope(func() {
		a.Scope(func() {
			kept = xb.AddScalar(1) // b's tensor: a's Scope must not release it
		})
		if !tensor.StorageLive(kept) {
			t.Error("a Scope of context a released a tensor of context b")
		}
	})
	if tensor.StorageLive(kept) {
		t.Error("the Scope of context b did not release its tensor")
	}
	if w.MulScalar(2).Context() != a {
		t.Error("an op on kept tensors alone should compute in their context")
	}
	if v := w.View(3); v.Context() != a || !tensor.StorageLive(v) {
		t.Error("a view of a kept tensor should share its context and memory")
	}
}

// Every op computes entirely in the context of its operands: run on
// tensors of a context of its own, no op makes a tensor in the default
// context (whose Scope, open meanwhile in the default context, would
// otherwise own and release it).
func TestOpsStayInTheirContext(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Bool} {
			for _, op := range tensor.Ops() {
				c := tensor.NewContext()
				tensor.Scope(func() {
					x, y := covInputs(dt)
					x, y = c.Adopt(x.To(dev)), c.Adopt(y.To(dev))
					before := tensor.DefaultContext().Tracked()
					var out *tensor.Tensor
					err := tensor.Catch(func() { c.Scope(func() { out = coverageCases[op].call(x, y) }) })
					if err != nil {
						return // the op does not take this dtype; the coverage matrix says so
					}
					if n := tensor.DefaultContext().Tracked() - before; n > 0 {
						t.Errorf("%v on %v %v: %d tensors made in the default context", op, dt, dev, n)
					}
					if out.Context() != c {
						t.Errorf("%v on %v %v: the result is not in its operands' context", op, dt, dev)
					}
				})
			}
		}
	}
}

// Every PyTorch reference case, forward and backward, run on inputs of a
// context of its own while a Scope of the default context is open, makes
// no tensor in the default context: ops, composites and derivative rules
// all compute in their operands' context. The Scope is the subtest's
// own: a subtest runs on a goroutine of its own, which the default
// context does not let into its parent's Scope.
func TestTorchRefStaysInItsContext(t *testing.T) {
	for _, fam := range torchFamilies {
		for _, c := range torchref.MustLoad(t, fam) {
			ctx := tensor.NewContext()
			t.Run(fam+"/"+c.Name, func(t *testing.T) {
				tensor.Scope(func() {
					ctx.Scope(func() { runTorchCaseIn(t, c, ctx) })
					if n := tensor.DefaultContext().Tracked(); !t.Failed() && n > 0 {
						t.Errorf("%d tensors made in the default context", n)
					}
				})
			})
		}
	}
}
