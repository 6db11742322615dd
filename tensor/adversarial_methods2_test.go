package tensor_test

import (
	"math"

	A "github.com/tessera-ml/tessera/internal/adversarial"
	"github.com/tessera-ml/tessera/tensor"
)

func adversarialMethods2() []A.Case {
	return []A.Case{
		A.C("Tensor.Narrow", ints(func(x *T, i []int) { x.Narrow(i[0], i[1], i[2]) }, 1, 0, 2)),
		A.C("Tensor.Ne", bin((*T).Ne)),
		A.C("Tensor.NeScalar", sc((*T).NeScalar)),
		A.C("Tensor.Neg", un((*T).Neg)),
		A.C("Tensor.Norm", dims(func(x *T, d []int) { x.Norm(2, d, false) })),
		A.C("Tensor.Norm", sc(func(x *T, p float64) *T { return x.Norm(p, nil, true) })),
		A.C("Tensor.Numel", A.Each(func(x *T) { x.Numel() })),
		A.C("Tensor.Offset", A.Each(func(x *T) { x.Offset() })),
		A.C("Tensor.Outer", bin((*T).Outer)),
		A.C("Tensor.Permute", ints(func(x *T, i []int) { x.Permute(i...) }, 1, 0)),
		A.C("Tensor.Permute", ints(func(x *T, i []int) { x.Permute(i...) }, 0)),
		A.C("Tensor.Pow", bin((*T).Pow)),
		A.C("Tensor.PowScalar", sc((*T).PowScalar)),
		A.C("Tensor.RSub", sc((*T).RSub)),
		A.C("Tensor.ReLU", un((*T).ReLU)),
		A.C("Tensor.RegisterHook", A.Each(func(x *T) { x.RegisterHook(nil) })),
		A.C("HookHandle.Remove", A.Each(func(x *T) {
			var none *tensor.HookHandle
			none.Remove()
			h := x.RegisterHook(func(g *T) *T { return g })
			h.Remove()
			h.Remove()
		})),
		A.C("Tensor.Release", A.Each(func(x *T) { x.Release(); x.Release() })),
		A.C("Tensor.RequiresGrad", A.Each(func(x *T) { x.RequiresGrad() })),
		A.C("Tensor.Reshape", ints(func(x *T, i []int) { x.Reshape(i...) }, 3, -1)),
		A.C("Tensor.RetainGrad", A.Each(func(x *T) { x.RetainGrad() })),
		A.C("Tensor.RetainsGrad", A.Each(func(x *T) { x.RetainsGrad() })),
		A.C("Tensor.Rsqrt", un((*T).Rsqrt)),
		A.C("Tensor.ScatterAdd", indexed(func(x *T, d int, idx *T) { x.ScatterAdd(d, idx, tensor.Ones([]int{2, 3})) })),
		A.C("Tensor.ScatterAdd", A.Triples(func(x, idx, src *T) { x.ScatterAdd(1, idx, src) })),
		A.C("Tensor.Select", ints(func(x *T, i []int) { x.Select(i[0], i[1]) }, 1, 2)),
		A.C("Tensor.SetGrad", A.Pairs(func(x, g *T) { x.SetGrad(g) })),
		A.C("Tensor.SetRequiresGrad", A.Each(func(x *T) { x.SetRequiresGrad(true); x.SetRequiresGrad(false) })),
		A.C("Tensor.Shape", A.Each(func(x *T) { x.Shape() })),
		A.C("Tensor.SharesStorage", A.Pairs(func(x, y *T) { x.SharesStorage(y) })),
		A.C("Tensor.SiLU", un((*T).SiLU)),
		A.C("Tensor.Sigmoid", un((*T).Sigmoid)),
		A.C("Tensor.Sign", un((*T).Sign)),
		A.C("Tensor.Sin", un((*T).Sin)),
		A.C("Tensor.Size", ints(func(x *T, i []int) { x.Size(i[0]) }, -1)),
		A.C("Tensor.Slice", ints(func(x *T, i []int) { x.Slice(i[0], i[1], i[2], i[3]) }, 1, 0, 3, 2)),
		A.C("Tensor.Softmax", ints(func(x *T, i []int) { x.Softmax(i[0]) }, -1)),
		A.C("Tensor.Softplus", sc2((*T).Softplus, 1, 20)),
		A.C("Tensor.Source", A.Each(func(x *T) { x.Source() })),
		A.C("Tensor.Split", ints(func(x *T, i []int) { x.Split(i[0], i[1]) }, 2, 1)),
		A.C("Tensor.SplitSizes", ints(func(x *T, i []int) { x.SplitSizes(i[:2], i[2]) }, 1, 2, 1)),
		A.C("Tensor.SplitSizes", A.Each(func(x *T) { x.SplitSizes(nil, 0) })),
		A.C("Tensor.Sqrt", un((*T).Sqrt)),
		A.C("Tensor.Square", un((*T).Square)),
		A.C("Tensor.Squeeze", ints(func(x *T, i []int) { x.Squeeze(i...) }, 0, 0)),
		A.C("Tensor.Std", ints(func(x *T, i []int) { x.Std([]int{i[0]}, i[1], true) }, 1, 1)),
		A.C("Tensor.Strides", A.Each(func(x *T) { x.Strides() })),
		A.C("Tensor.String", A.Each(func(x *T) { _ = x.String() })),
		A.C("Tensor.Sub", bin((*T).Sub)),
		A.C("Tensor.SubInPlace", inPlace((*T).SubInPlace)),
		A.C("Tensor.SubScalar", sc((*T).SubScalar)),
		A.C("Tensor.SubScaled", binAlpha((*T).SubScaled)),
		A.C("Tensor.Sum", dims(func(x *T, d []int) { x.Sum(d...) })),
		A.C("Tensor.SumDims", dims(func(x *T, d []int) { x.SumDims(d, true) })),
		A.C("Tensor.T", un((*T).T)),
		A.C("Tensor.Tanh", un((*T).Tanh)),
		A.C("Tensor.To", A.Each(func(x *T) {
			for _, d := range []tensor.Device{tensor.CPU, tensor.GPU(-1), {Kind: 9}} {
				tensor.Catch(func() { x.To(d) })
			}
		})),
		A.C("Tensor.Transpose", ints(func(x *T, i []int) { x.Transpose(i[0], i[1]) }, 0, 1)),
		A.C("Tensor.Unsqueeze", ints(func(x *T, i []int) { x.Unsqueeze(i[0]) }, 2)),
		A.C("Tensor.Var", ints(func(x *T, i []int) { x.Var([]int{i[0]}, i[1], false) }, 0, 1)),
		A.C("Tensor.Var", dims(func(x *T, d []int) { x.Var(d, math.MaxInt, true) })),
		A.C("Tensor.Version", A.Each(func(x *T) { x.Version() })),
		A.C("Tensor.View", ints(func(x *T, i []int) { x.View(i...) }, 6)),
		A.C("Tensor.Zero", un((*T).Zero)),
	}
}
