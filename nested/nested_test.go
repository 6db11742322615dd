package nested_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/tensor"
)

func Example() {
	// Three sentences of 2, 1 and 3 tokens, 2 features each: 6 packed rows.
	x := nested.FromTensors([]*tensor.Tensor{
		tensor.New([]float32{1, 2, 3, 4}, 2, 2),
		tensor.New([]float32{5, 6}, 1, 2),
		tensor.New([]float32{7, 8, 9, 10, 11, 12}, 3, 2),
	})
	fmt.Println(x)
	fmt.Println(x.Lengths(), x.Offsets(), x.Values().Shape())
	fmt.Println(x.Sum().Float32s()) // one row per sentence
	attention := x.SumDims([]int{1}, false).Softmax(0)
	fmt.Printf("%.3f\n", attention.Values().Float32s()) // each sentence's weights sum to 1
	padded, mask := x.ToPadded(0)
	fmt.Println(padded.Shape(), mask.Bools())
	// Output:
	// nested.Nested(lengths [2 1 3], rest [2], float32 on cpu)
	// [2 1 3] [0 2 3 6] [6 2]
	// [4 6 5 6 27 30]
	// [0.018 0.982 1.000 0.000 0.018 0.982]
	// [3 3 2] [true true false true false false true true true]
}

// TestRoundTrips checks FromTensors, Unbind, ToPadded and its mask and
// FromPadded against the components they came from (lengths 3 1 6 4 2,
// values 10i + t for row t of component i), on every device.
func TestRoundTrips(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		t.Run(dev.String(), func(t *testing.T) {
			lengths := []int{3, 1, 6, 4, 2}
			var xs []*T
			for i, l := range lengths {
				xs = append(xs, tensor.Arange(float64(10*i), float64(10*i+l), 1, tensor.On(dev)))
			}
			x := nested.FromTensors(xs)
			for i, c := range x.Unbind() {
				approx.Check(t, fmt.Sprintf("component %d", i), c.Float32s(), xs[i].Float32s(), approx.Exact)
			}
			padded, mask := x.ToPadded(-1)
			if !slices.Equal(padded.Shape(), []int{5, 6}) || !slices.Equal(mask.Shape(), []int{5, 6}) {
				t.Fatalf("padded %v, mask %v; want [5 6]", padded.Shape(), mask.Shape())
			}
			for i, l := range lengths {
				row, valid := padded.Select(0, i).Float32s(), mask.Select(0, i).Bools()
				for s := range 6 {
					want := float32(-1)
					if s < l {
						want = float32(10*i + s)
					}
					if row[s] != want || valid[s] != (s < l) {
						t.Errorf("padded[%d][%d] = %v (mask %v), want %v (mask %v)", i, s, row[s], valid[s], want, s < l)
					}
				}
			}
			back := nested.FromPadded(padded, lengths)
			approx.Check(t, "FromPadded(ToPadded)", back.Values().Float32s(), x.Values().Float32s(), approx.Exact)
		})
	}
}

// TestEmptyComponents checks the ops that allow an empty component on a
// batch where one is: its Sum is 0, its Mean NaN, Max refuses.
func TestEmptyComponents(t *testing.T) {
	x := nested.FromValues(tensor.New([]float32{1, 2, 3}, 3, 1), []int{2, 0, 1})
	if got := x.Sum().Float32s(); !slices.Equal(got, []float32{3, 0, 3}) {
		t.Errorf("Sum = %v, want [3 0 3]", got)
	}
	if got := x.Mean().Float32s(); got[0] != 1.5 || !math.IsNaN(float64(got[1])) || got[2] != 3 {
		t.Errorf("Mean = %v, want [1.5 NaN 3]", got)
	}
	if err := tensor.Catch(func() { x.Max() }); !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Max with an empty component: %v, want ErrArgument", err)
	}
	approx.Check(t, "Softmax(0)", x.Softmax(0).Values().Float32s(), []float32{0.26894142, 0.7310586, 1}, approx.Float32(4))
}

// A badCase is a misuse and the kind of error it must give.
type badCase struct {
	name string
	kind error
	f    func()
}

