package tensor_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// A badCase is a call that must panic with a typed *tensor.Error of
// kind whose message holds every string of want.
type badCase struct {
	name string
	kind error
	f    func()
	want []string
}

// expectBad runs each case and fails unless it panicked with an *Error
// of the case's kind (never a runtime panic, never success).
func expectBad(t *testing.T, prefix string, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		err, bug := catchAny(c.f)
		switch {
		case bug != nil:
			t.Errorf("%s%s: raw panic %v, want a typed %v", prefix, c.name, bug, c.kind)
		case err == nil:
			t.Errorf("%s%s: no error, want %v", prefix, c.name, c.kind)
		case !errors.Is(err, c.kind):
			t.Errorf("%s%s: %v, want %v", prefix, c.name, err, c.kind)
		default:
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s%s: %q does not mention %q", prefix, c.name, err, w)
				}
			}
		}
	}
}

// expectShape fails unless f returns a tensor of shape want without
// panicking.
func expectShape(t *testing.T, what string, f func() *tensor.Tensor, want []int) {
	t.Helper()
	var x *tensor.Tensor
	err, bug := catchAny(func() { x = f() })
	switch {
	case bug != nil || err != nil:
		t.Errorf("%s: panicked (%v %v), want shape %v", what, err, bug, want)
	case !slices.Equal(x.Shape(), want):
		t.Errorf("%s: shape %v, want %v", what, x.Shape(), want)
	}
}

// TestShapeOverflow: every op that makes a shape checks its element
// count for overflow and its sizes for negatives. (PyTorch: "Storage
// size calculation overflowed", "numel: integer multiplication
// overflow", "Trying to create tensor with negative dimension".)
func TestShapeOverflow(t *testing.T) {
	const big = 1 << 32
	for _, dev := range devtest.Devices(t) {
		on := tensor.On(dev)
		one := func(shape ...int) *tensor.Tensor { return tensor.Ones(shape, on) }
		huge := func() *tensor.Tensor { return one(1).Expand(1 << 62) } // a legal view: no storage behind it
		expectBad(t, dev.String()+": ", []badCase{
			{"Zeros of 2^32 x 2^32", tensor.ErrShape, func() { tensor.Zeros([]int{big, big}, on) }, []string{"tensor.Full", "overflow"}},
			{"Zeros of 2^62 x 2^62 x 0", tensor.ErrShape, func() { tensor.Zeros([]int{1 << 62, 1 << 62, 0}, on) }, []string{"tensor.Full"}},
			{"Rand of 2^32 x 2^32", tensor.ErrShape, func() { tensor.Rand([]int{big, big}, on) }, []string{"tensor.Rand"}},
			{"Full negative", tensor.ErrShape, func() { tensor.Full([]int{2, -1}, 1, on) }, []string{"tensor.Full", "negative"}},
			{"Eye of 2^32", tensor.ErrShape, func() { tensor.Eye(big, on) }, []string{"tensor.Eye"}},
			{"Expand(-5) of a size-1 dim", tensor.ErrShape, func() { one(1, 3).Expand(-5, 3) }, []string{"tensor.Expand", "-5"}},
			{"Expand(-2) of a size-1 dim", tensor.ErrShape, func() { one(1, 3).Expand(-2, 3) }, []string{"tensor.Expand"}},
			{"Expand to 2^32 x 2^32", tensor.ErrShape, func() { one(1, 1).Expand(big, big) }, []string{"tensor.Expand", "overflow"}},
			{"Expand a new dim to -3", tensor.ErrShape, func() { one(3).Expand(-3, 3) }, []string{"tensor.Expand"}},
			{"View of empty to 2^32 x 2^32 x 0", tensor.ErrShape, func() { one(0).View(big, big, 0) }, []string{"tensor.View"}},
			{"Reshape of empty to 2^32 x 2^32 x 0", tensor.ErrShape, func() { one(0).Reshape(big, big, 0) }, []string{"tensor.Reshape"}},
			{"Reshape of empty with -1", tensor.ErrShape, func() { one(0, 2).Reshape(-1, 0) }, []string{"tensor.Reshape"}},
			{"Narrow(0, 1, MaxInt)", tensor.ErrIndex, func() { one(5).Narrow(0, 1, math.MaxInt) }, []string{"tensor.Narrow"}},
			{"Narrow(0, MaxInt, 1)", tensor.ErrIndex, func() { one(5).Narrow(0, math.MaxInt, 1) }, []string{"tensor.Narrow"}},
			{"Cat of two 2^62 views", tensor.ErrShape, func() { tensor.Cat([]*tensor.Tensor{huge(), huge()}, 0) }, []string{"tensor.Cat", "overflow"}},
			{"Stack of 2^62 views", tensor.ErrShape, func() { tensor.Stack([]*tensor.Tensor{huge(), huge(), huge(), huge()}, 0) }, []string{"tensor.Stack"}},
			{"broadcast to 2^32 x 2^32", tensor.ErrShape, func() { one(1).Expand(big).Unsqueeze(1).Add(one(1).Expand(big)) }, []string{"tensor.Add", "overflow"}},
			{"Where broadcast to 2^32 x 2^32", tensor.ErrShape, func() {
				tensor.Where(tensor.Ones([]int{1, 1}, on, tensor.Of(tensor.Bool)).Expand(big, 1), one(1).Expand(big), one(1))
			}, []string{"tensor.Where"}},
			{"MatMul to 2^32 x 2^32", tensor.ErrShape, func() { one(1, 1).Expand(big, 1).MatMul(one(1, 1).Expand(1, big)) }, []string{"tensor.MatMul", "overflow"}},
			{"MatMul batch overflow", tensor.ErrShape, func() {
				one(1, 1, 1).Expand(big, 1, 1).Unsqueeze(1).MatMul(one(1, 1, 1).Expand(big, 1, 1))
			}, []string{"tensor.MatMul"}},
			{"IndexSelect to 2^62 x 8", tensor.ErrShape, func() {
				one(1, 1).Expand(1<<62, 1).IndexSelect(1, tensor.New(make([]int32, 8)).To(dev))
			}, []string{"tensor.IndexSelect", "overflow"}},
			{"OneHot of 2^62 classes over 8 indices", tensor.ErrShape, func() {
				tensor.OneHot(tensor.New(make([]int32, 8)).To(dev), 1<<62)
			}, []string{"tensor.OneHot"}},
		})
	}
}

