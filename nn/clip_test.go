package nn_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/internal/reftensor"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestClipGradNormTorch replays clip.json on every device: the total
// norm and the clipped gradients match clip_grad_norm_ (float64 cases
// run in float32 on a GPU).
func TestClipGradNormTorch(t *testing.T) {
	cases := torchref.MustLoad(t, "clip")
	for _, dev := range devtest.Devices(t) {
		for _, c := range cases {
			t.Run(dev.String()+"/"+c.Name, func(t *testing.T) {
				none := map[int]bool{}
				for _, i := range c.Ints("none") {
					none[i] = true
				}
				tl := 1e-13
				if c.Inputs[0].DType == "float32" || dev != tensor.CPU {
					tl = 2e-6
				}
				var ps []*tensor.Tensor
				for i, r := range c.Inputs {
					g, err := reftensor.Base(r)
					if err != nil {
						t.Fatal(err)
					}
					if dev != tensor.CPU {
						g = g.Cast(tensor.Float32)
					}
					g = g.To(dev)
					p := tensor.ZerosLike(g).SetRequiresGrad(true)
					if !none[i] {
						p.SetGrad(g)
					}
					ps = append(ps, p)
				}
				total := nn.ClipGradNorm(ps, c.Float("max_norm"), c.Float("norm_type"))
				if total.Device() != dev || total.Dim() != 0 {
					t.Fatalf("total norm %v on %v", total.Shape(), total.Device())
				}
				approx.Require(t, "total norm", []float64{total.Item()}, c.Outputs[0].Data, approx.Rel1(tl))
				k := 1
				for i, p := range ps {
					if none[i] {
						if p.Grad() != nil {
							t.Fatalf("parameter %d gained a gradient", i)
						}
						continue
					}
					approx.Require(t, "gradient", p.Grad().Float64s(), c.Outputs[k].Data, approx.Rel1(tl))
					k++
				}
			})
		}
	}
}

// TestClipGradNormCases: gradients that autograd produced as expanded
// views (the gradient of a Sum) are clipped; no gradient at all gives a
// zero norm; a non-finite norm is an error for ClipGradNormFinite, which
// then leaves the gradients alone; bad arguments panic.
func TestClipGradNormCases(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		p := tensor.Ones([]int{3, 4}, tensor.On(dev)).SetRequiresGrad(true)
		q := tensor.Ones([]int{5}, tensor.On(dev)).SetRequiresGrad(true)
		autograd.Backward(p.Sum().Add(q.MulScalar(2).Sum()))
		total := nn.ClipGradNorm([]*tensor.Tensor{p, q}, 1, 2)
		want := math.Sqrt(12 + 5*4)
		approx.Require(t, "norm of sum gradients", []float64{total.Item()}, []float64{want}, approx.Rel1(1e-6))
		coef := 1 / (want + 1e-6)
		approx.Require(t, "clipped", p.Grad().Float64s()[:1], []float64{coef}, approx.Rel1(1e-6))
		approx.Require(t, "clipped", q.Grad().Float64s()[:1], []float64{2 * coef}, approx.Rel1(1e-6))

		q.Grad().Fill(math.Inf(1))
		before := p.Grad().Float32s()
		total, err := nn.ClipGradNormFinite([]*tensor.Tensor{p, q}, 1, 2)
		if !errors.Is(err, nn.ErrNonFinite) || !math.IsInf(total.Item(), 1) {
			t.Errorf("%v: infinite gradient: norm %v, error %v", dev, total.Item(), err)
		}
		if !slices.Equal(p.Grad().Float32s(), before) {
			t.Errorf("%v: ClipGradNormFinite changed gradients although it failed", dev)
		}
		p.Grad().Fill(3)
		q.Grad().Fill(4)
		if total, err := nn.ClipGradNormFinite([]*tensor.Tensor{p, q}, math.Inf(1), math.Inf(1)); err != nil || total.Item() != 4 {
			t.Errorf("%v: inf norm without clipping: %v, %v", dev, total.Item(), err)
		}
		if g := p.Grad().Float32s(); g[0] != 3 {
			t.Errorf("%v: max norm +Inf changed a gradient to %v", dev, g[0])
		}
	}
	free := tensor.Zeros([]int{2}).SetRequiresGrad(true)
	if total := nn.ClipGradNorm([]*tensor.Tensor{free}, 1, 2); total.Item() != 0 || total.DType() != tensor.Float32 {
		t.Errorf("no gradients: norm %v", total)
	}
	ps := []*tensor.Tensor{free}
	wantPanic(t, "negative max norm", tensor.ErrArgument, func() { nn.ClipGradNorm(ps, -1, 2) })
	wantPanic(t, "NaN max norm", tensor.ErrArgument, func() { nn.ClipGradNorm(ps, math.NaN(), 2) })
	wantPanic(t, "norm type 0", tensor.ErrArgument, func() { nn.ClipGradNorm(ps, 1, 0) })
	wantPanic(t, "norm type -Inf", tensor.ErrArgument, func() { nn.ClipGradNormFinite(ps, 1, math.Inf(-1)) })
	wantPanic(t, "nil parameter", tensor.ErrArgument, func() { nn.ClipGradNorm([]*tensor.Tensor{free, nil}, 1, 2) })
}
