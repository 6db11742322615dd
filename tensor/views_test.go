package tensor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/tensor"
)

// iota64 returns 0, 1, ..., n-1 as float64.
func iota64(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

// TestViewsShareStorage checks that every view method returns a tensor
// over its input's storage, as in PyTorch.
func TestViewsShareStorage(t *testing.T) {
	base := tensor.New(iota64(24), 2, 3, 4)
	views := map[string]*tensor.Tensor{
		"Transpose":                base.Transpose(0, 2),
		"Permute":                  base.Permute(2, 0, 1),
		"Slice step":               base.Slice(2, 1, 4, 2),
		"Select":                   base.Select(1, 2),
		"Narrow":                   base.Narrow(2, 1, 2),
		"Unsqueeze":                base.Unsqueeze(1),
		"Squeeze":                  base.Unsqueeze(0).Squeeze(0),
		"View":                     base.View(6, 4),
		"Reshape of contiguous":    base.Reshape(4, -1),
		"Flatten":                  base.Flatten(0, 1),
		"Expand":                   base.Unsqueeze(0).Expand(5, 2, 3, 4),
		"Detach":                   base.Detach(),
		"T":                        base.Select(0, 1).T(),
		"Contiguous of contiguous": base.Contiguous(),
		"Split piece":              base.Split(2, 2)[1],
		"Chunk piece":              base.Chunk(3, 1)[2],
		"SplitSizes piece":         base.SplitSizes([]int{1, 3}, 2)[1],
	}
	for name, v := range views {
		if !v.SharesStorage(base) {
			t.Errorf("%s copied instead of returning a view", name)
		}
	}
	for name, c := range map[string]*tensor.Tensor{
		"Clone":                  base.Clone(),
		"Contiguous of a view":   base.Transpose(0, 1).Contiguous(),
		"Reshape of a transpose": base.Transpose(1, 2).Reshape(-1),
	} {
		if c.SharesStorage(base) {
			t.Errorf("%s shares storage, want a copy", name)
		}
	}
}

// TestViewWritesReachBase writes through views with CopyFrom and checks
// that exactly the elements the view maps to change in the base.
func TestViewWritesReachBase(t *testing.T) {
	base := tensor.New(iota64(24), 2, 3, 4)
	// v[a][b][c] = base[c][b][1+2a]: shape [2, 3, 2].
	v := base.Transpose(0, 2).Slice(0, 1, 4, 2)
	v.CopyFrom(tensor.New(iota64(12), 2, 3, 2).AddScalar(100))
	want := iota64(24)
	for a := 0; a < 2; a++ {
		for b := 0; b < 3; b++ {
			for c := 0; c < 2; c++ {
				want[c*12+b*4+1+2*a] = float64(100 + a*6 + b*2 + c)
			}
		}
	}
	if got := base.Float64s(); !slices.Equal(got, want) {
		t.Errorf("after CopyFrom through Transpose+Slice:\n got %v\nwant %v", got, want)
	}

	// Select then Narrow, with a broadcast source.
	base2 := tensor.New(iota64(24), 2, 3, 4)
	base2.Select(1, 2).Narrow(1, 1, 2).CopyFrom(tensor.New([]float64{-1, -2}))
	want2 := iota64(24)
	for i := 0; i < 2; i++ {
		want2[i*12+2*4+1], want2[i*12+2*4+2] = -1, -2
	}
	if got := base2.Float64s(); !slices.Equal(got, want2) {
		t.Errorf("after CopyFrom through Select+Narrow:\n got %v\nwant %v", got, want2)
	}

	// A write to the base shows in an existing view.
	base3 := tensor.New(iota64(6), 2, 3)
	col := base3.Select(1, 1)
	base3.Fill(7)
	if got := col.Float64s(); !slices.Equal(got, []float64{7, 7}) {
		t.Errorf("view after Fill on the base = %v, want [7 7]", got)
	}
}

// TestViewNeedsCompatibleStrides checks View against torch.Tensor.view:
// it fails with ErrShape when the strides cannot express the new shape,
// where Reshape copies instead; it succeeds on non-contiguous tensors
// when they can.
func TestViewNeedsCompatibleStrides(t *testing.T) {
	x := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3).Transpose(0, 1) // [[1 4] [2 5] [3 6]]
	for name, f := range map[string]func(){
		"View(-1) of a transposed 2-D tensor":   func() { x.View(-1) },
		"View(2, 3) of a transposed 2-D tensor": func() { x.View(2, 3) },
		"View(-1) of step-sliced rows":          func() { tensor.New(iota64(70), 14, 5).Slice(0, 0, 14, 2).View(-1) },
		"View(-1) of an expanded tensor":        func() { tensor.New(iota64(7), 7, 1).Expand(7, 5).View(-1) },
	} {
		err := tensor.Catch(f)
		if !errors.Is(err, tensor.ErrShape) {
			t.Errorf("%s: error %v, want ErrShape", name, err)
		}
	}
	r := x.Reshape(-1)
	if r.SharesStorage(x) {
		t.Error("Reshape(-1) of a transposed tensor did not copy")
	}
	if got := r.Float64s(); !slices.Equal(got, []float64{1, 4, 2, 5, 3, 6}) {
		t.Errorf("Reshape(-1) of a transposed tensor = %v", got)
	}

	// Viewable non-contiguous cases: splitting or adding dims keeps strides.
	for name, c := range map[string]struct {
		x     *tensor.Tensor
		shape []int
	}{
		"split a dim of a transpose":             {tensor.New(iota64(24), 4, 6).T(), []int{3, 2, 4}},
		"unit dim into step-sliced rows":         {tensor.New(iota64(70), 14, 5).Slice(0, 0, 14, 2), []int{7, 1, 5}},
		"merge the contiguous dims of a permute": {tensor.New(iota64(24), 2, 3, 4).Permute(1, 0, 2).Unsqueeze(3), []int{3, 2, 4}},
	} {
		var v *tensor.Tensor
		if err := tensor.Catch(func() { v = c.x.View(c.shape...) }); err != nil {
			t.Errorf("%s: View%v failed: %v", name, c.shape, err)
			continue
		}
		if !v.SharesStorage(c.x) || !slices.Equal(v.Shape(), c.shape) {
			t.Errorf("%s: View%v gave shape %v, shares storage %v", name, c.shape, v.Shape(), v.SharesStorage(c.x))
		}
		if want := c.x.Reshape(c.shape...).Contiguous().Float64s(); !slices.Equal(v.Float64s(), want) {
			t.Errorf("%s: View%v = %v, want %v", name, c.shape, v.Float64s(), want)
		}
	}
}

