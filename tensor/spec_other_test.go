package tensor

// otherSpecs are the specs of the ops that are not elementwise: one
// representative public call each, and their PyTorch reference cases.
var otherSpecs = []OpSpec{
	{Op: OpWhere, Family: "ternary", Cover: func(x, y *Tensor) *Tensor { return Where(specMask(x), x, y) }, Torch: torch("where", "masked_fill")},
	{Op: OpCast, Family: "copy", Cover: func(x, _ *Tensor) *Tensor { return x.Cast(specCastTarget(x.DType())) }, Torch: torch("cast")},
	{Op: OpCopy, Family: "copy", Cover: func(x, _ *Tensor) *Tensor { return x.Clone() }, Torch: torch("contiguous", "clone")},

	{Op: OpReshape, Family: "view", Cover: func(x, _ *Tensor) *Tensor { return x.Reshape(3, 2) }, Torch: torch("reshape", "view", "flatten", "squeeze", "unsqueeze")},
	{Op: OpPermute, Family: "view", Cover: func(x, _ *Tensor) *Tensor { return x.Permute(1, 0) }, Torch: torch("permute", "transpose")},
	{Op: OpSlice, Family: "view", Cover: func(x, _ *Tensor) *Tensor { return x.Slice(1, 0, 3, 2) }, Torch: torch("slice", "select", "narrow", "split", "chunk")},
	{Op: OpExpand, Family: "view", Cover: func(x, _ *Tensor) *Tensor { return x.Reshape(1, 2, 3).Expand(2, 2, 3) }, Torch: torch("expand")},
	// SliceScatter is Slice's adjoint, reached only through the gradients
	// of the slice, select and narrow cases; it has no PyTorch-facing name.
	{Op: OpSliceScatter, Family: "view", Cover: func(x, _ *Tensor) *Tensor { return SliceScatter(x, []int{2, 5}, 1, 0, 5, 2) },
		Via: &RefExemption{Via: torch("slice", "select", "narrow"), Note: "slice gradients"}},

	{Op: OpSum, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { return x.Sum() }, Torch: torch("sum")},
	{Op: OpAmax, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { return x.Amax([]int{1}, false) }, Torch: []TorchRef{{Op: "max", Attr: "dim=null"}}},
	{Op: OpAmin, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { return x.Amin([]int{1}, false) }, Torch: []TorchRef{{Op: "min", Attr: "dim=null"}}},
	{Op: OpMaxDim, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { v, _ := x.MaxDim(1, false); return v }, Torch: []TorchRef{{Op: "max", Attr: "dim=int"}}},
	{Op: OpMinDim, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { v, _ := x.MinDim(1, false); return v }, Torch: []TorchRef{{Op: "min", Attr: "dim=int"}}},
	{Op: OpArgMax, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { return x.ArgMaxDim(1, false) }, Torch: torch("argmax")},
	{Op: OpArgMin, Family: "reduction", Cover: func(x, _ *Tensor) *Tensor { return x.ArgMinDim(1, false) }, Torch: torch("argmin")},
	// A gap: no reference case calls cumsum yet (tools/torchref/gen.py
	// should gain one). Package cpu's scan tests and autograd's gradcheck
	// are its only checks.
	{Op: OpCumSum, Family: "scan", Cover: func(x, _ *Tensor) *Tensor { return x.CumSum(1) }, Via: &RefExemption{Note: "gap: none yet"}},
	{Op: OpSoftmax, Family: "softmax", Cover: func(x, _ *Tensor) *Tensor { return x.Softmax(1) }, Torch: torch("softmax")},
	{Op: OpLogSoftmax, Family: "softmax", Cover: func(x, _ *Tensor) *Tensor { return x.LogSoftmax(1) }, Torch: torch("log_softmax")},
	{Op: OpMatMul, Family: "linalg", Cover: func(x, y *Tensor) *Tensor { return x.MatMul(y.T()) }, Torch: torch("matmul")},
	{Op: OpCat, Family: "copy", Cover: func(x, y *Tensor) *Tensor { return Cat([]*Tensor{x, y}, 0) }, Torch: torch("cat", "stack")},

	{Op: OpIndexSelect, Family: "index", Cover: func(x, _ *Tensor) *Tensor { return x.IndexSelect(1, specIndex(x, []int32{2, 0}, 2)) }, Torch: torch("index_select", "embedding")},
	// IndexAdd is IndexSelect's adjoint: its derivative rule, reached by
	// the gradients of the index_select and embedding cases.
	{Op: OpIndexAdd, Family: "index", Cover: func(x, y *Tensor) *Tensor { return x.IndexAdd(0, specIndex(x, []int32{1, 0}, 2), y) },
		Via: &RefExemption{Via: torch("index_select", "embedding"), Note: "index_select gradients"}},
	{Op: OpGather, Family: "index", Cover: func(x, _ *Tensor) *Tensor { return x.Gather(1, specIndex(x, []int32{2, 0, 1, 1}, 2, 2)) }, Torch: torch("gather")},
	{Op: OpScatterAdd, Family: "index", Cover: func(x, y *Tensor) *Tensor { return x.ScatterAdd(1, specIndex(x, []int32{0, 1, 0, 2, 2, 1}, 2, 3), y) }, Torch: torch("scatter_add")},
}

// specIndex returns an Int32 index tensor on x's device, in x's context.
func specIndex(x *Tensor, data []int32, shape ...int) *Tensor {
	return From(data, shape, On(x.Device()), In(x.Context()))
}

// specMask returns a 2×3 Bool condition on x's device, in x's context.
func specMask(x *Tensor) *Tensor {
	return From([]bool{true, false, true, false, true, false}, []int{2, 3}, On(x.Device()), In(x.Context()))
}

// specCastTarget is the dtype Cast converts each input dtype to: another
// one, and never Float64, which the GPU cannot hold.
func specCastTarget(dt DType) DType {
	if dt == Float32 {
		return Int32
	}
	return Float32
}
