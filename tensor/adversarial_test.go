package tensor_test

import (
	"math"
	"slices"
	"testing"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestAdversarialArguments calls every exported function and method of
// package tensor (the list is checked against go/doc, so a new export
// without a case fails) with adversarial arguments: nil, released, 0-d
// and empty tensors, mismatched shapes, dtypes and devices, negative and
// huge ints, NaN and ±Inf scalars, nil slices and bad options. Each call
// must return or panic with a *tensor.Error, within a time limit.
func TestAdversarialArguments(t *testing.T) {
	restore := tensor.SetCPUBudget(1 << 30)
	defer restore()
	gpu, ok := devtest.GPU(t)
	cases := slices.Concat(adversarialFuncs(), adversarialMethods(), adversarialMethods2(), adversarialConv(), adversarialAttention())
	A.Run(t, ".", gpu, ok, cases)
}

type T = tensor.Tensor

// withOpts calls f with each adversarial option list: none, nil, a bad
// dtype, a bad device, a nil context, a nil generator, each dtype, and
// Like of each adversarial tensor.
func withOpts(f func(opts ...tensor.Option)) func(A.Try) {
	return func(try A.Try) {
		lists := [][]tensor.Option{nil, {nil}, {tensor.Of(tensor.DType(42))}, {tensor.On(tensor.GPU(-1))}, {tensor.On(tensor.Device{Kind: 9})},
			{tensor.In(nil)}, {tensor.WithGenerator(nil)}, {tensor.Of(tensor.Int32)}, {tensor.Of(tensor.Bool)}, {tensor.Of(tensor.Float64)}}
		for _, a := range A.Tensors() {
			lists = append(lists, []tensor.Option{tensor.Like(a.T)})
		}
		for i, l := range lists {
			try("options "+string(rune('a'+i)), func() { f(l...) })
		}
	}
}

// withShapeOpts calls f with each adversarial shape and ordinary
// options, and with shape [2 3] and each adversarial option list.
func withShapeOpts(f func(shape []int, opts ...tensor.Option)) func(A.Try) {
	return func(try A.Try) {
		A.WithShapes(func(s []int) { f(s) })(try)
		withOpts(func(o ...tensor.Option) { f([]int{2, 3}, o...) })(try)
	}
}

// withFloatsOpts calls f with each of fs replaced by each adversarial
// float, and with ordinary fs and each adversarial option list.
func withFloatsOpts(f func(fs []float64, opts ...tensor.Option), fs ...float64) func(A.Try) {
	return func(try A.Try) {
		A.WithFloats(func(_ *T, g []float64) { f(g) }, fs...)(try)
		withOpts(func(o ...tensor.Option) { f(fs, o...) })(try)
	}
}

func adversarialFuncs() []A.Case {
	g := func(f func()) func(A.Try) { return A.One(f) }
	return []A.Case{
		A.C("Addcdiv", A.Triples(func(a, b, c *T) { tensor.Addcdiv(a, b, c, math.NaN()) })),
		A.C("Addcmul", A.Triples(func(a, b, c *T) { tensor.Addcmul(a, b, c, math.Inf(1)) })),
		A.C("Addmm", A.Triples(func(a, b, c *T) { tensor.Addmm(a, b, c) })),
		A.C("AddmmReLU", A.Triples(func(a, b, c *T) { tensor.AddmmReLU(a, b, c) })),
		A.C("Adopt", A.Each(func(x *T) { tensor.Adopt(x) })),
		A.C("ReLUBackward", A.Pairs(func(g, y *T) { tensor.ReLUBackward(g, y) })),
		A.C("Arange", withFloatsOpts(func(f []float64, o ...tensor.Option) { tensor.Arange(f[0], f[1], f[2], o...) }, 0, 5, 1)),
		A.C("Available", g(func() { _ = tensor.Available(tensor.GPU(-1)); _ = tensor.Available(tensor.Device{Kind: 7}) })),
		A.C("Bernoulli", A.Each(func(x *T) { tensor.Bernoulli(x) })),
		A.C("CPUBudget", g(func() { _, _ = tensor.CPUBudget() })),
		A.C("CPUBudgetInfo", g(func() { _, _ = tensor.CPUBudgetInfo() })),
		A.C("BudgetInfo.String", g(func() {
			_ = tensor.BudgetInfo{}.String()
			_ = tensor.BudgetInfo{Bytes: -1, Limit: math.MaxInt64, Used: -1, Headroom: 1, GoMemoryLimit: -1}.String()
		})),
		A.C("CPUMemory", g(func() { _ = tensor.CPUMemory() })),
		A.C("CheckHostMemory", func(try A.Try) {
			for _, n := range A.Ints {
				for _, size := range A.Ints {
					try("ints", func() { _ = tensor.CheckHostMemory("op", n, size) })
				}
			}
		}),
		A.C("Cat", catLike(tensor.Cat)),
		A.C("Catch", g(func() { _ = tensor.Catch(nil) })),
		A.C("DefaultContext", g(func() { tensor.DefaultContext().NoGrad(nil) })),
		A.C("DefaultDevice", g(func() { _, _, _ = tensor.DefaultDevice() })),
		A.C("EmptyCache", g(tensor.EmptyCache)),
		A.C("Fusion", g(func() { _ = tensor.Fusion() })),
		A.C("ReadCounters", g(func() { _ = tensor.ReadCounters() })),
		A.C("Realize", A.Each(func(x *T) { tensor.Realize(x, nil) })),
		A.C("SetFusion", g(func() { tensor.SetFusion(tensor.SetFusion(true)) })),
		A.C("EnableGrad", g(func() { tensor.EnableGrad(nil) })),
		A.C("Eye", intsOpts(func(i []int, o ...tensor.Option) { tensor.Eye(i[0], o...) }, 3)),
		A.C("From", withShapeOpts(func(s []int, o ...tensor.Option) { tensor.From([]float32{1, 2, 3, 4, 5, 6}, s, o...) })),
		A.C("FromInt64s", A.WithShapes(func(s []int) { tensor.FromInt64s([]int64{1, math.MaxInt64, -1 << 40}, s...) })),
		A.C("FromInts", A.WithShapes(func(s []int) { tensor.FromInts([]int{1, math.MaxInt, math.MinInt}, s...) })),
		A.C("Full", withFloatsShape(func(s []int, v float64, o ...tensor.Option) { tensor.Full(s, v, o...) })),
		A.C("FullLike", likeFloat(func(x *T, v float64, o ...tensor.Option) { tensor.FullLike(x, v, o...) })),
		A.C("GPU", A.WithInts(func(_ *T, i []int) { tensor.Zeros([]int{1}, tensor.On(tensor.GPU(i[0]))) }, -1)),
		A.C("GPUDevice", g(func() { _, _ = tensor.GPUDevice(tensor.GPU(-1)); _, _ = tensor.GPUDevice(tensor.CPU) })),
		A.C("GradEnabled", g(func() { tensor.GradEnabled() })),
		A.C("In", g(func() { tensor.Zeros([]int{2}, tensor.In(nil)) })),
		A.C("Like", A.Each(func(x *T) { tensor.Zeros([]int{2}, tensor.Like(x)) })),
		A.C("Linspace", withFloatsOpts(func(f []float64, o ...tensor.Option) { tensor.Linspace(f[0], f[1], int(f[2]), o...) }, 0, 1, 5)),
		A.C("Linspace", A.WithInts(func(_ *T, i []int) { tensor.Linspace(0, 1, i[0]) }, 3)),
		A.C("ManualSeed", g(func() { tensor.ManualSeed(math.MaxUint64); tensor.ManualSeed(0) })),
		A.C("Multinomial", multinomial),
		A.C("New", A.WithShapes(func(s []int) { tensor.New([]float64{1, 2, 3, 4, 5, 6}, s...) })),
		A.C("NewError", A.Each(func(x *T) { _ = tensor.NewError("Op", nil, "", x, nil).Error() })),
		A.C("NewContext", g(func() { tensor.NewContext().Scope(nil) })),
		A.C("NewGenerator", g(func() { tensor.Rand([]int{2}, tensor.WithGenerator(tensor.NewGenerator(math.MaxUint64))) })),
		A.C("NoGrad", g(func() { tensor.NoGrad(nil) })),
		A.C("Normal", withFloatsOpts(func(f []float64, o ...tensor.Option) { tensor.Normal([]int{2}, f[0], f[1], o...) }, 0, 1)),
		A.C("Of", g(func() { tensor.Zeros([]int{2}, tensor.Of(tensor.DType(200))) })),
		A.C("On", g(func() { tensor.Zeros([]int{2}, tensor.On(tensor.Device{Kind: 3, Index: -4})) })),
		A.C("OneHot", A.WithInts(func(x *T, i []int) { tensor.OneHot(x, i[0]) }, 3)),
		A.C("OneHot", A.WithInts(func(_ *T, i []int) { tensor.OneHot(A.Index(), i[0]) }, 3)),
		A.C("Ones", withShapeOpts(func(s []int, o ...tensor.Option) { tensor.Ones(s, o...) })),
		A.C("OnesLike", likeFloat(func(x *T, _ float64, o ...tensor.Option) { tensor.OnesLike(x, o...) })),
		A.C("Ops", g(func() { tensor.Ops() })),
		A.C("ParseDevice", parseDevice),
		A.C("PromoteTypes", g(func() { tensor.PromoteTypes(tensor.DType(9), tensor.Float32) })),
		A.C("Rand", withShapeOpts(func(s []int, o ...tensor.Option) { tensor.Rand(s, o...) })),
		A.C("RandInt", A.WithInts(func(_ *T, i []int) { tensor.RandInt(i[0], i[1], []int{i[2]}) }, 0, 5, 3)),
		A.C("RandLike", likeFloat(func(x *T, _ float64, o ...tensor.Option) { tensor.RandLike(x, o...) })),
		A.C("Randn", withShapeOpts(func(s []int, o ...tensor.Option) { tensor.Randn(s, o...) })),
		A.C("RandnLike", likeFloat(func(x *T, _ float64, o ...tensor.Option) { tensor.RandnLike(x, o...) })),
		A.C("Scalar", A.WithFloats(func(_ *T, f []float64) {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Bool, tensor.DType(42)} {
				tensor.Catch(func() { tensor.Scalar(f[0], dt, tensor.CPU) })
			}
			tensor.Scalar(f[0], tensor.Float32, tensor.GPU(-1))
		}, 1)),
		A.C("Scope", g(func() { tensor.Scope(nil) })),
		A.C("ScopeKeep", g(func() { tensor.ScopeKeep(nil); tensor.ScopeKeep(func() []*T { return []*T{nil} }) })),
		A.C("ScopeResult", g(func() { tensor.ScopeResult(nil); tensor.ScopeResult(func() *T { return nil }) })),
		A.C("SliceScatter", A.WithInts(func(x *T, i []int) { tensor.SliceScatter(x, []int{i[0], 3}, i[1], i[2], i[3], i[4]) }, 2, 0, 0, 2, 1)),
		A.C("Stack", catLike(tensor.Stack)),
		A.C("Sync", g(func() { _ = tensor.Sync(tensor.GPU(-1)); _ = tensor.Sync(tensor.Device{Kind: 5}) })),
		A.C("TestGPU", g(func() { _, _ = tensor.TestGPU() })),
		A.C("Uniform", withFloatsOpts(func(f []float64, o ...tensor.Option) { tensor.Uniform([]int{2}, f[0], f[1], o...) }, 0, 1)),
		A.C("Where", A.Triples(func(c, x, y *T) { tensor.Where(c, x, y) })),
		A.C("WithGenerator", g(func() { tensor.Rand([]int{2}, tensor.WithGenerator(nil)) })),
		A.C("Zeros", withShapeOpts(func(s []int, o ...tensor.Option) { tensor.Zeros(s, o...) })),
		A.C("ZerosLike", likeFloat(func(x *T, _ float64, o ...tensor.Option) { tensor.ZerosLike(x, o...) })),

		// Methods of the value types.
		A.C("Context.Adopt", A.Each(func(x *T) { tensor.NewContext().Adopt(x) })),
		A.C("Context.EnableGrad", g(func() { var c *tensor.Context; c.EnableGrad(func() {}) })),
		A.C("Context.GradEnabled", g(func() { var c *tensor.Context; c.GradEnabled() })),
		A.C("Context.NoGrad", g(func() { var c *tensor.Context; c.NoGrad(func() {}) })),
		A.C("Context.Scope", g(func() { var c *tensor.Context; c.Scope(func() {}) })),
		A.C("Context.ScopeKeep", g(func() { tensor.NewContext().ScopeKeep(func() []*T { return []*T{nil, tensor.Ones([]int{1})} }) })),
		A.C("Context.ScopeResult", g(func() { var c *tensor.Context; c.ScopeResult(func() *T { return nil }) })),
		A.C("DType.IsFloat", g(func() { _ = tensor.DType(42).IsFloat() })),
		A.C("DType.Size", g(func() { _ = tensor.DType(42).Size() })),
		A.C("DType.String", g(func() { _ = tensor.DType(255).String() })),
		A.C("Device.String", g(func() { _ = tensor.Device{Kind: 9, Index: -3}.String() })),
		A.C("Device.Holds", g(func() { tensor.Device{Kind: 9}.Holds(tensor.DType(42)); tensor.GPU(-1).Holds(tensor.Float64) })),
		A.C("Error.Error", g(func() { var e *tensor.Error; _ = (&tensor.Error{}).Error(); _ = e.Error() })),
		A.C("Error.Unwrap", g(func() { var e *tensor.Error; _ = (&tensor.Error{}).Unwrap(); _ = e.Unwrap() })),
		A.C("Generator.Seed", g(func() { var gen *tensor.Generator; gen.Seed(1) })),
		A.C("Node.Free", nodeCase(func(n *tensor.Node) { n.Free(); n.Free() })),
		A.C("Node.Freed", nodeCase(func(n *tensor.Node) { n.Freed() })),
		A.C("Node.Input", nodeCase(func(n *tensor.Node) { n.Input(-1); n.Input(math.MaxInt) })),
		A.C("Node.Output", nodeCase(func(n *tensor.Node) { n.Output() })),
		A.C("OOMError.Error", g(func() { var e *tensor.OOMError; _ = (&tensor.OOMError{}).Error(); _ = e.Error() })),
		A.C("OOMError.Unwrap", g(func() { var e *tensor.OOMError; _ = (&tensor.OOMError{}).Unwrap(); _ = e.Unwrap() })),
		A.C("Op.Differentiable", g(func() { tensor.Op(250).Differentiable() })),
		A.C("Op.IsBinary", g(func() { tensor.Op(250).IsBinary() })),
		A.C("Op.IsUnary", g(func() { tensor.Op(250).IsUnary() })),
		A.C("Op.String", g(func() { _ = tensor.Op(250).String() })),
		A.C("Op.WGSL", g(func() { _ = tensor.Op(250).WGSL(); _ = tensor.OpNone.WGSL() })),
	}
}

