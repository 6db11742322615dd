package nested_test

import (
	"math"
	"slices"

	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

type T = tensor.Tensor

// An opCase is one ragged op and the same computation done component by
// component on dense tensors. Both sides get leaves of the same data: x
// (the input Nested, or its components) and the extra parameters that
// params makes for the lengths (dense weights, a second operand's
// values). ragged returns a *nested.Nested or a dense *T whose first
// dimension runs over the components; dense returns
// the pieces that result must split into (pieces).
type opCase struct {
	name   string
	rest   []int
	params func(lengths []int) [][]int // shapes of the extra leaves
	ragged func(x *nested.Nested, extra []*T) any
	dense  func(xs []*T, extra []*T) []*T
	// nonEmpty asks for lengths of at least 1.
	nonEmpty bool
}

// rows splits a [sum, ...] tensor into components of lengths.
func rows(v *T, lengths []int) []*T {
	out := make([]*T, len(lengths))
	off := 0
	for i, l := range lengths {
		out[i] = v.Narrow(0, off, l)
		off += l
	}
	return out
}

func sizes(xs []*T) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x.Size(0)
	}
	return out
}

func eachOf(xs []*T, f func(i int, x *T) *T) []*T {
	out := make([]*T, len(xs))
	for i, x := range xs {
		out[i] = f(i, x)
	}
	return out
}

func total(lengths []int) int {
	n := 0
	for _, l := range lengths {
		n += l
	}
	return n
}

func reversed(lengths []int) []int {
	out := slices.Clone(lengths)
	slices.Reverse(out)
	return out
}

// embedIndex is the Int32 index data of the Embedding case: row r of the
// packed indices looks up entry (7r + 3) mod vocab.
func embedIndex(n, vocab int) []int32 {
	out := make([]int32, n)
	for r := range out {
		out[r] = int32((7*r + 3) % vocab)
	}
	return out
}

const vocab = 11

func shape(dims ...int) []int { return dims }

