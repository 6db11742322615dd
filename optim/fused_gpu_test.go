package optim_test

import (
	"fmt"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// fusedCases are the optimizers whose GPU steps fuse, with the most
// dispatches one step may record per parameter when every gradient is a
// pending expression clipped in place (an accumulated gradient after
// ClipGradValue): reading the gradient costs nothing more.
var fusedCases = []struct {
	name  string
	mk    func([]*tensor.Tensor) optim.Optimizer
	bound int
}{
	{"SGD", func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewSGD(ps, optim.LR(0.1)) }, 1},
	{"SGD-momentum", func(ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewSGD(ps, optim.LR(0.1), optim.Momentum(0.9), optim.Dampening(0.1))
	}, 2},
	{"SGD-nesterov", func(ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewSGD(ps, optim.LR(0.1), optim.Momentum(0.9), optim.Nesterov())
	}, 2},
	{"Adam", func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdam(ps, optim.LR(0.01)) }, 3},
	{"AdamW-amsgrad", func(ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewAdamW(ps, optim.LR(0.01), optim.AMSGrad())
	}, 5},
	{"Adagrad", func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewAdagrad(ps, optim.LR(0.1)) }, 2},
	{"RMSProp", func(ps []*tensor.Tensor) optim.Optimizer { return optim.NewRMSProp(ps, optim.LR(0.01)) }, 2},
	{"RMSProp-centered-momentum", func(ps []*tensor.Tensor) optim.Optimizer {
		return optim.NewRMSProp(ps, optim.LR(0.01), optim.Centered(), optim.Momentum(0.5))
	}, 5},
}

// TestFusedStepsMatchCPU runs three steps of every optimizer on the GPU
// with fusion on and off, on parameters of odd shapes whose gradients are
// pending expressions clamped in place, against the CPU, and bounds the
// dispatches per parameter of a fused step.
func TestFusedStepsMatchCPU(t *testing.T) {
	gpu := devtest.MustGPU(t)
	g := devtest.Runtime(t, gpu)
	shapes := [][]int{{7, 33}, {65}, {33, 7}}
	run := func(dev tensor.Device, mk func([]*tensor.Tensor) optim.Optimizer, perStep func(int64)) [][]float32 {
		ps := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			n := 1
			for _, d := range s {
				n *= d
			}
			ps[i] = tensor.Linspace(-1, 1, n, tensor.On(dev)).Reshape(s...).SetRequiresGrad(true)
		}
		opt := mk(ps)
		for step := range 3 {
			tensor.Scope(func() {
				for i, p := range ps {
					x := tensor.Linspace(float64(step+i), -2, p.Numel(), tensor.On(dev)).Reshape(p.Shape()...)
					gr := x.Mul(x).Sub(tensor.Scalar(0.5, tensor.Float32, dev)) // pending on a fusing GPU
					p.SetGrad(gr)
					p.Context().NoGrad(func() { gr.ClampInPlace(-1.5, 1.5) })
				}
				before := g.DispatchCount()
				opt.Step()
				if perStep != nil && step > 0 {
					perStep(g.DispatchCount() - before)
				}
				opt.ZeroGrad()
			})
		}
		out := make([][]float32, len(ps))
		for i, p := range ps {
			out[i] = p.Float32s()
		}
		return out
	}
	for _, c := range fusedCases {
		t.Run(c.name, func(t *testing.T) {
			ref := run(tensor.CPU, c.mk, nil)
			for _, fuse := range []bool{true, false} {
				was := tensor.SetFusion(fuse)
				got := run(gpu, c.mk, func(n int64) {
					if fuse && n > int64(c.bound*len(shapes)) {
						t.Errorf("a fused step recorded %d dispatches for %d parameters, want at most %d each", n, len(shapes), c.bound)
					}
				})
				tensor.SetFusion(was)
				for i := range ref {
					approx.Require(t, fmt.Sprintf("fusion %v: parameter %d", fuse, i), got[i], ref[i], approx.Float32(64))
				}
			}
		})
	}
}
