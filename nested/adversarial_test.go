package nested_test

import (
	"math"
	"testing"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

// TestAdversarialArguments calls every exported function and method of
// package nested (checked against go/doc, so a new export without a case
// fails) with adversarial arguments: nil and zero Nested tensors, ones
// over released, empty, 0-d-looking, integer, bool, float64, NaN and GPU
// values, empty components, bad lengths, dims, shapes, scalars and
// functions. Each call must return or panic
// with a *tensor.Error, within a time limit.
func TestAdversarialArguments(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	A.Run(t, ".", gpu, ok, nestedCases())
}

// lengthLists are adversarial lengths.
var lengthLists = [][]int{nil, {}, {-1}, {0}, {1, 1}, {2}, {math.MaxInt}, {math.MaxInt32, math.MaxInt32}, {math.MinInt, 2}, {1 << 40}}

// nesteds returns adversarial Nested tensors: nil, zero, every
// adversarial tensor as the values of one component (where it has rows),
// empty components, and one whose values were released after building.
func nesteds() map[string]*nested.Nested {
	out := map[string]*nested.Nested{"nil": nil, "zero": {}}
	for _, a := range A.Tensors() {
		tensor.Catch(func() { out[a.Name] = nested.FromValues(a.T, []int{a.T.Size(0)}) })
	}
	tensor.Catch(func() { out["empty components"] = nested.FromValues(tensor.Ones([]int{2, 3}), []int{0, 2, 0}) })
	tensor.Catch(func() { out["1-D"] = nested.FromValues(tensor.Ones([]int{3}), []int{1, 2}) })
	tensor.Catch(func() { out["int32 ids"] = nested.FromValues(tensor.New([]int32{0, 5, -1}), []int{2, 1}) })
	released := tensor.Ones([]int{2, 3})
	tensor.Catch(func() { out["released later"] = nested.FromValues(released, []int{1, 1}) })
	released.Release()
	return out
}

// each calls f with every adversarial Nested.
func each(f func(n *nested.Nested)) func(A.Try) {
	return func(try A.Try) {
		for name, n := range nesteds() {
			try(name, func() { f(n) })
		}
	}
}

// withTensor calls f with every adversarial Nested and tensor.
func withTensor(f func(n *nested.Nested, x *T)) func(A.Try) {
	return func(try A.Try) {
		for name, n := range nesteds() {
			for _, a := range A.Tensors() {
				try(name+", "+a.Name, func() { f(n, a.T) })
			}
		}
	}
}

// pairs calls f with every pair of adversarial Nested tensors.
func pairs(f func(a, b *nested.Nested)) func(A.Try) {
	return func(try A.Try) {
		ns := nesteds()
		for an, a := range ns {
			for bn, b := range ns {
				try(an+", "+bn, func() { f(a, b) })
			}
		}
	}
}

// dims calls f with every adversarial Nested and int.
func dims(f func(n *nested.Nested, d int)) func(A.Try) {
	return func(try A.Try) {
		for name, n := range nesteds() {
			for _, d := range A.Ints {
				try(name, func() { f(n, d) })
			}
		}
	}
}

func nestedCases() []A.Case {
	noArgs := func(f func(n *nested.Nested)) func(A.Try) { return each(f) }
	return []A.Case{
		A.C("FromValues", func(try A.Try) {
			for _, a := range A.Tensors() {
				for _, l := range lengthLists {
					try(a.Name, func() { nested.FromValues(a.T, l) })
				}
			}
		}),
		A.C("FromTensors", func(try A.Try) {
			try("nil list", func() { nested.FromTensors(nil) })
			for _, a := range A.Tensors() {
				for _, b := range A.Tensors() {
					try(a.Name+", "+b.Name, func() { nested.FromTensors([]*T{a.T, b.T}) })
				}
			}
		}),
		A.C("FromPadded", func(try A.Try) {
			for _, a := range A.Tensors() {
				for _, l := range lengthLists {
					try(a.Name, func() { nested.FromPadded(a.T, l) })
				}
			}
		}),
		A.C("Cat", func(try A.Try) {
			try("none", func() { nested.Cat(nil, 0) })
			pairs(func(a, b *nested.Nested) {
				for _, d := range A.Ints {
					tensor.Catch(func() { nested.Cat([]*nested.Nested{a, b}, d) })
				}
				nested.Cat([]*nested.Nested{a, b}, 0)
			})(try)
		}),
		A.C("CatComponents", func(try A.Try) {
			try("none", func() { nested.CatComponents(nil) })
			pairs(func(a, b *nested.Nested) { nested.CatComponents([]*nested.Nested{a, b}) })(try)
		}),
		A.C("Embedding", withTensor(func(n *nested.Nested, w *T) { nested.Embedding(w, n) })),
		A.C("Nested.ToPadded", func(try A.Try) {
			for _, v := range A.Floats {
				each(func(n *nested.Nested) { n.ToPadded(v) })(try)
			}
		}),
		A.C("Nested.Unbind", noArgs(func(n *nested.Nested) { n.Unbind() })),
		A.C("Nested.Values", noArgs(func(n *nested.Nested) { n.Values() })),
		A.C("Nested.Len", noArgs(func(n *nested.Nested) { n.Len() })),
		A.C("Nested.Offsets", noArgs(func(n *nested.Nested) { n.Offsets()[0] = 7; n.Sum() })),
		A.C("Nested.Lengths", noArgs(func(n *nested.Nested) { n.Lengths() })),
		A.C("Nested.MaxLength", noArgs(func(n *nested.Nested) { n.MaxLength() })),
		A.C("Nested.RestShape", noArgs(func(n *nested.Nested) { n.RestShape() })),
		A.C("Nested.Dim", noArgs(func(n *nested.Nested) { n.Dim() })),
		A.C("Nested.DType", noArgs(func(n *nested.Nested) { n.DType() })),
		A.C("Nested.Device", noArgs(func(n *nested.Nested) { n.Device() })),
		A.C("Nested.Map", func(try A.Try) {
			each(func(n *nested.Nested) { n.Map(nil) })(try)
			each(func(n *nested.Nested) { n.Map((*T).Exp) })(try)
			each(func(n *nested.Nested) { n.Map(func(*T) *T { return nil }) })(try)
			each(func(n *nested.Nested) { n.Map(func(v *T) *T { return v.Sum() }) })(try)
		}),
		A.C("Nested.Zip", func(try A.Try) {
			pairs(func(a, b *nested.Nested) { a.Zip(b, (*T).Mul) })(try)
			each(func(n *nested.Nested) { n.Zip(n, nil) })(try)
		}),
		A.C("Nested.ZipDense", func(try A.Try) {
			withTensor(func(n *nested.Nested, x *T) { n.ZipDense(x, (*T).Add) })(try)
			each(func(n *nested.Nested) { n.ZipDense(tensor.Ones([]int{1}), nil) })(try)
		}),
		A.C("Nested.MatMul", withTensor(func(n *nested.Nested, w *T) { n.MatMul(w) })),
		A.C("Nested.LayerNorm", func(try A.Try) {
			withTensor(func(n *nested.Nested, w *T) { n.LayerNorm([]int{3}, w, w, 1e-5) })(try)
			for _, s := range A.Shapes {
				for _, eps := range A.Floats {
					each(func(n *nested.Nested) { n.LayerNorm(s, nil, nil, eps) })(try)
				}
			}
		}),
		A.C("Nested.Sum", noArgs(func(n *nested.Nested) { n.Sum() })),
		A.C("Nested.Mean", noArgs(func(n *nested.Nested) { n.Mean() })),
		A.C("Nested.Max", noArgs(func(n *nested.Nested) { n.Max() })),
		A.C("Nested.SumDims", dims(func(n *nested.Nested, d int) { n.SumDims([]int{d, d}, true) })),
		A.C("Nested.MeanDims", dims(func(n *nested.Nested, d int) { n.MeanDims([]int{d}, false) })),
		A.C("Nested.MaxDims", dims(func(n *nested.Nested, d int) { n.MaxDims([]int{d}, true) })),
		A.C("Nested.Softmax", dims(func(n *nested.Nested, d int) { n.Softmax(d) })),
		A.C("Nested.LogSoftmax", dims(func(n *nested.Nested, d int) { n.LogSoftmax(d) })),
		A.C("Nested.String", noArgs(func(n *nested.Nested) { _ = n.String() })),
	}
}
