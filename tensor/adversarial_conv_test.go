package tensor_test

import (
	"math"

	"gonum.org/v1/gonum/mat"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/tensor"
)

// nchw returns an ordinary (1, 2, 5, 5) input.
func nchw() *T { return tensor.Rand([]int{1, 2, 5, 5}) }

// windows are adversarial windows: each field negative, zero or huge in
// turn, beside ordinary ones.
func windows() []tensor.Window2d {
	out := []tensor.Window2d{{Kernel: [2]int{2, 2}}, {Kernel: [2]int{3, 3}, Stride: [2]int{2, 1}, Padding: [2]int{1, 1}, CeilMode: true}}
	for _, v := range A.Ints {
		for f := range 4 {
			w := tensor.Window2d{Kernel: [2]int{2, 2}}
			field := []*[2]int{&w.Kernel, &w.Stride, &w.Padding, &w.Dilation}[f]
			field[f%2] = v
			out = append(out, w)
		}
	}
	return out
}

// convOpts are adversarial ConvOptions.
func convOpts() []tensor.ConvOptions {
	out := []tensor.ConvOptions{{}}
	for _, v := range A.Ints {
		out = append(out, tensor.ConvOptions{Stride: [2]int{v, 1}}, tensor.ConvOptions{Padding: [2]int{1, v}}, tensor.ConvOptions{Dilation: [2]int{v, v}},
			tensor.ConvOptions{OutputPadding: [2]int{v, 0}}, tensor.ConvOptions{Groups: v})
	}
	return out
}

// windowed calls f with each adversarial tensor and an ordinary window,
// and with an ordinary input and each adversarial window.
func windowed(f func(x *T, w tensor.Window2d)) func(A.Try) {
	return func(try A.Try) {
		for _, a := range A.Tensors() {
			try(a.Name, func() { f(a.T, tensor.Window2d{Kernel: [2]int{2, 2}}) })
		}
		for _, w := range windows() {
			try("window", func() { f(nchw(), w) })
		}
	}
}

// conv calls f (Conv2d or ConvTranspose2d) with adversarial tensors in
// each position and adversarial options.
func conv(f func(x, w, b *T, o tensor.ConvOptions) *T) func(A.Try) {
	return func(try A.Try) {
		A.Triples(func(x, w, b *T) { f(x, w, b, tensor.ConvOptions{}) })(try)
		for _, o := range convOpts() {
			try("options", func() { f(nchw(), tensor.Rand([]int{2, 2, 3, 3}), tensor.Rand([]int{2}), o) })
		}
	}
}

func adversarialConv() []A.Case {
	return []A.Case{
		A.C("AdaptiveAvgPool2d", A.WithInts(func(x *T, i []int) { tensor.AdaptiveAvgPool2d(x, [2]int{i[0], i[1]}) }, 2, 2)),
		A.C("AvgPool2d", windowed(func(x *T, w tensor.Window2d) { tensor.AvgPool2d(x, w, true) })),
		A.C("Conv2d", conv(tensor.Conv2d)),
		A.C("ConvTranspose2d", conv(tensor.ConvTranspose2d)),
		A.C("DefaultGenerator", A.One(func() { tensor.DefaultGenerator().SetState(math.MaxUint64, math.MaxUint64) })),
		A.C("Fold", windowed(func(x *T, w tensor.Window2d) { tensor.Fold(x, [2]int{5, 5}, w) })),
		A.C("Fold", A.WithInts(func(x *T, i []int) {
			tensor.Fold(tensor.Ones([]int{1, 8, 16}), [2]int{i[0], i[1]}, tensor.Window2d{Kernel: [2]int{2, 2}})
		}, 5, 5)),
		A.C("FromDense", A.One(func() {
			tensor.FromDense(nil)
			tensor.FromDense(&mat.Dense{})
			tensor.FromDense(mat.NewDense(1, 1, nil), nil)
		})),
		A.C("Generator.SetState", A.One(func() { var g *tensor.Generator; g.SetState(1, 2) })),
		A.C("Generator.State", A.One(func() { var g *tensor.Generator; g.State() })),
		A.C("MaxPool2d", windowed(func(x *T, w tensor.Window2d) { tensor.MaxPool2d(x, w) })),
		A.C("MaxPool2dWithIndices", windowed(func(x *T, w tensor.Window2d) { tensor.MaxPool2dWithIndices(x, w) })),
		A.C("Tensor.Dense", A.Each(func(x *T) { x.Dense() })),
		A.C("Unfold", windowed(func(x *T, w tensor.Window2d) { tensor.Unfold(x, w) })),
	}
}
