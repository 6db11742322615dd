package nn_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/nested"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// PackNested is PackSequence of the components, and Nested gives them
// back, on every device; the gradient through both is the identity's
// (float64 finite differences); on the GPU both run the same dispatches
// for 3 sequences as for 30.
func TestPackNested(t *testing.T) {
	for _, dev := range devtest.Devices(t) {
		xs := seqs(2, 2, 4, 3, 1, 4)
		for i := range xs {
			xs[i] = xs[i].Float().To(dev)
		}
		x := nested.FromTensors(xs)
		p, q := nn.PackNested(x), nn.PackSequence(xs)
		if !slices.Equal(p.Data.Float32s(), q.Data.Float32s()) || !slices.Equal(p.BatchSizes, q.BatchSizes) ||
			!slices.Equal(p.SortedIndices, q.SortedIndices) || !slices.Equal(p.UnsortedIndices, q.UnsortedIndices) {
			t.Errorf("%v: PackNested differs from PackSequence of the components", dev)
		}
		back := p.Nested()
		if !slices.Equal(back.Lengths(), x.Lengths()) || !slices.Equal(back.Values().Float32s(), x.Values().Float32s()) {
			t.Errorf("%v: PackNested(x).Nested() = %v, want %v", dev, back, x)
		}
		if dev == tensor.CPU {
			continue
		}
		g := devtest.Runtime(t, dev)
		count := func(b int) int64 {
			lengths := make([]int, b)
			for i := range lengths {
				lengths[i] = 1 + i%5
			}
			y := nested.FromValues(tensor.Ones([]int{(b / 5) * 15, 2}, tensor.On(dev)), lengths)
			if err := tensor.Sync(dev); err != nil {
				t.Fatal(err)
			}
			d := g.DispatchCount()
			nn.PackNested(y).Nested()
			return g.DispatchCount() - d
		}
		if few, many := count(5), count(30); few != many {
			t.Errorf("PackNested and Nested: %d dispatches for 5 sequences, %d for 30", few, many)
		}
	}
	lengths := []int{2, 4, 1}
	v := tensor.Randn([]int{7, 3}, tensor.Of(tensor.Float64)).SetRequiresGrad(true)
	f := func(xs []*T) *T {
		p := nn.PackNested(nested.FromValues(xs[0], lengths))
		return p.WithData(p.Data.Square()).Nested().Values()
	}
	if err := autograd.Check(f, []*T{v}, autograd.CheckOptions{}); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		name, op string
		f        func()
	}{
		{"an empty sequence", "nn.PackNested", func() { nn.PackNested(nested.FromValues(v, []int{7, 0})) }},
		{"a nil x", "nn.PackNested", func() { nn.PackNested(nil) }},
		{"a nil receiver", "nn.PackedSequence.Nested", func() { (*nn.PackedSequence)(nil).Nested() }},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, tensor.ErrArgument) || te.Op != c.op {
			t.Errorf("%s: got %v, want a *tensor.Error of %s wrapping ErrArgument", c.name, err, c.op)
		}
	}
}
