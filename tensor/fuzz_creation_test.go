package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// A createCase is one decoded creation call: the call, and either the
// reference result or a check of each value (random functions), with the
// verdict on validity.
type createCase struct {
	name  string
	do    func(opts ...tensor.Option) *tensor.Tensor
	want  ref
	each  func(v float64) bool // for random results: a check of each value
	shape []int                // for random results: the shape
	v     verdict
	tol   float64
}

// adversarialShape returns r.shape() mostly, and sometimes a shape with
// a negative, huge or overflowing size.
func (r *bytesReader) adversarialShape() []int {
	s := r.shape()
	if r.small(4) == 0 {
		s = append(s, r.int())
		if r.small(2) == 0 {
			s = append(s, r.int())
		}
	}
	return s
}

// shapeVerdict says whether a fresh tensor of shape (4-byte elements)
// must be made, must fail, or may go either way (a zero size beside a
// huge one, which PyTorch allows and an allocator may refuse).
func shapeVerdict(shape []int) verdict {
	n, zero, huge := 1, false, false
	for _, s := range shape {
		if s < 0 {
			return mustFail
		}
		zero = zero || s == 0
		huge = huge || s > fuzzBudget
		var ok bool
		if n, ok = mulOK(n, s); !ok || n > fuzzBudget/8 {
			huge = true
		}
	}
	switch {
	case zero && huge:
		return mayWork
	case huge:
		return mustFail
	}
	return mustWork
}

// fits reports whether v is a value dt holds (Full's rule).
func fits(v float64, dt tensor.DType) (bool, float64) {
	switch dt {
	case tensor.Int32:
		if math.IsNaN(v) || v < math.MinInt32 || v >= math.MaxInt32+1 {
			return false, 0
		}
		return true, math.Trunc(v)
	case tensor.Float32:
		if !math.IsInf(v, 0) && !math.IsNaN(v) && math.Abs(v) > math.MaxFloat32 {
			return false, 0
		}
		return true, float64(float32(v))
	case tensor.Bool:
		return true, b2f(v != 0)
	}
	return true, v
}