func cases() []opCase {
	unary := func(name string, f func(n *nested.Nested) any, g func(x *T) *T) opCase {
		return opCase{name: name, rest: shape(3, 5), ragged: func(x *nested.Nested, _ []*T) any { return f(x) },
			dense: func(xs, _ []*T) []*T { return eachOf(xs, func(_ int, x *T) *T { return g(x) }) }}
	}
	pad := func(x *T, width int, v float64) *T {
		rest := append([]int{width - x.Size(0)}, x.Shape()[1:]...)
		return tensor.Cat([]*T{x, tensor.Full(rest, v, tensor.Like(x))}, 0)
	}
	return []opCase{
		unary("Map(Tanh)", func(n *nested.Nested) any { return n.Map((*T).Tanh) }, (*T).Tanh),
		{name: "Zip(Mul)", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{total(l), 3, 5}} },
			ragged: func(x *nested.Nested, e []*T) any { return x.Zip(nested.FromValues(e[0], x.Lengths()), (*T).Mul) },
			dense: func(xs, e []*T) []*T {
				ys := rows(e[0], sizes(xs))
				return eachOf(xs, func(i int, x *T) *T { return x.Mul(ys[i]) })
			}},
		{name: "ZipDense(Add bias)", rest: shape(3, 5), params: func([]int) [][]int { return [][]int{{5}} },
			ragged: func(x *nested.Nested, e []*T) any { return x.ZipDense(e[0], (*T).Add) },
			dense:  func(xs, e []*T) []*T { return eachOf(xs, func(_ int, x *T) *T { return x.Add(e[0]) }) }},
		{name: "ZipDense(Mul per component)", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{len(l), 1, 3, 1}} },
			ragged: func(x *nested.Nested, e []*T) any { return x.ZipDense(e[0], (*T).Mul) },
			dense:  func(xs, e []*T) []*T { return eachOf(xs, func(i int, x *T) *T { return x.Mul(e[0].Select(0, i)) }) }},
		unary("Sum", func(n *nested.Nested) any { return n.Sum() }, func(x *T) *T { return x.SumDims([]int{0}, false) }),
		{name: "Mean", rest: shape(3, 5), nonEmpty: true, ragged: func(x *nested.Nested, _ []*T) any { return x.Mean() },
			dense: func(xs, _ []*T) []*T { return eachOf(xs, func(_ int, x *T) *T { return x.MeanDims([]int{0}, false) }) }},
		{name: "Max", rest: shape(3, 5), nonEmpty: true, ragged: func(x *nested.Nested, _ []*T) any { return x.Max() },
			dense: func(xs, _ []*T) []*T { return eachOf(xs, func(_ int, x *T) *T { return x.Amax([]int{0}, false) }) }},
		unary("SumDims(-1)", func(n *nested.Nested) any { return n.SumDims([]int{-1}, false) }, func(x *T) *T { return x.SumDims([]int{-1}, false) }),
		unary("MeanDims(1,2 keep)", func(n *nested.Nested) any { return n.MeanDims([]int{1, 2}, true) }, func(x *T) *T { return x.MeanDims([]int{1, 2}, true) }),
		unary("MaxDims(1)", func(n *nested.Nested) any { return n.MaxDims([]int{1}, false) }, func(x *T) *T { return x.Amax([]int{1}, false) }),
		unary("Softmax(0)", func(n *nested.Nested) any { return n.Softmax(0) }, func(x *T) *T { return x.Softmax(0) }),
		unary("LogSoftmax(0)", func(n *nested.Nested) any { return n.LogSoftmax(0) }, func(x *T) *T { return x.LogSoftmax(0) }),
		unary("Softmax(-1)", func(n *nested.Nested) any { return n.Softmax(-1) }, func(x *T) *T { return x.Softmax(-1) }),
		unary("LogSoftmax(1)", func(n *nested.Nested) any { return n.LogSoftmax(1) }, func(x *T) *T { return x.LogSoftmax(1) }),
		{name: "MatMul", rest: shape(3, 5), params: func([]int) [][]int { return [][]int{{5, 7}} },
			ragged: func(x *nested.Nested, e []*T) any { return x.MatMul(e[0]) },
			dense:  func(xs, e []*T) []*T { return eachOf(xs, func(_ int, x *T) *T { return x.MatMul(e[0]) }) }},
		{name: "LayerNorm", rest: shape(3, 5), params: func([]int) [][]int { return [][]int{{5}, {5}} },
			ragged: func(x *nested.Nested, e []*T) any { return x.LayerNorm([]int{5}, e[0], e[1], 1e-5) },
			dense: func(xs, e []*T) []*T {
				return eachOf(xs, func(_ int, x *T) *T {
					c := x.Sub(x.MeanDims([]int{-1}, true))
					return c.Div(c.Square().MeanDims([]int{-1}, true).AddScalar(1e-5).Sqrt()).Mul(e[0]).Add(e[1])
				})
			}},
		{name: "Embedding", rest: shape(3, 5), params: func([]int) [][]int { return [][]int{{vocab, 3}} },
			ragged: func(x *nested.Nested, e []*T) any {
				idx := tensor.From(embedIndex(x.Values().Size(0), vocab), []int{x.Values().Size(0)}, tensor.On(x.Device()))
				return nested.Embedding(e[0], nested.FromValues(idx, x.Lengths()))
			},
			dense: func(xs, e []*T) []*T {
				idx := rows(tensor.From(embedIndex(total(sizes(xs)), vocab), []int{total(sizes(xs))}, tensor.On(xs[0].Device())), sizes(xs))
				return eachOf(xs, func(i int, _ *T) *T { return e[0].IndexSelect(0, idx[i]) })
			}},
		{name: "ToPadded", rest: shape(3, 5), ragged: func(x *nested.Nested, _ []*T) any { p, _ := x.ToPadded(0.5); return p },
			dense: func(xs, _ []*T) []*T {
				width := slices.Max(sizes(xs))
				return eachOf(xs, func(_ int, x *T) *T { return pad(x, width, 0.5) })
			}},
		{name: "FromPadded", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{len(l), slices.Max(l) + 1, 3, 5}} },
			ragged: func(x *nested.Nested, e []*T) any { return nested.FromPadded(e[0], x.Lengths()) },
			dense: func(xs, e []*T) []*T {
				return eachOf(xs, func(i int, x *T) *T { return e[0].Select(0, i).Narrow(0, 0, x.Size(0)) })
			}},
		{name: "Cat(0)", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{total(l), 3, 5}} },
			ragged: func(x *nested.Nested, e []*T) any {
				return nested.Cat([]*nested.Nested{x, nested.FromValues(e[0], reversed(x.Lengths()))}, 0)
			},
			dense: func(xs, e []*T) []*T {
				ys := rows(e[0], reversed(sizes(xs)))
				return eachOf(xs, func(i int, x *T) *T { return tensor.Cat([]*T{x, ys[i]}, 0) })
			}},
		{name: "Cat(-1)", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{total(l), 3, 2}} },
			ragged: func(x *nested.Nested, e []*T) any {
				return nested.Cat([]*nested.Nested{x, nested.FromValues(e[0], x.Lengths())}, -1)
			},
			dense: func(xs, e []*T) []*T {
				ys := rows(e[0], sizes(xs))
				return eachOf(xs, func(i int, x *T) *T { return tensor.Cat([]*T{x, ys[i]}, -1) })
			}},
		{name: "CatComponents", rest: shape(3, 5), params: func(l []int) [][]int { return [][]int{{total(l), 3, 5}} },
			ragged: func(x *nested.Nested, e []*T) any {
				return nested.CatComponents([]*nested.Nested{x, nested.FromValues(e[0], reversed(x.Lengths()))})
			},
			dense: func(xs, e []*T) []*T { return append(slices.Clone(xs), rows(e[0], reversed(sizes(xs)))...) }},
	}
}

// pieces splits a ragged op's result into what its dense computation
// returns: the components of a Nested, the rows of a dense result.
func pieces(r any) []*T {
	switch r := r.(type) {
	case *nested.Nested:
		return r.Unbind()
	case *T:
		out := make([]*T, r.Size(0))
		for i := range out {
			out[i] = r.Select(0, i)
		}
		return out
	}
	panic("pieces: unknown result type")
}

// outputs returns the tensors a ragged op's result holds, for counting
// the ops that made them.
func outputs(r any) *T {
	switch r := r.(type) {
	case *nested.Nested:
		return r.Values()
	}
	return r.(*T)
}

// lengthsFor returns b lengths between 0 (or 1, nonEmpty) and 6.
func lengthsFor(b int, nonEmpty bool) []int {
	out := make([]int, b)
	for i := range out {
		out[i] = (5*i + 3) % 7
		if nonEmpty && out[i] == 0 {
			out[i] = 2
		}
	}
	return out
}

// data returns a deterministic float64 tensor of shape, with entries in
// (-2, 2) and no ties, as dt on dev.
func data(shape []int, seed float64, dt tensor.DType, dev tensor.Device) *T {
	n := 1
	for _, s := range shape {
		n *= s
	}
	v := make([]float64, n)
	for k := range v {
		v[k] = 2 * math.Sin(1.3*float64(k)+seed) * (1 - 0.001*float64(k%13))
	}
	return tensor.From(v, shape, tensor.Of(dt), tensor.On(dev))
}