// catLike calls f (Cat or Stack) with lists holding each adversarial
// tensor beside an ordinary one, nil and empty lists, and bad dims.
func catLike(f func([]*T, int) *T) func(A.Try) {
	return func(try A.Try) {
		try("nil list", func() { f(nil, 0) })
		try("empty list", func() { f([]*T{}, 0) })
		for _, a := range A.Tensors() {
			try(a.Name, func() { f([]*T{tensor.Ones([]int{2, 3}), a.T}, 0) })
		}
		for _, d := range A.Ints {
			try("dim", func() { f([]*T{tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 3})}, d) })
		}
	}
}

// intsOpts calls f with Tuples(defaults) and ordinary options, and with
// the defaults and each adversarial option list.
func intsOpts(f func(ints []int, opts ...tensor.Option), defaults ...int) func(A.Try) {
	return func(try A.Try) {
		for _, i := range A.Tuples(defaults...) {
			try("ints", func() { f(i) })
		}
		withOpts(func(o ...tensor.Option) { f(defaults, o...) })(try)
	}
}

// withFloatsShape calls f with adversarial shapes, values and options.
func withFloatsShape(f func(shape []int, v float64, opts ...tensor.Option)) func(A.Try) {
	return func(try A.Try) {
		A.WithShapes(func(s []int) { f(s, 1) })(try)
		for _, v := range A.Floats {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool} {
				try("value", func() { f([]int{2}, v, tensor.Of(dt)) })
			}
		}
		withOpts(func(o ...tensor.Option) { f([]int{2, 3}, 1, o...) })(try)
	}
}