// TestBadInput checks that misuse panics with a *tensor.Error of the
// right kind, named after the nested op.
func TestBadInput(t *testing.T) {
	x := nested.FromValues(tensor.Ones([]int{5, 3}), []int{2, 3})
	other := nested.FromValues(tensor.Ones([]int{5, 3}), []int{4, 1})
	idx := nested.FromValues(tensor.New([]int32{0, 1, 2}), []int{1, 2})
	gpuOnes := func() *T { return nil }
	if dev, ok := devtest.GPU(t); ok {
		gpuOnes = func() *T { return tensor.Ones([]int{3}, tensor.On(dev)) }
	}
	cases := []badCase{
		{"FromValues: lengths not summing", tensor.ErrShape, func() { nested.FromValues(tensor.Ones([]int{5, 3}), []int{2, 2}) }},
		{"FromValues: negative length", tensor.ErrArgument, func() { nested.FromValues(tensor.Ones([]int{5, 3}), []int{6, -1}) }},
		{"FromValues: no lengths", tensor.ErrArgument, func() { nested.FromValues(tensor.Ones([]int{0, 3}), nil) }},
		{"FromValues: 0-d", tensor.ErrShape, func() { nested.FromValues(tensor.Scalar(1, tensor.Float32, tensor.CPU), []int{1}) }},
		{"FromTensors: trailing dims differ", tensor.ErrShape, func() {
			nested.FromTensors([]*T{tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 4})})
		}},
		{"FromTensors: dtypes differ", tensor.ErrDType, func() {
			nested.FromTensors([]*T{tensor.Ones([]int{2, 3}), tensor.Ones([]int{2, 3}, tensor.Of(tensor.Float64))})
		}},
		{"FromTensors: none", tensor.ErrArgument, func() { nested.FromTensors(nil) }},
		{"FromPadded: length beyond the padding", tensor.ErrShape, func() { nested.FromPadded(tensor.Ones([]int{2, 3}), []int{1, 4}) }},
		{"FromPadded: wrong batch", tensor.ErrShape, func() { nested.FromPadded(tensor.Ones([]int{2, 3}), []int{1, 1, 1}) }},
		{"FromPadded: negative length", tensor.ErrArgument, func() { nested.FromPadded(tensor.Ones([]int{2, 3}), []int{1, -1}) }},
		{"Zip: other lengths", tensor.ErrShape, func() { x.Zip(other, (*T).Add) }},
		{"Zip: nil function", tensor.ErrArgument, func() { x.Zip(x, nil) }},
		{"Map: rows lost", tensor.ErrShape, func() { x.Map(func(v *T) *T { return v.Sum() }) }},
		{"ZipDense: bad broadcast", tensor.ErrShape, func() { x.ZipDense(tensor.Ones([]int{2, 3}), (*T).Add) }},
		{"MatMul: inner dims", tensor.ErrShape, func() { x.MatMul(tensor.Ones([]int{4, 2})) }},
		{"LayerNorm: ragged dim", tensor.ErrShape, func() { x.LayerNorm([]int{5, 3}, nil, nil, 1e-5) }},
		{"LayerNorm: negative eps", tensor.ErrArgument, func() { x.LayerNorm([]int{3}, nil, nil, -1) }},
		{"Embedding: float indices", tensor.ErrDType, func() { nested.Embedding(tensor.Ones([]int{4, 2}), x) }},
		{"Embedding: out of range", tensor.ErrIndex, func() { nested.Embedding(tensor.Ones([]int{2, 2}), idx) }},
		{"SumDims: ragged dim", tensor.ErrArgument, func() { x.SumDims([]int{0}, false) }},
		{"Softmax: dim out of range", tensor.ErrIndex, func() { x.Softmax(2) }},
		{"Cat: components differ", tensor.ErrShape, func() {
			nested.Cat([]*nested.Nested{x, nested.FromValues(tensor.Ones([]int{5, 3}), []int{5})}, 0)
		}},
		{"Cat: lengths differ along dim 1", tensor.ErrShape, func() { nested.Cat([]*nested.Nested{x, other}, 1) }},
		{"CatComponents: trailing dims differ", tensor.ErrShape, func() {
			nested.CatComponents([]*nested.Nested{x, nested.FromValues(tensor.Ones([]int{5, 2}), []int{5})})
		}},
		{"nil Nested", tensor.ErrArgument, func() { (*nested.Nested)(nil).Sum() }},
	}
	if g := gpuOnes(); g != nil {
		cases = append(cases,
			badCase{"ZipDense: other device", tensor.ErrDevice, func() { x.ZipDense(g, (*T).Add) }},
			badCase{"FromTensors: devices differ", tensor.ErrDevice, func() { nested.FromTensors([]*T{tensor.Ones([]int{1, 3}), g.Reshape(1, 3)}) }})
	}
	for _, c := range cases {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want a *tensor.Error wrapping %v", c.name, err, c.kind)
		}
	}
}
