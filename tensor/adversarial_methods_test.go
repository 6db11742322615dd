package tensor_test

import (
	"math"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/tensor"
)

// Shorthands for the case tables of Tensor's methods.

func un(f func(*T) *T) func(A.Try) { return A.Each(func(x *T) { f(x) }) }

func bin(f func(x, y *T) *T) func(A.Try) { return A.Pairs(func(x, y *T) { f(x, y) }) }

func sc(f func(*T, float64) *T) func(A.Try) {
	return A.WithFloats(func(x *T, s []float64) { f(x, s[0]) }, 1)
}

func sc2(f func(x *T, a, b float64) *T, a, b float64) func(A.Try) {
	return A.WithFloats(func(x *T, s []float64) { f(x, s[0], s[1]) }, a, b)
}

func ints(f func(x *T, i []int), defaults ...int) func(A.Try) { return A.WithInts(f, defaults...) }

func dims(f func(x *T, d []int)) func(A.Try) { return A.WithDims(f) }

// binAlpha calls f with adversarial pairs and an adversarial scalar.
func binAlpha(f func(x, y *T, s float64) *T) func(A.Try) {
	return func(try A.Try) {
		bin(func(x, y *T) *T { return f(x, y, 1) })(try)
		sc(func(x *T, s float64) *T { return f(x, tensor.Ones([]int{2, 3}), s) })(try)
	}
}

// inPlace calls f on a fresh tensor per adversarial argument pair.
func inPlace(f func(t, y *T) *T) func(A.Try) { return bin(f) }

