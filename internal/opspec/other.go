package opspec

import "github.com/tessera-ml/tessera/tensor"

// otherSpecs are the specs of the ops that are not elementwise: one
// representative public call each, and their PyTorch reference cases.
var otherSpecs = []Spec{
	{Op: tensor.OpWhere, Family: "ternary", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return tensor.Where(specMask(x), x, y) }, Torch: torch("where", "masked_fill")},
	{Op: tensor.OpCast, Family: "copy", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Cast(specCastTarget(x.DType())) }, Torch: torch("cast")},
	{Op: tensor.OpCopy, Family: "copy", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Clone() }, Torch: torch("contiguous", "clone")},

	{Op: tensor.OpReshape, Family: "view", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Reshape(3, 2) }, Torch: torch("reshape", "view", "flatten", "squeeze", "unsqueeze")},
	{Op: tensor.OpPermute, Family: "view", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Permute(1, 0) }, Torch: torch("permute", "transpose")},
	{Op: tensor.OpSlice, Family: "view", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Slice(1, 0, 3, 2) }, Torch: torch("slice", "select", "narrow", "split", "chunk")},
	{Op: tensor.OpExpand, Family: "view", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Reshape(1, 2, 3).Expand(2, 2, 3) }, Torch: torch("expand")},
	// tensor.SliceScatter is Slice's adjoint, reached only through the gradients
	// of the slice, select and narrow cases; it has no PyTorch-facing name.
	{Op: tensor.OpSliceScatter, Family: "view", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return tensor.SliceScatter(x, []int{2, 5}, 1, 0, 5, 2) },
		Via: &RefExemption{Via: torch("slice", "select", "narrow"), Note: "slice gradients"}},

	{Op: tensor.OpSum, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Sum() }, Torch: torch("sum")},
	{Op: tensor.OpAmax, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Amax([]int{1}, false) }, Torch: []TorchRef{{Op: "max", Attr: "dim=null"}}},
	{Op: tensor.OpAmin, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Amin([]int{1}, false) }, Torch: []TorchRef{{Op: "min", Attr: "dim=null"}}},
	{Op: tensor.OpMaxDim, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { v, _ := x.MaxDim(1, false); return v }, Torch: []TorchRef{{Op: "max", Attr: "dim=int"}}},
	{Op: tensor.OpMinDim, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { v, _ := x.MinDim(1, false); return v }, Torch: []TorchRef{{Op: "min", Attr: "dim=int"}}},
	{Op: tensor.OpArgMax, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.ArgMaxDim(1, false) }, Torch: torch("argmax")},
	{Op: tensor.OpArgMin, Family: "reduction", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.ArgMinDim(1, false) }, Torch: torch("argmin")},
	{Op: tensor.OpCumSum, Family: "scan", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.CumSum(1) }, Torch: torch("cumsum")},
	{Op: tensor.OpSoftmax, Family: "softmax", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Softmax(1) }, Torch: torch("softmax")},
	{Op: tensor.OpLogSoftmax, Family: "softmax", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.LogSoftmax(1) }, Torch: torch("log_softmax")},
	{Op: tensor.OpMatMul, Family: "linalg", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return x.MatMul(y.T()) }, Torch: torch("matmul")},
	{Op: tensor.OpAddmm, Family: "linalg", Cover: addmmCover(tensor.Addmm), Torch: torch("addmm")},
	{Op: tensor.OpAddmmReLU, Family: "linalg", Cover: addmmCover(tensor.AddmmReLU), Torch: torch("addmm_relu")},
	{Op: tensor.OpCat, Family: "copy", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return tensor.Cat([]*tensor.Tensor{x, y}, 0) }, Torch: torch("cat", "stack")},

	{Op: tensor.OpIndexSelect, Family: "index", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.IndexSelect(1, specIndex(x, []int32{2, 0}, 2)) }, Torch: torch("index_select", "embedding")},
	// IndexAdd is IndexSelect's adjoint: its derivative rule, reached by
	// the gradients of the index_select and embedding cases.
	{Op: tensor.OpIndexAdd, Family: "index", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return x.IndexAdd(0, specIndex(x, []int32{1, 0}, 2), y) },
		Via: &RefExemption{Via: torch("index_select", "embedding"), Note: "index_select gradients"}},
	// IndexAmax with include_self, torch's index_reduce "amax": the
	// segment max of package nested.
	{Op: tensor.OpIndexAmax, Family: "index", Cover: func(x, y *tensor.Tensor) *tensor.Tensor { return x.IndexAmax(0, specIndex(x, []int32{1, 1}, 2), y) },
		Torch: torch("index_reduce_amax")},
	{Op: tensor.OpGather, Family: "index", Cover: func(x, _ *tensor.Tensor) *tensor.Tensor { return x.Gather(1, specIndex(x, []int32{2, 0, 1, 1}, 2, 2)) }, Torch: torch("gather")},
	{Op: tensor.OpScatterAdd, Family: "index", Cover: func(x, y *tensor.Tensor) *tensor.Tensor {
		return x.ScatterAdd(1, specIndex(x, []int32{0, 1, 0, 2, 2, 1}, 2, 3), y)
	}, Torch: torch("scatter_add")},
}

// specIndex returns an tensor.Int32 index tensor on x's device, in x's context.
func specIndex(x *tensor.Tensor, data []int32, shape ...int) *tensor.Tensor {
	return tensor.From(data, shape, tensor.On(x.Device()), tensor.In(x.Context()))
}

// specMask returns a 2×3 tensor.Bool condition on x's device, in x's context.
func specMask(x *tensor.Tensor) *tensor.Tensor {
	return tensor.From([]bool{true, false, true, false, true, false}, []int{2, 3}, tensor.On(x.Device()), tensor.In(x.Context()))
}

// specCastTarget is the dtype Cast converts each input dtype to: another
// one, and never tensor.Float64, which the GPU cannot hold.
func specCastTarget(dt tensor.DType) tensor.DType {
	if dt == tensor.Float32 {
		return tensor.Int32
	}
	return tensor.Float32
}

// addmmCover returns the representative call of Addmm or AddmmReLU
// (f), its input a bias row: the first two values of x's first row.
func addmmCover(f func(input, a, b *tensor.Tensor) *tensor.Tensor) func(x, y *tensor.Tensor) *tensor.Tensor {
	return func(x, y *tensor.Tensor) *tensor.Tensor { return f(x.Select(0, 0).Narrow(0, 0, 2), x, y.T()) }
}
