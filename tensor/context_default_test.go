package tensor_test

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// Two goroutines that both use the default context, as a program does
// that forgot to give each of its loops a tensor.Context: each gets
// either the results it gets alone or an ErrContext *tensor.Error that
// says to make a Context per goroutine, never a wrong result and never
// another error. CI runs these tests under -race.

// catchAll runs f and returns what it panicked with as an error: the
// *tensor.Error itself, or an error describing any other panic.
func catchAll(f func()) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
		case *tensor.Error:
			err = r
		default:
			err = fmt.Errorf("panic with %T: %v\n%s", r, r, debug.Stack())
		}
	}()
	f()
	return nil
}

// misuse reports whether err is the error of the default context used
// by two goroutines: a *tensor.Error wrapping ErrContext that names the
// remedy.
func misuse(err error) bool {
	var te *tensor.Error
	return errors.As(err, &te) && errors.Is(err, tensor.ErrContext) &&
		strings.Contains(te.Error(), "tensor.NewContext()") && strings.Contains(te.Error(), "goroutine")
}

// trainDefault is train (concurrent_test.go) on the default context,
// each step in a Scope when scoped and with none otherwise; it returns
// the losses of the steps it finished and what stopped it, typed or not,
// setup included.
func trainDefault(seed uint64, dev tensor.Device, scoped bool) (losses []float64, err error) {
	err = catchAll(func() {
		x, y := task(seed, dev, nil)
		defer x.Release()
		defer y.Release()
		model := nn.NewMLP([]int{12, 16, 3}, (*tensor.Tensor).Tanh,
			tensor.On(dev), tensor.WithGenerator(tensor.NewGenerator(seed+100)))
		defer func() {
			for _, p := range nn.Parameters(model) {
				p.Release()
			}
		}()
		opt := optim.NewAdam(nn.Parameters(model), optim.LR(0.05))
		step := func() {
			loss := nn.CrossEntropy(model.Forward(x), y)
			autograd.Backward(loss)
			opt.Step()
			opt.ZeroGrad()
			losses = append(losses, loss.Item())
		}
		for range concSteps {
			if scoped {
				tensor.Scope(step)
			} else {
				step()
			}
		}
	})
	return losses, err
}

// judge fails t unless a loop's outcome is its curve alone, or that
// curve's first steps and then the misuse error.
func judge(t *testing.T, who string, losses []float64, err error, alone []float64) {
	t.Helper()
	switch {
	case err == nil:
		sameCurve(t, who, losses, alone)
	case !misuse(err):
		t.Errorf("%s: %v, want the results alone or ErrContext", who, err)
	default:
		for i, l := range losses {
			if l != alone[i] {
				t.Errorf("%s: step %d loss %v before its ErrContext, alone %v", who, i, l, alone[i])
				return
			}
		}
	}
}

// Two training loops on the default context at once, each step in a
// Scope or without one: each loop trains as it does alone or stops with
// ErrContext. The optimizer's and backward's NoGrad of one loop must
// never silently stop the other's recording.
func TestContextDefaultTwoGoroutinesTrain(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		for _, scoped := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/scoped=%v", dev, scoped), func(t *testing.T) {
				aloneA, err := trainDefault(11, dev, scoped)
				aloneB, errB := trainDefault(12, dev, scoped)
				if err != nil || errB != nil {
					t.Fatalf("alone: %v, %v", err, errB)
				}
				stopped := 0
				for range 4 {
					var lossA, lossB []float64
					var errA, errB error
					start := make(chan struct{})
					var wg sync.WaitGroup
					wg.Go(func() { <-start; lossA, errA = trainDefault(11, dev, scoped) })
					wg.Go(func() { <-start; lossB, errB = trainDefault(12, dev, scoped) })
					close(start)
					wg.Wait()
					judge(t, "loop A", lossA, errA, aloneA)
					judge(t, "loop B", lossB, errB, aloneB)
					if errA != nil || errB != nil {
						stopped++
					}
				}
				t.Logf("%d of 4 rounds stopped a loop with ErrContext", stopped)
			})
		}
	}
}

// evalDefault builds a model on the default context and answers one
// query under NoGrad and a Scope of the default context, over and over,
// until stop is closed. Each answer must equal want and record no
// graph; attempts the default context refuses (ErrContext: the trainer
// is inside it) are counted and retried. The first answer closes first.
func evalDefault(want []float32, stop <-chan struct{}, first chan<- struct{}) (answers, refused int, err error) {
	var model *nn.Sequential
	var query *tensor.Tensor
	for model == nil {
		err := catchAll(func() {
			model = nn.NewMLP([]int{12, 16, 3}, (*tensor.Tensor).Tanh, tensor.WithGenerator(tensor.NewGenerator(9)))
			query = tensor.Randn([]int{5, 12}, tensor.WithGenerator(tensor.NewGenerator(10))).Keep()
		})
		if err != nil && !misuse(err) {
			return 0, 0, err
		}
		if err != nil {
			model, refused = nil, refused+1
		}
	}
	defer query.Release()
	for {
		select {
		case <-stop:
			return answers, refused, nil
		default:
		}
		var got []float32
		err := catchAll(func() {
			tensor.NoGrad(func() {
				tensor.Scope(func() {
					out := model.Forward(query)
					if out.RequiresGrad() {
						panic(errors.New("inference under NoGrad recorded a graph"))
					}
					got = out.Float32s()
				})
			})
		})
		switch {
		case misuse(err):
			refused++
			continue
		case err != nil:
			return answers, refused, err
		}
		if i, ok := sameBits(got, want); !ok || len(got) != len(want) {
			return answers, refused, fmt.Errorf("answer %d differs from the one alone at element %d", answers, i)
		}
		if answers++; answers == 1 {
			close(first)
		}
	}
}

// An evaluation loop under NoGrad and a training loop, both on the
// default context: the evaluator answers what it answers alone, the
// trainer trains as alone, and whatever the default context refuses is
// ErrContext.
func TestContextDefaultEvalBesideTraining(t *testing.T) {
	want := func() []float32 {
		model := nn.NewMLP([]int{12, 16, 3}, (*tensor.Tensor).Tanh, tensor.WithGenerator(tensor.NewGenerator(9)))
		query := tensor.Randn([]int{5, 12}, tensor.WithGenerator(tensor.NewGenerator(10)))
		var out []float32
		tensor.NoGrad(func() { out = model.Forward(query).Float32s() })
		return out
	}()
	for _, scoped := range []bool{true, false} {
		t.Run(fmt.Sprintf("scoped=%v", scoped), func(t *testing.T) {
			alone, err := trainDefault(13, tensor.CPU, scoped)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				stop, first := make(chan struct{}), make(chan struct{})
				type outcome struct {
					answers, refused int
					err              error
				}
				done := make(chan outcome, 1)
				go func() {
					a, r, err := evalDefault(want, stop, first)
					done <- outcome{a, r, err}
				}()
				select { // overlap: train once the evaluator is answering
				case <-first:
				case o := <-done:
					t.Fatalf("the evaluator stopped before answering: %v", o.err)
				case <-time.After(time.Minute):
					t.Fatal("the evaluator answered nothing in a minute")
				}
				losses, err := trainDefault(13, tensor.CPU, scoped)
				close(stop)
				o := <-done
				if o.err != nil {
					t.Errorf("evaluator: %v", o.err)
				}
				judge(t, "trainer beside an evaluator", losses, err, alone)
				t.Logf("evaluator: %d answers, %d refused; trainer: %d steps, %v", o.answers, o.refused, len(losses), err != nil)
			}
		})
	}
}
