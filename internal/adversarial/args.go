package adversarial

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/tensor"
)

// env is the GPU the argument helpers use, set by Run.
var env struct {
	gpu    tensor.Device
	hasGPU bool
}

// An Arg is a named adversarial tensor argument.
type Arg struct {
	Name string
	T    *tensor.Tensor
}

// Tensors returns fresh adversarial tensors: nil, released, 0-d, empty,
// of every dtype, of a mismatched shape, an expanded (stride-0) view, a
// leaf that requires grad, one holding NaN and ±Inf and, when a GPU
// opens, one on the GPU. The ordinary ones are 2×3.
func Tensors() []Arg {
	released := tensor.Ones([]int{2, 3})
	released.Release()
	args := []Arg{
		{"nil", nil},
		{"released", released},
		{"0-d", tensor.Scalar(2, tensor.Float32, tensor.CPU)},
		{"[0]", tensor.Zeros([]int{0})},
		{"[3 0]", tensor.Zeros([]int{3, 0})},
		{"[2 3]", tensor.Full([]int{2, 3}, 0.5)},
		{"int32", tensor.Full([]int{2, 3}, 1, tensor.Of(tensor.Int32))},
		{"bool", tensor.Full([]int{2, 3}, 1, tensor.Of(tensor.Bool))},
		{"float64", tensor.Full([]int{2, 3}, 2, tensor.Of(tensor.Float64))},
		{"[5]", tensor.Ones([]int{5})},
		{"expanded", tensor.Ones([]int{1, 3}).Expand(2, 3)},
		{"leaf", tensor.Ones([]int{2, 3}).SetRequiresGrad(true)},
		{"nan", tensor.New([]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, -0, 1e38}, 2, 3)},
	}
	if env.hasGPU {
		args = append(args, Arg{"gpu", tensor.Full([]int{2, 3}, 0.5, tensor.On(env.gpu))})
	}
	return args
}

// Index returns an ordinary Int32 index tensor: [0 1] as 1-D.
func Index() *tensor.Tensor { return tensor.New([]int32{0, 1}) }

// Ints are adversarial int arguments.
var Ints = []int{-1, -7, 0, 1, 2, math.MaxInt, math.MinInt, 1 << 40, math.MaxInt32 + 1}

// Floats are adversarial float arguments.
var Floats = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64, math.Copysign(0, -1), 0.5, -1, 1e10}

// Shapes are adversarial shapes.
var Shapes = [][]int{nil, {}, {-1}, {0}, {3, 0}, {2, 3}, {1 << 62, 4}, {math.MaxInt}, {1 << 32, 1 << 32}, {-2, -3}}

// Each calls f with each adversarial tensor.
func Each(f func(x *tensor.Tensor)) func(Try) {
	return func(try Try) {
		for _, a := range Tensors() {
			try(a.Name, func() { f(a.T) })
		}
	}
}

// Pairs calls f with every pair of adversarial tensors.
func Pairs(f func(x, y *tensor.Tensor)) func(Try) {
	return func(try Try) {
		xs, ys := Tensors(), Tensors()
		for _, a := range xs {
			for _, b := range ys {
				try(a.Name+", "+b.Name, func() { f(a.T, b.T) })
			}
		}
	}
}

// Triples calls f with x, y and z adversarial in turn, the other two
// ordinary.
func Triples(f func(x, y, z *tensor.Tensor)) func(Try) {
	return func(try Try) {
		for i := range 3 {
			for _, a := range Tensors() {
				args := []*tensor.Tensor{tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 3})}
				args[i] = a.T
				try(fmt.Sprintf("argument %d %s", i+1, a.Name), func() { f(args[0], args[1], args[2]) })
			}
		}
	}
}

// Tuples returns defaults and, for each position, defaults with that
// position replaced by each adversarial int.
func Tuples(defaults ...int) [][]int {
	out := [][]int{defaults}
	for i := range defaults {
		for _, v := range Ints {
			t := append([]int(nil), defaults...)
			t[i] = v
			out = append(out, t)
		}
	}
	return out
}

// WithInts calls f with each adversarial tensor and with an ordinary
// tensor and each of Tuples(defaults...).
func WithInts(f func(x *tensor.Tensor, ints []int), defaults ...int) func(Try) {
	return func(try Try) {
		for _, a := range Tensors() {
			try(fmt.Sprint(a.Name, defaults), func() { f(a.T, defaults) })
		}
		for _, ints := range Tuples(defaults...) {
			x := tensor.Ones([]int{2, 3})
			try(fmt.Sprint("[2 3] ", ints), func() { f(x, ints) })
		}
	}
}

// WithFloats calls f with each adversarial tensor and ordinary floats
// fs, and with an ordinary tensor and fs with each position replaced by
// each adversarial float.
func WithFloats(f func(x *tensor.Tensor, fs []float64), fs ...float64) func(Try) {
	return func(try Try) {
		for _, a := range Tensors() {
			try(fmt.Sprint(a.Name, fs), func() { f(a.T, fs) })
		}
		for i := range fs {
			for _, v := range Floats {
				g := append([]float64(nil), fs...)
				g[i] = v
				for _, x := range []*tensor.Tensor{tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 3}, tensor.Of(tensor.Int32))} {
					try(fmt.Sprint(x.DType(), g), func() { f(x, g) })
				}
			}
		}
	}
}

// WithShapes calls f with each adversarial shape.
func WithShapes(f func(shape []int)) func(Try) {
	return func(try Try) {
		for _, s := range Shapes {
			try(fmt.Sprint(s), func() { f(s) })
		}
	}
}

// WithDims calls f with each adversarial tensor and dims [1], and with
// an ordinary tensor and adversarial dims lists (nil, empty, repeated,
// out of range).
func WithDims(f func(x *tensor.Tensor, dims []int)) func(Try) {
	return func(try Try) {
		for _, a := range Tensors() {
			try(a.Name, func() { f(a.T, []int{1}) })
		}
		for _, d := range [][]int{nil, {}, {0, 0}, {-1}, {2}, {-3}, {math.MaxInt}, {math.MinInt}, {0, 1}, {1, -1}} {
			x := tensor.Ones([]int{2, 3})
			try(fmt.Sprint("[2 3] ", d), func() { f(x, d) })
		}
	}
}
