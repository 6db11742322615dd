package tensor_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// Each use of the default context by a goroutine while another one is
// inside it, made at a known moment: what must be refused with
// ErrContext is, what is safe works, and the goroutine inside sees none
// of it.

// holding runs inside on a goroutine of its own, within enter (a Scope,
// a NoGrad, ...), and probe on the calling goroutine while inside waits;
// inside then checks its own state with after, still within enter.
func holding(t *testing.T, enter func(func()), inside func(), probe func(), after func()) {
	t.Helper()
	in, probed := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- catchAll(func() {
			enter(func() {
				inside()
				close(in)
				<-probed
				after()
			})
		})
	}()
	select {
	case <-in:
	case err := <-done:
		t.Fatalf("the goroutine inside failed: %v", err)
	}
	probe()
	close(probed)
	if err := <-done; err != nil {
		t.Errorf("the goroutine inside: %v", err)
	}
}

// refused fails t unless f panics with the misuse error.
func refused(t *testing.T, what string, f func()) {
	t.Helper()
	if err := catchAll(f); !misuse(err) {
		t.Errorf("%s while another goroutine is inside the default context: %v, want ErrContext", what, err)
	}
}

// allowed fails t if f panics.
func allowed(t *testing.T, what string, f func()) {
	t.Helper()
	if err := catchAll(f); err != nil {
		t.Errorf("%s while another goroutine is inside the default context: %v", what, err)
	}
}

// While one goroutine is inside a Scope of the default context, another
// cannot open a Scope, NoGrad or EnableGrad there, nor make a tensor
// there (it would join that Scope); it can use its own Context, read
// kept tensors, ask the grad mode and Adopt a tensor into the Scope.
func TestContextDefaultHeldByAScope(t *testing.T) {
	before := tensor.Ones([]int{3}) // made while no goroutine is inside
	kept := tensor.Ones([]int{2, 3}).Keep()
	own := tensor.NewContext()
	var mine, handed *tensor.Tensor
	holding(t, tensor.Scope, func() { mine = tensor.Ones([]int{4}) }, func() {
		ran := false
		refused(t, "Scope", func() { tensor.Scope(func() { ran = true }) })
		refused(t, "ScopeResult", func() { tensor.ScopeResult(func() *tensor.Tensor { ran = true; return nil }) })
		refused(t, "ScopeKeep", func() { tensor.ScopeKeep(func() []*tensor.Tensor { ran = true; return nil }) })
		refused(t, "NoGrad", func() { tensor.NoGrad(func() { ran = true }) })
		refused(t, "EnableGrad", func() { tensor.EnableGrad(func() { ran = true }) })
		refused(t, "DefaultContext().Scope", func() { tensor.DefaultContext().Scope(func() { ran = true }) })
		if ran {
			t.Error("a refused Scope or NoGrad ran its function")
		}
		refused(t, "Ones", func() { tensor.Ones([]int{2}) })
		refused(t, "an op", func() { before.AddScalar(1) })
		refused(t, "a view", func() { before.Reshape(3, 1) })
		refused(t, "an op on kept tensors alone", func() { kept.MulScalar(2) })
		allowed(t, "a view of a kept tensor", func() { kept.Reshape(3, 2) })
		allowed(t, "GradEnabled", func() {
			if !tensor.GradEnabled() {
				t.Error("GradEnabled is false with only a Scope open")
			}
		})
		allowed(t, "its own Context", func() {
			own.NoGrad(func() {
				own.Scope(func() {
					if s := tensor.Ones([]int{3}, tensor.In(own)).AddScalar(1).Sum().Item(); s != 6 {
						t.Errorf("sum %v in its own context, want 6", s)
					}
				})
			})
		})
		allowed(t, "Adopt", func() { handed = tensor.Adopt(tensor.Full([]int{2}, 7, tensor.In(own))) })
	}, func() {
		// Only its own tensor and the one handed over are in its Scope.
		if n := tensor.DefaultContext().Tracked(); n != 2 {
			t.Errorf("the Scope inside holds %d tensors, want 2 (its own and the adopted one)", n)
		}
		if !tensor.StorageLive(mine) || mine.Sum().Item() != 4 {
			t.Error("the other goroutine's use disturbed the Scope inside")
		}
	})
	if tensor.StorageLive(mine) || tensor.StorageLive(handed) {
		t.Error("the Scope did not release its own or the adopted tensor")
	}
	allowed(t, "a Scope once the other goroutine left", func() { tensor.Scope(func() { tensor.Ones([]int{2}) }) })
	if tensor.ScopeDepth() != 0 {
		t.Errorf("%d Scopes of the default context open", tensor.ScopeDepth())
	}
}