func adversarialMethods() []A.Case {
	return []A.Case{
		A.C("Tensor.Abs", un((*T).Abs)),
		A.C("Tensor.Add", bin((*T).Add)),
		A.C("Tensor.AddInPlace", binAlpha((*T).AddInPlace)),
		A.C("Tensor.AddScalar", sc((*T).AddScalar)),
		A.C("Tensor.AddScalarInPlace", sc((*T).AddScalarInPlace)),
		A.C("Tensor.AddScaled", binAlpha((*T).AddScaled)),
		A.C("Tensor.AddcdivInPlace", A.Triples(func(a, b, c *T) { a.AddcdivInPlace(b, c, math.NaN()) })),
		A.C("Tensor.AddcmulInPlace", A.Triples(func(a, b, c *T) { a.AddcmulInPlace(b, c, -1) })),
		A.C("Tensor.Amax", dims(func(x *T, d []int) { x.Amax(d, true) })),
		A.C("Tensor.Amin", dims(func(x *T, d []int) { x.Amin(d, false) })),
		A.C("Tensor.ArgMax", un((*T).ArgMax)),
		A.C("Tensor.ArgMaxDim", ints(func(x *T, i []int) { x.ArgMaxDim(i[0], i[1] > 0) }, 1, 0)),
		A.C("Tensor.ArgMin", un((*T).ArgMin)),
		A.C("Tensor.ArgMinDim", ints(func(x *T, i []int) { x.ArgMinDim(i[0], i[1] > 0) }, 0, 1)),
		A.C("Tensor.BMM", bin((*T).BMM)),
		A.C("Tensor.Bools", A.Each(func(x *T) { x.Bools() })),
		A.C("Tensor.BroadcastTo", ints(func(x *T, i []int) { x.BroadcastTo(i...) }, 4, 2, 3)),
		A.C("Tensor.Cast", A.Each(func(x *T) {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool, tensor.DType(42)} {
				tensor.Catch(func() { x.Cast(dt) })
			}
		})),
		A.C("Tensor.Chunk", ints(func(x *T, i []int) { x.Chunk(i[0], i[1]) }, 2, 1)),
		A.C("Tensor.Clamp", sc2((*T).Clamp, 0, 1)),
		A.C("Tensor.ClampInPlace", sc2((*T).ClampInPlace, -1, 1)),
		A.C("Tensor.ClampMax", sc((*T).ClampMax)),
		A.C("Tensor.ClampMin", sc((*T).ClampMin)),
		A.C("Tensor.Clone", un((*T).Clone)),
		A.C("Tensor.Context", A.Each(func(x *T) { x.Context() })),
		A.C("Tensor.Contiguous", un((*T).Contiguous)),
		A.C("Tensor.CopyFrom", inPlace((*T).CopyFrom)),
		A.C("Tensor.Cos", un((*T).Cos)),
		A.C("Tensor.CumSum", ints(func(x *T, i []int) { x.CumSum(i[0]) }, 1)),
		A.C("Tensor.DType", A.Each(func(x *T) { x.DType() })),
		A.C("Tensor.Detach", un((*T).Detach)),
		A.C("Tensor.Device", A.Each(func(x *T) { x.Device() })),
		A.C("Tensor.Dim", A.Each(func(x *T) { x.Dim() })),
		A.C("Tensor.Div", bin((*T).Div)),
		A.C("Tensor.DivInPlace", inPlace((*T).DivInPlace)),
		A.C("Tensor.DivScalar", sc((*T).DivScalar)),
		A.C("Tensor.Double", un((*T).Double)),
		A.C("Tensor.Eq", bin((*T).Eq)),
		A.C("Tensor.EqScalar", sc((*T).EqScalar)),
		A.C("Tensor.Erf", un((*T).Erf)),
		A.C("Tensor.Exp", un((*T).Exp)),
		A.C("Tensor.Expm1", un((*T).Expm1)),
		A.C("Tensor.Expand", ints(func(x *T, i []int) { x.Expand(i...) }, 2, 2, 3)),
		A.C("Tensor.Fill", sc((*T).Fill)),
		A.C("Tensor.Flatten", ints(func(x *T, i []int) { x.Flatten(i[0], i[1]) }, 0, -1)),
		A.C("Tensor.Float", un((*T).Float)),
		A.C("Tensor.Float32s", A.Each(func(x *T) { x.Float32s() })),
		A.C("Tensor.Float64s", A.Each(func(x *T) { x.Float64s() })),
		A.C("Tensor.GELU", un((*T).GELU)),
		A.C("Tensor.GELUTanh", un((*T).GELUTanh)),
		A.C("Tensor.Gather", indexed(func(x *T, d int, idx *T) { x.Gather(d, idx) })),
		A.C("Tensor.Ge", bin((*T).Ge)),
		A.C("Tensor.GeScalar", sc((*T).GeScalar)),
		A.C("Tensor.Grad", A.Each(func(x *T) { x.Grad() })),
		A.C("Tensor.Gt", bin((*T).Gt)),
		A.C("Tensor.GtScalar", sc((*T).GtScalar)),
		A.C("Tensor.Hooks", A.Each(func(x *T) { x.Hooks() })),
		A.C("Tensor.IndexAdd", indexed(func(x *T, d int, idx *T) { x.IndexAdd(d, idx, tensor.Ones([]int{2, 3})) })),
		A.C("Tensor.IndexAdd", A.Triples(func(x, idx, src *T) { x.IndexAdd(0, idx, src) })),
		A.C("Tensor.IndexAmax", indexed(func(x *T, d int, idx *T) { x.IndexAmax(d, idx, tensor.Ones([]int{2, 3})) })),
		A.C("Tensor.IndexAmax", A.Triples(func(x, idx, src *T) { x.IndexAmax(0, idx, src) })),
		A.C("Tensor.IndexSelect", indexed(func(x *T, d int, idx *T) { x.IndexSelect(d, idx) })),
		A.C("Tensor.Int32s", A.Each(func(x *T) { x.Int32s() })),
		A.C("Tensor.IsContiguous", A.Each(func(x *T) { x.IsContiguous() })),
		A.C("Tensor.OwnsStorage", A.Each(func(x *T) { x.OwnsStorage() })),
		A.C("Tensor.IsLeaf", A.Each(func(x *T) { x.IsLeaf() })),
		A.C("Tensor.Item", A.Each(func(x *T) { x.Item() })),
		A.C("Tensor.Keep", un((*T).Keep)),
		A.C("Tensor.Le", bin((*T).Le)),
		A.C("Tensor.LeScalar", sc((*T).LeScalar)),
		A.C("Tensor.Log", un((*T).Log)),
		A.C("Tensor.Log1p", un((*T).Log1p)),
		A.C("Tensor.LogSoftmax", ints(func(x *T, i []int) { x.LogSoftmax(i[0]) }, 1)),
		A.C("Tensor.LogSumExp", dims(func(x *T, d []int) { x.LogSumExp(d, true) })),
		A.C("Tensor.LogicalAnd", bin((*T).LogicalAnd)),
		A.C("Tensor.LogicalNot", un((*T).LogicalNot)),
		A.C("Tensor.LogicalOr", bin((*T).LogicalOr)),
		A.C("Tensor.Lt", bin((*T).Lt)),
		A.C("Tensor.LtScalar", sc((*T).LtScalar)),
		A.C("Tensor.MaskedFill", A.Pairs(func(x, m *T) { x.MaskedFill(m, math.NaN()) })),
		A.C("Tensor.MaskedFill", sc(func(x *T, v float64) *T { return x.MaskedFill(tensor.Ones([]int{3}, tensor.Of(tensor.Bool)), v) })),
		A.C("Tensor.MatMul", bin((*T).MatMul)),
		A.C("Tensor.Max", un((*T).Max)),
		A.C("Tensor.MaxDim", ints(func(x *T, i []int) { x.MaxDim(i[0], true) }, 1)),
		A.C("Tensor.Maximum", bin((*T).Maximum)),
		A.C("Tensor.Mean", dims(func(x *T, d []int) { x.Mean(d...) })),
		A.C("Tensor.MeanDims", dims(func(x *T, d []int) { x.MeanDims(d, true) })),
		A.C("Tensor.Min", un((*T).Min)),
		A.C("Tensor.MinDim", ints(func(x *T, i []int) { x.MinDim(i[0], false) }, 0)),
		A.C("Tensor.Minimum", bin((*T).Minimum)),
		A.C("Tensor.Mul", bin((*T).Mul)),
		A.C("Tensor.MulInPlace", inPlace((*T).MulInPlace)),
		A.C("Tensor.MulScalar", sc((*T).MulScalar)),
		A.C("Tensor.MulScalarInPlace", sc((*T).MulScalarInPlace)),
	}
}

// indexed calls f with each adversarial tensor as x (index [0 1]), each
// adversarial tensor as the index, index values out of range, and
// adversarial dims.
func indexed(f func(x *T, dim int, idx *T)) func(A.Try) {
	return func(try A.Try) {
		for _, a := range A.Tensors() {
			try("x "+a.Name, func() { f(a.T, 0, A.Index()) })
			try("index "+a.Name, func() { f(tensor.Ones([]int{2, 3}), 0, a.T) })
		}
		for _, v := range []int32{-1, 2, 3, math.MaxInt32, math.MinInt32} {
			try("index value", func() { f(tensor.Ones([]int{2, 3}), 1, tensor.New([]int32{0, v})) })
			try("index value 2-D", func() { f(tensor.Ones([]int{2, 3}), 1, tensor.New([]int32{0, v, 1, 0, 0, 0}, 2, 3)) })
		}
		for _, d := range A.Ints {
			try("dim", func() { f(tensor.Ones([]int{2, 3}), d, A.Index()) })
		}
	}
}
