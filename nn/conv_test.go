package nn_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// checkUniform fails unless x has shape and its values lie in [-bound,
// bound] and spread over most of it (PyTorch's initialisation).
func checkUniform(t *testing.T, what string, x *tensor.Tensor, shape []int, bound float64) {
	t.Helper()
	if !slices.Equal(x.Shape(), shape) || !x.RequiresGrad() {
		t.Fatalf("%s: shape %v (requires grad %v), want %v", what, x.Shape(), x.RequiresGrad(), shape)
	}
	hi := 0.0
	for _, v := range x.Float64s() {
		if math.Abs(v) > bound {
			t.Fatalf("%s: %g outside ±%g", what, v, bound)
		}
		hi = max(hi, math.Abs(v))
	}
	if hi < 0.8*bound {
		t.Errorf("%s: values reach only %g of ±%g", what, hi, bound)
	}
}

func TestConvLayersInit(t *testing.T) {
	c := nn.NewConv2d(6, 8, [2]int{3, 5}, tensor.ConvOptions{Groups: 2}, true)
	checkUniform(t, "Conv2d weight", c.Weight, []int{8, 3, 3, 5}, 1/math.Sqrt(45))
	checkUniform(t, "Conv2d bias", c.Bias, []int{8}, 1/math.Sqrt(45))
	tc := nn.NewConvTranspose2d(4, 6, [2]int{2, 3}, tensor.ConvOptions{Groups: 2, Stride: [2]int{2, 2}, OutputPadding: [2]int{1, 1}}, true)
	checkUniform(t, "ConvTranspose2d weight", tc.Weight, []int{4, 3, 2, 3}, 1/math.Sqrt(18))
	checkUniform(t, "ConvTranspose2d bias", tc.Bias, []int{6}, 1/math.Sqrt(18))
	if names := slices.Sorted(mapsKeys(nn.StateDict(c))); !slices.Equal(names, []string{"bias", "weight"}) {
		t.Errorf("Conv2d state dict %v", names)
	}
	nb := nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{}, false)
	if nb.Bias != nil || len(nn.Parameters(nb)) != 1 {
		t.Errorf("Conv2d without bias: bias %v, %d parameters", nb.Bias, len(nn.Parameters(nb)))
	}
}

func mapsKeys(m map[string]*tensor.Tensor) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// smallCNN is conv → relu → max pool → conv transpose → avg pool →
// adaptive pool → flatten → linear, over (2, 3, 9, 8) inputs.
func smallCNN(opts ...tensor.Option) *nn.Sequential {
	return nn.NewSequential(
		nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, opts...),
		nn.Func((*tensor.Tensor).ReLU),
		nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{2, 2}}},
		nn.NewConvTranspose2d(4, 6, [2]int{3, 3}, tensor.ConvOptions{Stride: [2]int{2, 2}, Groups: 2}, true, opts...),
		nn.NewAvgPool2d(tensor.Window2d{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}),
		nn.AdaptiveAvgPool2d{Size: [2]int{2, 3}},
		nn.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(1, -1) }),
		nn.NewLinear(36, 5, opts...),
	)
}

// TestConvLayersGradcheck checks a small CNN's gradients with respect to
// its input and every parameter by finite differences in float64.
func TestConvLayersGradcheck(t *testing.T) {
	m := smallCNN(tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(7)))
	x := tensor.Uniform([]int{2, 3, 9, 8}, -1, 1, tensor.Of(tensor.Float64), tensor.WithGenerator(tensor.NewGenerator(8))).SetRequiresGrad(true)
	conv, tconv, lin := m.Layers[0].(*nn.Conv2d), m.Layers[3].(*nn.ConvTranspose2d), m.Layers[7].(*nn.LinearLayer)
	slots := []**tensor.Tensor{&conv.Weight, &conv.Bias, &tconv.Weight, &tconv.Bias, &lin.Weight, &lin.Bias}
	ps := []*tensor.Tensor{x}
	for _, s := range slots {
		ps = append(ps, *s)
	}
	f := func(xs []*tensor.Tensor) *tensor.Tensor { // the check's copies of x and the parameters
		for i, s := range slots {
			*s = xs[i+1]
		}
		return m.Forward(xs[0]).Square().Sum()
	}
	if err := autograd.Check(f, ps, autograd.CheckOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestConvLayersGPU runs the CNN on the GPU and compares its output and
// gradients with the CPU's.
func TestConvLayersGPU(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	cpuM := smallCNN(tensor.WithGenerator(tensor.NewGenerator(3)))
	gpuM := smallCNN(tensor.WithGenerator(tensor.NewGenerator(3)), tensor.On(gpu))
	x := tensor.Uniform([]int{2, 3, 9, 8}, -1, 1, tensor.WithGenerator(tensor.NewGenerator(4)))
	yc, yg := cpuM.Forward(x), gpuM.Forward(x.To(gpu))
	autograd.Backward(yc.Square().Sum())
	autograd.Backward(yg.Square().Sum())
	approx.Require(t, "output", yg.To(tensor.CPU).Float64s(), yc.Float64s(), approx.Close32)
	pc, pg := nn.Parameters(cpuM), nn.Parameters(gpuM)
	for i := range pc {
		approx.Require(t, "grad", pg[i].Grad().To(tensor.CPU).Float64s(), pc[i].Grad().Float64s(), approx.Close32)
	}
}

func TestConvLayersBadInput(t *testing.T) {
	for _, c := range []struct {
		name, want string
		kind       error
		f          func()
	}{
		{"zero channels", "must be positive", tensor.ErrArgument, func() { nn.NewConv2d(0, 2, [2]int{3, 3}, tensor.ConvOptions{}, true) }},
		{"groups", "must divide", tensor.ErrArgument, func() { nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{Groups: 2}, true) }},
		{"output padding", "no output padding", tensor.ErrArgument, func() {
			nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{OutputPadding: [2]int{1, 0}}, true)
		}},
		{"channels", "Conv2d", tensor.ErrShape, func() {
			nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{}, true).Forward(tensor.Zeros([]int{1, 2, 5, 5}))
		}},
		{"kernel larger than input", "does not fit", tensor.ErrShape, func() {
			nn.NewConv2d(3, 4, [2]int{3, 3}, tensor.ConvOptions{}, true).Forward(tensor.Zeros([]int{1, 3, 2, 5}))
		}},
		{"pool padding", "at most half", tensor.ErrArgument, func() {
			nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{2, 2}, Padding: [2]int{2, 0}}}.Forward(tensor.Zeros([]int{1, 3, 5, 5}))
		}},
		{"rank", "(N, C, H, W)", tensor.ErrShape, func() { nn.AdaptiveAvgPool2d{Size: [2]int{1, 1}}.Forward(tensor.Zeros([]int{5, 5})) }},
	} {
		err := tensor.Catch(c.f)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %v mentioning %q", c.name, err, c.kind, c.want)
		}
	}
}