// TestSliceArithmetic: Slice's and Narrow's index arithmetic never
// overflows into a negative or empty shape (torch: x[0:5:2**62] has one
// element).
func TestSliceArithmetic(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		x := tensor.Arange(0, 5, 1, tensor.On(dev))
		for _, c := range []struct {
			start, end, step int
			want             []float64
		}{
			{0, 5, math.MaxInt, []float64{0}},     // torch.arange(5)[0:5:2**62] = [0]
			{2, 5, math.MaxInt - 1, []float64{2}}, // torch.arange(5)[2:5:2**62] = [2]
			{1, math.MaxInt, 2, []float64{1, 3}},
			{math.MinInt, 2, 1, []float64{0, 1}},
			{4, 1, math.MaxInt, []float64{}},
			{-2, math.MaxInt, 3, []float64{3}},
		} {
			var got []float64
			err, bug := catchAny(func() { got = x.Slice(0, c.start, c.end, c.step).Float64s() })
			if bug != nil || err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%v: Slice(0, %d, %d, %d) = %v (%v %v), want %v", dev, c.start, c.end, c.step, got, err, bug, c.want)
			}
		}
		// torch.zeros(5).narrow(0, 5, 0) is empty; narrow(0, -5, 2) has 2.
		expectShape(t, dev.String()+": Narrow(0, 5, 0)", func() *tensor.Tensor { return x.Narrow(0, 5, 0) }, []int{0})
		expectShape(t, dev.String()+": Narrow(0, -5, 2)", func() *tensor.Tensor { return x.Narrow(0, -5, 2) }, []int{2})
		// Views of a huge, storage-free expansion are legal, as in torch.
		expectShape(t, dev.String()+": Expand to 2^62", func() *tensor.Tensor { return tensor.Ones([]int{1}, tensor.On(dev)).Expand(1 << 62) }, []int{1 << 62})
		expectShape(t, dev.String()+": Zeros of 0 x 2^62 x 2^62", func() *tensor.Tensor {
			return tensor.Zeros([]int{0, 1 << 62, 1 << 62}, tensor.On(dev))
		}, []int{0, 1 << 62, 1 << 62})
	}
}