// TestViewsShareVersionCounter checks that views and their base share
// one version counter, which in-place ops bump and out-of-place ops and
// copies do not.
func TestViewsShareVersionCounter(t *testing.T) {
	base := tensor.New(iota64(12), 3, 4)
	tr, sl, det := base.Transpose(0, 1), base.Slice(1, 0, 4, 2), base.Detach()
	cl := base.Clone()
	v0, c0 := base.Version(), cl.Version()
	check := func(step string, want uint64) {
		t.Helper()
		for name, x := range map[string]*tensor.Tensor{"base": base, "Transpose": tr, "Slice": sl, "Detach": det} {
			if got := x.Version(); got != want {
				t.Errorf("after %s: %s at version %d, want %d", step, name, got, want)
			}
		}
	}
	check("nothing", v0)
	_ = tr.Add(sl.Sum()).MulScalar(2)
	check("out-of-place ops", v0)
	tr.AddScalarInPlace(1)
	check("AddScalarInPlace on a transpose", v0+1)
	sl.CopyFrom(tensor.Zeros([]int{3, 2}, tensor.Of(tensor.Float64)))
	check("CopyFrom on a slice", v0+2)
	base.MulScalarInPlace(3)
	check("MulScalarInPlace on the base", v0+3)
	det.Fill(1)
	check("Fill on a detached view", v0+4)
	if cl.Version() != c0 {
		t.Errorf("a clone's version moved from %d to %d with its source's", c0, cl.Version())
	}
}

// TestInPlaceOnViewOfSavedTensor checks PyTorch's "modified by an
// inplace operation" error when the tensor a derivative rule saved is
// changed through a view.
func TestInPlaceOnViewOfSavedTensor(t *testing.T) {
	run := func(modify bool) error {
		w := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3).SetRequiresGrad(true)
		x := tensor.New([]float64{6, 5, 4, 3, 2, 1}, 2, 3)
		y := w.Mul(x) // Mul saves x for w's gradient
		if modify {
			x.Transpose(0, 1).Select(0, 1).AddScalarInPlace(1)
		}
		return tensor.Catch(func() { autograd.Backward(y.Sum()) })
	}
	if err := run(false); err != nil {
		t.Fatalf("backward without in-place change: %v", err)
	}
	err := run(true)
	if !errors.Is(err, tensor.ErrAutograd) || !strings.Contains(err.Error(), "modified by an inplace operation") {
		t.Errorf("backward after changing a saved tensor through a view: error %v, want ErrAutograd "+
			"\"modified by an inplace operation\"", err)
	}
}

// TestOwnsStorage: a fresh tensor owns its memory; while a view shares
// it, neither does; a full contiguous view owns it once the base is
// released, a transposed one never; a released tensor owns nothing.
func TestOwnsStorage(t *testing.T) {
	x := tensor.Zeros([]int{3, 4})
	if !x.OwnsStorage() {
		t.Fatal("a fresh tensor does not own its storage")
	}
	v, tr := x.View(12), x.T()
	if x.OwnsStorage() || v.OwnsStorage() {
		t.Fatal("a tensor and its view both own one storage")
	}
	x.Release()
	tr.Release()
	if !v.OwnsStorage() {
		t.Fatal("the last full contiguous view does not own its storage")
	}
	v.Release()
	if v.OwnsStorage() {
		t.Fatal("a released tensor owns its storage")
	}
	y := tensor.Zeros([]int{2, 3})
	yt := y.T()
	y.Release()
	if yt.OwnsStorage() {
		t.Fatal("a transposed view owns its storage")
	}
}