func decodeCreate(r *bytesReader, dt tensor.DType) createCase {
	switch r.small(7) {
	case 0:
		shape, v := r.adversarialShape(), r.float()
		c := createCase{name: fmt.Sprintf("Full(%v, %v)", shape, v), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Full(shape, v, o...) }, v: shapeVerdict(shape)}
		ok, w := fits(v, dt)
		if !ok && c.v == mustWork {
			c.v = mustFail
		}
		if dt == tensor.Bool && math.IsNaN(v) {
			c.v = max(c.v, mayWork)
		}
		c.want = ref{shape, slices.Repeat([]float64{w}, max(layout.Numel(shape), 0)*b2i(c.v == mustWork))}
		return c
	case 1:
		start, end, step := r.float(), r.float(), r.float()
		c := createCase{name: fmt.Sprintf("Arange(%v, %v, %v)", start, end, step), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Arange(start, end, step, o...) }, tol: 1e-6}
		span := (end - start) / step
		switch {
		case math.IsNaN(span) || math.IsInf(span, 0) || step == 0 || math.IsInf(step, 0):
			c.v = mustFail
		case span < 0:
			c.v = mustFail
		case span > 1<<20:
			c.v = mustFail
		case dt == tensor.Bool:
			c.v = mayWork
		default:
			n := int(math.Ceil(span))
			c.want = ref{[]int{n}, make([]float64, n)}
			for i := range n {
				_, c.want.v[i] = fits(start+float64(i)*step, dt)
				if ok, _ := fits(start+float64(i)*step, dt); !ok {
					c.v = mustFail
				}
			}
			okS, _ := fits(start, dt)
			okE, _ := fits(end, dt)
			if dt == tensor.Int32 && (start != math.Trunc(start) || step != math.Trunc(step)) || !okS || !okE {
				c.v = mayWork // truncation of fractional values: either refuse or truncate
			}
		}
		return c
	case 2:
		start, end, steps := r.float(), r.float(), r.int()
		c := createCase{name: fmt.Sprintf("Linspace(%v, %v, %d)", start, end, steps), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Linspace(start, end, steps, o...) }, tol: 1e-5}
		okS, _ := fits(start, dt)
		okE, _ := fits(end, dt)
		switch {
		case steps < 0 || shapeVerdict([]int{steps}) == mustFail || steps > 0 && (!okS || !okE):
			c.v = mustFail
		case math.IsInf(start, 0) || math.IsInf(end, 0) || math.IsNaN(start) || math.IsNaN(end) || math.Abs(end-start) > 1e30 || dt != tensor.Float32 && dt != tensor.Float64:
			c.v = mayWork
			c.shape, c.each = []int{steps}, func(float64) bool { return true }
		default:
			c.want = ref{[]int{steps}, make([]float64, steps)}
			for i := range steps {
				w := start
				if steps > 1 {
					w = start + float64(i)*(end-start)/float64(steps-1)
				}
				_, c.want.v[i] = fits(w, dt)
			}
		}
		return c
	case 3:
		n := r.int()
		c := createCase{name: fmt.Sprintf("Eye(%d)", n), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Eye(n, o...) }, v: shapeVerdict([]int{n, n})}
		if c.v == mustWork {
			c.want = gen([]int{n, n}, func(idx []int) float64 { return b2f(idx[0] == idx[1]) })
		}
		return c
	case 4:
		lo, hi, shape := r.int(), r.int(), r.adversarialShape()
		c := createCase{name: fmt.Sprintf("RandInt(%d, %d, %v)", lo, hi, shape), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.RandInt(lo, hi, shape, o...) }, v: shapeVerdict(shape), shape: shape}
		c.each = func(v float64) bool { return v >= float64(lo) && v < float64(hi) }
		if lo >= hi || lo < math.MinInt32 || hi > math.MaxInt32 || hi-lo > 1<<24 {
			c.v = mustFail
		}
		if dt != tensor.Int32 {
			c.v = max(c.v, mayWork)
			c.each = func(v float64) bool { return true }
		}
		return c
	case 5:
		lo, hi, shape := r.float(), r.float(), r.adversarialShape()
		c := createCase{name: fmt.Sprintf("Uniform(%v, %v, %v)", shape, lo, hi), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Uniform(shape, lo, hi, o...) }, v: shapeVerdict(shape), shape: shape}
		f32 := func(v float64) float64 { return float64(float32(v)) }
		c.each = func(v float64) bool { return v >= lo && v <= hi }
		if dt == tensor.Float32 {
			c.each = func(v float64) bool { return v >= f32(lo) && v <= f32(hi) }
		}
		big := func(v float64) bool { return math.Abs(v) > math.MaxFloat32 }
		if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsInf(hi-lo, 0) || !dt.IsFloat() || dt == tensor.Float32 && (big(lo) || big(hi) || big(hi-lo)) {
			c.v = mustFail
		}
		return c
	default:
		mean, std, shape := r.float(), r.float(), r.adversarialShape()
		c := createCase{name: fmt.Sprintf("Normal(%v, %v, %v)", shape, mean, std), do: func(o ...tensor.Option) *tensor.Tensor { return tensor.Normal(shape, mean, std, o...) }, v: shapeVerdict(shape), shape: shape}
		c.each = func(v float64) bool {
			return !math.IsNaN(v) || math.IsNaN(mean) || math.IsInf(std, 0) || math.IsInf(mean, 0)
		}
		big := func(v float64) bool { return math.Abs(v) > math.MaxFloat32 }
		if !(std >= 0) || !dt.IsFloat() || dt == tensor.Float32 && (big(mean) || big(std)) {
			c.v = mustFail
		}
		if math.Abs(mean)+6*std > math.MaxFloat32 {
			c.each = func(float64) bool { return true } // samples may overflow to ±Inf, as in PyTorch
		}
		return c
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzCreation calls the creation functions (Full, Arange, Linspace,
// Eye, RandInt, Uniform, Normal) with adversarial shapes (negative,
// huge, overflowing), scalars (NaN, ±Inf, huge) and dtypes (invalid ones
// included), under a small CPU budget, and requires the reference's
// result (or values in range, for random ones), or a *tensor.Error for an
// invalid call. A sampled input repeats the call on the GPU, and an
// invalid device must fail.
func FuzzCreation(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for _, s := range []string{"", "\x00\x02\x02\x03\x05", "\x01\x01\x00\x10\x14", "\x02\x01\x01\x00\x10\x08", "\x03\x01\x02\x07", "\x04\x00\x03\x0a\x02\x01\x02", "\x05\x01\x03\x01\x10\x14", "\x06\x01\x01\x0e\x10\x01\x02", "\x00\x01\x02\xf2\xf3", "\x03\x02\x02\xf5"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		dt := r.dtype()
		if r.small(16) == 0 {
			dt = tensor.DType(4 + r.small(250))
		}
		c := decodeCreate(r, dt)
		runCreate(t, tensor.CPU, dt, c)
		if r.small(16) == 0 {
			bad := c
			bad.v = mustFail
			runCreate(t, tensor.GPU(-1-r.small(3)), dt, bad)
		}
		if leg && dt != tensor.Float64 {
			c.tol = max(c.tol, 1e-6)
			runCreate(t, gpu, dt, c)
		}
	})
}

func runCreate(t *testing.T, dev tensor.Device, dt tensor.DType, c createCase) {
	what := fmt.Sprintf("%v %v %s", dev, dt, c.name)
	if dt > tensor.Bool {
		c.v = mustFail
	}
	var got []float64
	var shape []int
	var gotDT tensor.DType
	ok := call(t, what, func() {
		y := c.do(tensor.On(dev), tensor.Of(dt))
		shape, gotDT, got = y.Shape(), y.DType(), y.Float64s()
	})
	switch {
	case !ok && c.v == mustWork:
		t.Fatalf("%s: refused a valid call: %v", what, tensor.Catch(func() { c.do(tensor.On(dev), tensor.Of(dt)) }))
	case ok && c.v == mustFail:
		t.Fatalf("%s: accepted an invalid call, giving %v %v", what, shape, got)
	case !ok:
		return
	case gotDT != dt:
		t.Fatalf("%s: dtype %v", what, gotDT)
	case c.each != nil:
		if !slices.Equal(shape, c.shape) {
			t.Fatalf("%s: shape %v, want %v", what, shape, c.shape)
		}
		for _, v := range got {
			if !c.each(v) {
				t.Fatalf("%s: value %v out of range", what, v)
			}
		}
	case c.v == mustWork:
		if !slices.Equal(shape, c.want.shape) || !fuzzWithin(got, c.want.v, c.tol) {
			t.Fatalf("%s: got %v %v, want %v %v", what, shape, got, c.want.shape, c.want.v)
		}
	}
}
