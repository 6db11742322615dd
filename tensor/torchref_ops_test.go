package tensor_test

import (
	"math"
	"strings"

	"github.com/tessera-ml/tessera/internal/opspec"
	"github.com/tessera-ml/tessera/internal/torchref"
	"github.com/tessera-ml/tessera/tensor"
)

// torchOp runs a reference case's op on its inputs (after their view
// chains) and returns the outputs in torch's order.
type torchOp func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor

// torchOps maps every op of the reference files this package covers to
// Tessera's API. TestTorchRefComplete fails when a case's op is missing.
// The plain elementwise ops are not listed: specTorchOps adds them from
// their specs (tensor/spec_*_test.go).
var torchOps = map[string]torchOp{
	// elementwise.json: unary
	"gelu": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		if c.String("approximate") == "tanh" {
			return one(in[0].GELUTanh())
		}
		return one(in[0].GELU())
	},
	"softplus": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Softplus(c.Float("beta"), c.Float("threshold")))
	},
	"clamp": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		lo, hi := math.Inf(-1), math.Inf(1)
		if c.Has("min") {
			lo = c.Float("min")
		}
		if c.Has("max") {
			hi = c.Float("max")
		}
		return one(in[0].Clamp(lo, hi))
	},
	"pow_scalar": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].PowScalar(c.Float("exponent")))
	},

	// elementwise.json: binary, scalar, comparison, selection, cast
	"add": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].AddScaled(in[1], c.Float("alpha")))
	},
	"sub": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].SubScaled(in[1], c.Float("alpha")))
	},

	"add_scalar":  scalarOp((*tensor.Tensor).AddScalar),
	"sub_scalar":  scalarOp((*tensor.Tensor).SubScalar),
	"mul_scalar":  scalarOp((*tensor.Tensor).MulScalar),
	"div_scalar":  scalarOp((*tensor.Tensor).DivScalar),
	"rsub_scalar": scalarOp((*tensor.Tensor).RSub),

	"where": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Where(in[0], in[1], in[2]))
	},
	"masked_fill": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].MaskedFill(in[1], c.Float("value")))
	},
	"cast": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		dt := map[string]tensor.DType{"float32": tensor.Float32, "float64": tensor.Float64,
			"int32": tensor.Int32, "bool": tensor.Bool}[c.String("dtype")]
		return one(in[0].Cast(dt))
	},

	// reduce.json
	"sum": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].SumDims(dimsAttr(c), c.Bool("keepdim")))
	},
	"mean": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].MeanDims(dimsAttr(c), c.Bool("keepdim")))
	},
	"max":    extremum((*tensor.Tensor).Max, (*tensor.Tensor).MaxDim),
	"min":    extremum((*tensor.Tensor).Min, (*tensor.Tensor).MinDim),
	"argmax": argExtremum((*tensor.Tensor).ArgMax, (*tensor.Tensor).ArgMaxDim),
	"argmin": argExtremum((*tensor.Tensor).ArgMin, (*tensor.Tensor).ArgMinDim),
	"var": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Var(dimsAttr(c), c.Int("correction"), c.Bool("keepdim")))
	},
	"std": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Std(dimsAttr(c), c.Int("correction"), c.Bool("keepdim")))
	},
	"logsumexp": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].LogSumExp(dimsAttr(c), c.Bool("keepdim")))
	},
	"norm": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Norm(c.Float("p"), dimsAttr(c), c.Bool("keepdim")))
	},
	"cumsum": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].CumSum(c.Int("dim")))
	},

	// linalg.json
	"matmul": binary((*tensor.Tensor).MatMul),
	"outer":  binary((*tensor.Tensor).Outer),
	"addmm": func(_ torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Addmm(in[0], in[1], in[2]))
	},
	"addmm_relu": func(_ torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.AddmmReLU(in[0], in[1], in[2]))
	},

	// index.json
	"index_select": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].IndexSelect(c.Int("dim"), in[1]))
	},
	"gather": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Gather(c.Int("dim"), in[1]))
	},
	"scatter_add": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].ScatterAdd(c.Int("dim"), in[1], in[2]))
	},
	"index_reduce_amax": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].IndexAmax(c.Int("dim"), in[1], in[2]))
	},
	"one_hot": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.OneHot(in[0], c.Int("num_classes")))
	},
	"slice": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Slice(c.Int("dim"), c.Int("start"), c.Int("end"), c.Int("step")))
	},
	"select": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Select(c.Int("dim"), c.Int("index")))
	},
	"narrow": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Narrow(c.Int("dim"), c.Int("start"), c.Int("length")))
	},

	// shape.json
	"cat": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Cat(in, c.Int("dim")))
	},
	"stack": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(tensor.Stack(in, c.Int("dim")))
	},
	"split": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		if c.Has("split_sizes") {
			return in[0].SplitSizes(c.Ints("split_sizes"), c.Int("dim"))
		}
		return in[0].Split(c.Int("split_size"), c.Int("dim"))
	},
	"chunk": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return in[0].Chunk(c.Int("chunks"), c.Int("dim"))
	},
	"transpose": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Transpose(c.Int("dim0"), c.Int("dim1")))
	},
	"permute": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Permute(c.Ints("dims")...))
	},
	"reshape": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Reshape(c.Ints("shape")...))
	},
	"view": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].View(c.Ints("shape")...))
	},
	"flatten": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Flatten(c.Int("start_dim"), c.Int("end_dim")))
	},
	"squeeze": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		if c.Has("dim") {
			return one(in[0].Squeeze(c.Int("dim")))
		}
		return one(in[0].Squeeze())
	},
	"unsqueeze": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Unsqueeze(c.Int("dim")))
	},
	"expand": func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		return one(in[0].Expand(c.Ints("sizes")...))
	},
	"contiguous": unary((*tensor.Tensor).Contiguous),
	"clone":      unary((*tensor.Tensor).Clone),
}