// While one goroutine is inside a NoGrad of the default context, another
// cannot record a graph there, ask its grad mode or update a tensor that
// requires grad in place (its own grad mode is on; it would see the
// other's); ops that record nothing and tensors made there work.
func TestContextDefaultHeldByNoGrad(t *testing.T) {
	w := tensor.Ones([]int{3}).SetRequiresGrad(true)
	defer w.Release()
	holding(t, tensor.NoGrad, func() {}, func() {
		refused(t, "an op that records", func() { w.MulScalar(2) })
		refused(t, "a view that records", func() { w.Reshape(3, 1) })
		refused(t, "GradEnabled", func() { tensor.GradEnabled() })
		refused(t, "an in-place update of a tensor that requires grad", func() { w.AddScalarInPlace(1) })
		refused(t, "Scope", func() { tensor.Scope(func() {}) })
		refused(t, "NoGrad", func() { tensor.NoGrad(func() {}) })
		allowed(t, "ops that record nothing", func() {
			if s := tensor.Ones([]int{3}).AddScalar(1).Sum().Item(); s != 6 {
				t.Errorf("sum %v, want 6", s)
			}
		})
	}, func() {
		if tensor.GradEnabled() {
			t.Error("the NoGrad inside is off after the other goroutine's use")
		}
		if w.MulScalar(2).RequiresGrad() {
			t.Error("an op under the NoGrad inside recorded")
		}
	})
	if w.Sum().Item() != 3 {
		t.Errorf("w changed: sum %v, want 3", w.Sum().Item())
	}
	if !w.MulScalar(2).RequiresGrad() || !tensor.GradEnabled() {
		t.Error("grad mode is not back on after the NoGrad")
	}
}

// The goroutine inside holds the default context until its outermost
// Scope or NoGrad ends, however they nest, and lets go when one panics.
func TestContextDefaultHeldUntilTheOutermostEnds(t *testing.T) {
	holding(t, tensor.Scope, func() {
		tensor.NoGrad(func() { tensor.EnableGrad(func() { tensor.Scope(func() { tensor.Ones([]int{1}) }) }) })
	}, func() {
		refused(t, "Scope after the inner frames ended", func() { tensor.Scope(func() {}) })
	}, func() {})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := tensor.Catch(func() { tensor.Scope(func() { tensor.NoGrad(func() { tensor.Ones([]int{2}).Reshape(3) }) }) })
		if !errors.Is(err, tensor.ErrShape) {
			t.Errorf("the panicking Scope: %v, want ErrShape", err)
		}
	})
	wg.Wait()
	allowed(t, "NoGrad after a Scope on another goroutine panicked", func() { tensor.NoGrad(func() {}) })
	if tensor.ScopeDepth() != 0 || !tensor.GradEnabled() {
		t.Errorf("after the panic: %d Scopes open, grad mode %v", tensor.ScopeDepth(), tensor.GradEnabled())
	}
}

// The patterns that do not share the default context are untouched:
// goroutines with a Context each train beside a loop on the default
// context with no error; goroutines take turns in the default context;
// a data loader's producer goroutine feeds a loop that runs each batch in
// a Scope of the default context.
func TestContextDefaultUnaffectedPatterns(t *testing.T) {
	aloneDefault := train(t, 21, tensor.CPU, nil, nil)
	aloneOwn := train(t, 22, tensor.CPU, tensor.NewContext(), nil)
	var wg sync.WaitGroup
	var gotDefault []float64
	gotOwn := make([][]float64, 2)
	wg.Go(func() { gotDefault = train(t, 21, tensor.CPU, nil, nil) })
	for i := range gotOwn {
		wg.Go(func() { gotOwn[i] = train(t, 22, tensor.CPU, tensor.NewContext(), nil) })
	}
	wg.Wait()
	sameCurve(t, "the loop on the default context", gotDefault, aloneDefault)
	for _, got := range gotOwn {
		sameCurve(t, "a loop with a Context of its own", got, aloneOwn)
	}

	for i := range 4 { // turns: one goroutine after another
		wg.Go(func() {
			if got := train(t, 21, tensor.CPU, nil, nil); i == 0 {
				sameCurve(t, "a loop taking its turn", got, aloneDefault)
			}
		})
		wg.Wait()
	}

	g := tensor.NewGenerator(23)
	ds, err := data.FromTensors(tensor.Randn([]int{40, 12}, tensor.WithGenerator(g)),
		tensor.Randn([]int{40, 3}, tensor.WithGenerator(g)).ArgMaxDim(1, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []*tensor.Context{nil, tensor.NewContext()} {
		l, err := data.NewLoader(ds, data.Config{BatchSize: 8, Shuffle: true, Seed: 5, Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		model := nn.NewMLP([]int{12, 8, 3}, (*tensor.Tensor).Tanh, tensor.In(ctx), tensor.WithGenerator(tensor.NewGenerator(24)))
		opt := optim.NewAdam(nn.Parameters(model), optim.LR(0.05))
		allowed(t, "a data loader's epochs", func() {
			for range 3 {
				for b := range l.Batches() {
					loss := nn.CrossEntropy(model.Forward(b.Tensors[0]), b.Tensors[1])
					autograd.Backward(loss)
					opt.Step()
					opt.ZeroGrad()
				}
			}
		})
		l.Close()
	}
}
