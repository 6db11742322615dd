package ddp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/ddp"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// testTimeout bounds every collective of the tests' worlds, so that a
// bug fails a test instead of hanging it.
const testTimeout = 20 * time.Second

// spawn runs body for each rank of a new in-process world of n, each on
// its own goroutine with its own context, and fails t with each rank's
// error or panic.
func spawn(t *testing.T, n int, body func(rank int, g ddp.Group, c *tensor.Context) error) {
	t.Helper()
	groups := ddp.NewLocalGroups(n, testTimeout)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for rank := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[rank] = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			errs[rank] = body(rank, groups[rank], tensor.NewContext())
		})
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", rank, err)
		}
	}
}

// A dataset is a classification problem of n examples of in features
// and classes labels, drawn once from a seed.
type dataset struct {
	x           []float32
	y           []int32
	in, classes int
}

func newDataset(n, in, classes int) dataset {
	rng := rand.New(rand.NewPCG(1, 2))
	d := dataset{x: make([]float32, n*in), y: make([]int32, n), in: in, classes: classes}
	for i := range d.x {
		d.x[i] = float32(rng.NormFloat64())
	}
	for i := range d.y {
		d.y[i] = int32(rng.IntN(classes))
	}
	return d
}

// batch returns the examples idx on dev, in context c.
func (d dataset) batch(idx []int, dev tensor.Device, c *tensor.Context) (x, y *tensor.Tensor) {
	xs := make([]float32, 0, len(idx)*d.in)
	ys := make([]int32, 0, len(idx))
	for _, i := range idx {
		xs = append(xs, d.x[i*d.in:(i+1)*d.in]...)
		ys = append(ys, d.y[i])
	}
	x = tensor.From(xs, []int{len(idx), d.in}, tensor.On(dev), tensor.In(c))
	y = tensor.From(ys, []int{len(idx)}, tensor.On(dev), tensor.In(c))
	return x, y
}

// shardBatches returns the example indices of each step of a rank with
// batch b, as data.Shard deals an epoch of n in order.
func shardBatches(n, b, steps int, s data.Shard) [][]int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	mine := s.Deal(order)
	out := make([][]int, steps)
	for i := range out {
		out[i] = mine[i*b : (i+1)*b]
	}
	return out
}

// mlp returns the tests' model, drawn from seed on dev in c.
func mlp(sizes []int, seed uint64, dev tensor.Device, c *tensor.Context) *nn.Sequential {
	return nn.NewMLP(sizes, (*tensor.Tensor).ReLU, tensor.On(dev), tensor.In(c), tensor.WithGenerator(tensor.NewGenerator(seed)))
}

// A history is what a training run saw: the loss of each step and the
// parameters after it.
type history struct {
	losses []float64
	params [][][]float32 // step → parameter → values
	grads  [][][]float32 // step → parameter → gradient the optimizer used
}

// train runs SGD with momentum on model for len(batches) steps, through
// r when it is not nil.
func train(model nn.Layer, r *ddp.Replica, c *tensor.Context, batches func(step int) (x, y *tensor.Tensor), steps int) (history, error) {
	var h history
	params := nn.Parameters(model)
	opt := optim.NewSGD(params, optim.LR(0.1), optim.Momentum(0.9))
	var err error
	for step := range steps {
		c.Scope(func() {
			x, y := batches(step)
			loss := nn.CrossEntropy(model.Forward(x), y)
			h.losses = append(h.losses, loss.Item())
			if r != nil {
				err = r.Backward(loss)
			} else {
				autograd.Backward(loss)
			}
			h.grads = append(h.grads, values(gradsOf(params)))
			opt.Step()
			opt.ZeroGrad()
		})
		if err != nil {
			return h, fmt.Errorf("step %d: %w", step, err)
		}
		h.params = append(h.params, values(params))
	}
	return h, nil
}

func gradsOf(ps []*tensor.Tensor) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(ps))
	for i, p := range ps {
		out[i] = p.Grad()
	}
	return out
}

func values(ts []*tensor.Tensor) [][]float32 {
	out := make([][]float32, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = t.Float32s()
		}
	}
	return out
}

// bitwiseEqual reports the first element where a and b differ in their
// bits, or "".
func bitwiseEqual(a, b [][]float32) string {
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Sprintf("tensor %d: %d and %d elements", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return fmt.Sprintf("tensor %d element %d: %g and %g", i, j, a[i][j], b[i][j])
			}
		}
	}
	return ""
}

// firstDifference reports the first element where a and b differ by
// more than tol (internal/approx's model, b taken as the reference), or "".
func firstDifference(a, b [][]float32, tol approx.Tol) string {
	for i := range a {
		for j := range a[i] {
			x, y := float64(a[i][j]), float64(b[i][j])
			if !tol.Equal(x, y) {
				return fmt.Sprintf("tensor %d element %d: %g and %g", i, j, x, y)
			}
		}
	}
	return ""
}