// TestUnfoldFoldLayers: nn.Fold of nn.Unfold multiplies each element by
// the number of windows that cover it (here 1: windows tile the input).
func TestUnfoldFoldLayers(t *testing.T) {
	w := tensor.Window2d{Kernel: [2]int{2, 3}, Stride: [2]int{2, 3}}
	x := tensor.Uniform([]int{2, 3, 4, 6}, -1, 1)
	cols := nn.Unfold{Window: w}.Forward(x)
	if !slices.Equal(cols.Shape(), []int{2, 18, 4}) {
		t.Fatalf("Unfold: shape %v", cols.Shape())
	}
	approx.Require(t, "Fold(Unfold(x))", nn.Fold{Size: [2]int{4, 6}, Window: w}.Forward(cols).Float64s(), x.Float64s(), approx.Close32)
}

// TestConvLayersLearn trains a tiny CNN with SGD to tell horizontal bars
// from vertical ones in noisy 9×9 images: the training loss must fall
// below a tenth of its start, and every image be classified right.
func TestConvLayersLearn(t *testing.T) {
	gen := tensor.WithGenerator(tensor.NewGenerator(11))
	const n, hw = 32, 9
	img := make([]float32, n*hw*hw)
	labels := make([]int32, n)
	noise := tensor.Uniform([]int{n * hw * hw}, -0.3, 0.3, gen).Float64s()
	for i := range n {
		labels[i] = int32(i % 2)
		bar := 1 + i/2%(hw-2) // the bar's row or column
		for r := range hw {
			for c := range hw {
				v := noise[(i*hw+r)*hw+c]
				if labels[i] == 0 && r == bar || labels[i] == 1 && c == bar {
					v++
				}
				img[(i*hw+r)*hw+c] = float32(v)
			}
		}
	}
	x, y := tensor.New(img, n, 1, hw, hw), tensor.New(labels, n)
	m := nn.NewSequential(
		nn.NewConv2d(1, 4, [2]int{3, 3}, tensor.ConvOptions{Padding: [2]int{1, 1}}, true, gen),
		nn.Func((*tensor.Tensor).ReLU),
		nn.MaxPool2d{Window: tensor.Window2d{Kernel: [2]int{3, 3}}},
		nn.AdaptiveAvgPool2d{Size: [2]int{1, 1}},
		nn.Func(func(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(1, -1) }),
		nn.NewLinear(4, 2, gen),
	)
	opt := optim.NewSGD(nn.Parameters(m), optim.LR(0.5))
	var first, last float64
	for step := range 150 {
		tensor.Scope(func() {
			loss := nn.CrossEntropy(m.Forward(x), y)
			autograd.Backward(loss)
			opt.Step()
			opt.ZeroGrad()
			last = loss.Item()
			if step == 0 {
				first = last
			}
		})
	}
	pred := m.Forward(x).ArgMaxDim(1, false).Int32s()
	wrong := 0
	for i := range pred {
		if pred[i] != labels[i] {
			wrong++
		}
	}
	if last > first/10 || wrong > 0 {
		t.Errorf("loss %.4f → %.4f, %d of %d wrong", first, last, wrong, n)
	}
}