func init() { specTorchOps(torchOps) }

// specTorchOps adds to ops the reference names of the elementwise ops
// that take no parameters, named after the op (exp for Exp, maximum for
// Maximum), without attributes, and not mapped by hand: the spec's Call
// runs on the case's inputs.
func specTorchOps(ops map[string]torchOp) {
	for _, s := range opspec.Specs() {
		if n := s.Arity; n == 0 || n > 2 || s.Params != nil || s.CoverP != [2]float64{} {
			continue
		}
		for _, r := range s.Torch {
			if _, mapped := ops[r.Op]; mapped || r.Attr != "" || r.Op != strings.ToLower(s.Op.String()) {
				continue
			}
			call := s.Call
			ops[r.Op] = func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor { return one(call([2]float64{}, in...)) }
		}
	}
}

// tolClass says how closely an op's results can match torch's.
type tolClass int

const (
	// tolNear: one correctly rounded operation per element, or a copy,
	// but gradients may sum in another order (broadcast, expand); the
	// default.
	tolNear tolClass = iota
	// tolExact: as tolNear, and the forward result of each element is
	// one correctly rounded IEEE operation (or a copy) in both libraries,
	// so it must match torch bit for bit.
	tolExact
	// tolInexact: transcendental functions (libm differs in the last bits),
	// chains of ops, reductions and products summed in another order.
	tolInexact
)

var opTolClass = map[string]tolClass{
	"exp": tolInexact, "log": tolInexact, "log1p": tolInexact, "rsqrt": tolInexact,
	"sin": tolInexact, "cos": tolInexact, "tanh": tolInexact, "sigmoid": tolInexact, "gelu": tolInexact,
	"silu": tolInexact, "softplus": tolInexact, "pow_scalar": tolInexact, "pow": tolInexact,
	"sum": tolInexact, "mean": tolInexact, "var": tolInexact, "std": tolInexact,
	"logsumexp": tolInexact, "norm": tolInexact, "matmul": tolInexact, "cumsum": tolInexact,

	"neg": tolExact, "abs": tolExact, "sign": tolExact, "square": tolExact, "sqrt": tolExact,
	"relu": tolExact, "clamp": tolExact, "mul": tolExact, "div": tolExact, "maximum": tolExact,
	"minimum": tolExact, "add_scalar": tolExact, "sub_scalar": tolExact, "mul_scalar": tolExact,
	"div_scalar": tolExact, "rsub_scalar": tolExact, "where": tolExact, "masked_fill": tolExact,
	"cast": tolExact, "max": tolExact, "min": tolExact, "outer": tolExact,
	"index_select": tolExact, "gather": tolExact, "index_reduce_amax": tolExact, "slice": tolExact, "select": tolExact, "narrow": tolExact,
	"cat": tolExact, "stack": tolExact, "split": tolExact, "chunk": tolExact, "transpose": tolExact,
	"permute": tolExact, "reshape": tolExact, "view": tolExact, "flatten": tolExact, "squeeze": tolExact,
	"unsqueeze": tolExact, "expand": tolExact, "contiguous": tolExact, "clone": tolExact,
	// add and sub are exact only with alpha 1 (x + alpha·y may be fused).
}

func one(t *tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{t} }

func unary(f func(*tensor.Tensor) *tensor.Tensor) torchOp {
	return func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor { return one(f(in[0])) }
}

func binary(f func(x, y *tensor.Tensor) *tensor.Tensor) torchOp {
	return func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor { return one(f(in[0], in[1])) }
}

func scalarOp(f func(*tensor.Tensor, float64) *tensor.Tensor) torchOp {
	return func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor { return one(f(in[0], c.Float("scalar"))) }
}

// dimsAttr returns the "dim" attribute as a list, nil (all dims) when null.
func dimsAttr(c torchref.Case) []int {
	if !c.Has("dim") {
		return nil
	}
	return c.Ints("dim")
}

// extremum maps max/min: the whole-tensor form (one 0-d output) when dim
// is null, else values and indices along dim.
func extremum(all func(*tensor.Tensor) *tensor.Tensor, along func(*tensor.Tensor, int, bool) (*tensor.Tensor, *tensor.Tensor)) torchOp {
	return func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		if !c.Has("dim") {
			return one(all(in[0]))
		}
		v, i := along(in[0], c.Int("dim"), c.Bool("keepdim"))
		return []*tensor.Tensor{v, i}
	}
}

// argExtremum maps argmax/argmin: an index into the flattened tensor when
// dim is null (shaped like the input with all sizes 1 under keepdim).
func argExtremum(all func(*tensor.Tensor) *tensor.Tensor, along func(*tensor.Tensor, int, bool) *tensor.Tensor) torchOp {
	return func(c torchref.Case, in []*tensor.Tensor) []*tensor.Tensor {
		if c.Has("dim") {
			return one(along(in[0], c.Int("dim"), c.Bool("keepdim")))
		}
		i := all(in[0])
		if c.Bool("keepdim") {
			ones := make([]int, in[0].Dim())
			for k := range ones {
				ones[k] = 1
			}
			i = i.Reshape(ones...)
		}
		return one(i)
	}
}