// likeFloat calls f (a *Like function) with each adversarial tensor and
// each adversarial float and option list.
func likeFloat(f func(x *T, v float64, opts ...tensor.Option)) func(A.Try) {
	return func(try A.Try) {
		A.WithFloats(func(x *T, v []float64) { f(x, v[0]) }, 1)(try)
		withOpts(func(o ...tensor.Option) { f(tensor.Ones([]int{2}), 1, o...) })(try)
	}
}

// nodeCase calls f with the Node of a recorded op, a nil Node, and the
// Node of a released output.
func nodeCase(f func(n *tensor.Node)) func(A.Try) {
	return func(try A.Try) {
		leaf := tensor.Ones([]int{2}).SetRequiresGrad(true)
		try("recorded", func() { f(leaf.Exp().Source()) })
		try("nil", func() { f(nil) })
		try("released output", func() {
			y := leaf.Exp()
			n := y.Source()
			y.Release()
			f(n)
		})
	}
}

func multinomial(try A.Try) {
	for _, a := range A.Tensors() {
		try(a.Name, func() { tensor.Multinomial(a.T, 1, false) })
	}
	for _, n := range A.Ints {
		try("n", func() { tensor.Multinomial(tensor.Ones([]int{3}), n, n%2 == 0) })
	}
	for _, p := range A.Floats {
		try("weight", func() { tensor.Multinomial(tensor.New([]float64{1, p}), 1, true) })
	}
	try("options", func() { tensor.Multinomial(tensor.Ones([]int{3}), 1, true, nil, tensor.Of(tensor.Bool)) })
}

func parseDevice(try A.Try) {
	for _, s := range []string{"", "gpu:-1", "gpu:99999999999999999999", "cpu:1", "tpu", "gpu:", ":", "gpu:0x1", "GPU:0"} {
		try(s, func() { _, _ = tensor.ParseDevice(s) })
	}
}
