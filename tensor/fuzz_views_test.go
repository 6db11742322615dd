package tensor_test

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// A verdict is what the reference says of a view call: it must succeed
// with the reference's result, must fail with a *tensor.Error, or may do
// either (where Tessera and PyTorch may reasonably differ); a result is
// then still checked against the reference.
type verdict int

const (
	mustWork verdict = iota
	mustFail
	mayWork
)

// normDim wraps a dim in [-n, n) to [0, n); ok is false outside.
func normDim(d, n int) (int, bool) {
	if d < -n || d >= n {
		return 0, false
	}
	if d < 0 {
		d += n
	}
	return d, true
}

// mulOK returns a*b for non-negative a, b and whether it fits an int.
func mulOK(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int(lo), hi == 0 && lo <= math.MaxInt
}

// viewStep applies one decoded view op to x and to its reference.
type viewStep struct {
	name string
	do   func(*tensor.Tensor) *tensor.Tensor
	ref  func(ref) (ref, verdict)
}

// pick returns the source index of out index idx for a view described by
// a map from output dims to input dims plus offsets.
func decodeView(r *bytesReader, rank int) viewStep {
	switch r.small(12) {
	case 0:
		shape := make([]int, r.small(5))
		for i := range shape {
			shape[i] = r.int()
		}
		return viewStep{fmt.Sprintf("Reshape%v", shape), func(x *tensor.Tensor) *tensor.Tensor { return x.Reshape(shape...) }, func(a ref) (ref, verdict) { return refReshape(a, shape) }}
	case 1:
		n := rank + r.small(3) - 1
		perm := make([]int, max(n, 0))
		for i := range perm {
			perm[i] = r.int()
		}
		return viewStep{fmt.Sprintf("Permute%v", perm), func(x *tensor.Tensor) *tensor.Tensor { return x.Permute(perm...) }, func(a ref) (ref, verdict) { return refPermute(a, perm) }}
	case 2:
		d0, d1 := r.int(), r.int()
		return viewStep{fmt.Sprintf("Transpose(%d,%d)", d0, d1), func(x *tensor.Tensor) *tensor.Tensor { return x.Transpose(d0, d1) }, func(a ref) (ref, verdict) {
			n := len(a.shape)
			p0, ok0 := normDim(d0, n)
			p1, ok1 := normDim(d1, n)
			if n == 0 {
				return a, mayWork
			}
			if !ok0 || !ok1 {
				return a, mustFail
			}
			perm := iotaInts(n)
			perm[p0], perm[p1] = perm[p1], perm[p0]
			return refPermute(a, perm)
		}}
	case 3:
		d, s, e, st := r.int(), r.int(), r.int(), r.int()
		return viewStep{fmt.Sprintf("Slice(%d,%d,%d,%d)", d, s, e, st), func(x *tensor.Tensor) *tensor.Tensor { return x.Slice(d, s, e, st) }, func(a ref) (ref, verdict) { return refSlice(a, d, s, e, st) }}
	case 4:
		d, s, l := r.int(), r.int(), r.int()
		return viewStep{fmt.Sprintf("Narrow(%d,%d,%d)", d, s, l), func(x *tensor.Tensor) *tensor.Tensor { return x.Narrow(d, s, l) }, func(a ref) (ref, verdict) {
			p, ok := normDim(d, len(a.shape))
			if !ok || l < 0 {
				return a, mustFail
			}
			size := a.shape[p]
			v := mustWork
			if s < 0 && s >= -size {
				s, v = s+size, mayWork // torch.narrow wraps a negative start
			}
			if s < 0 || s > size || l > size-s {
				return a, mustFail
			}
			out, _ := refSlice(a, p, s, s+l, 1)
			return out, v
		}}
	case 5:
		d, i := r.int(), r.int()
		return viewStep{fmt.Sprintf("Select(%d,%d)", d, i), func(x *tensor.Tensor) *tensor.Tensor { return x.Select(d, i) }, func(a ref) (ref, verdict) {
			p, ok := normDim(d, len(a.shape))
			if !ok {
				return a, mustFail
			}
			size := a.shape[p]
			if i < -size || i >= size {
				return a, mustFail
			}
			if i < 0 {
				i += size
			}
			shape := slices.Delete(slices.Clone(a.shape), p, p+1)
			return gen(shape, func(idx []int) float64 { return a.at(slices.Insert(slices.Clone(idx), p, i)) }), mustWork
		}}
	case 6:
		sizes := make([]int, rank+r.small(3))
		for i := range sizes {
			sizes[i] = r.int()
		}
		return viewStep{fmt.Sprintf("Expand%v", sizes), func(x *tensor.Tensor) *tensor.Tensor { return x.Expand(sizes...) }, func(a ref) (ref, verdict) { return refExpand(a, sizes) }}
	case 7:
		dims := make([]int, r.small(3))
		for i := range dims {
			dims[i] = r.int()
		}
		return viewStep{fmt.Sprintf("Squeeze%v", dims), func(x *tensor.Tensor) *tensor.Tensor { return x.Squeeze(dims...) }, func(a ref) (ref, verdict) { return refSqueeze(a, dims) }}
	case 8:
		d := r.int()
		return viewStep{fmt.Sprintf("Unsqueeze(%d)", d), func(x *tensor.Tensor) *tensor.Tensor { return x.Unsqueeze(d) }, func(a ref) (ref, verdict) {
			p, ok := normDim(d, len(a.shape)+1)
			if !ok {
				return a, mustFail
			}
			return ref{slices.Insert(slices.Clone(a.shape), p, 1), a.v}, mustWork
		}}
	case 9:
		s, e := r.int(), r.int()
		return viewStep{fmt.Sprintf("Flatten(%d,%d)", s, e), func(x *tensor.Tensor) *tensor.Tensor { return x.Flatten(s, e) }, func(a ref) (ref, verdict) {
			n := len(a.shape)
			if n == 0 {
				return ref{[]int{1}, a.v}, mayWork
			}
			ps, ok0 := normDim(s, n)
			pe, ok1 := normDim(e, n)
			if !ok0 || !ok1 || ps > pe {
				return a, mustFail
			}
			shape := slices.Concat(a.shape[:ps], []int{layout.Numel(a.shape[ps : pe+1])}, a.shape[pe+1:])
			return ref{shape, a.v}, mustWork
		}}
	case 10:
		return viewStep{"T()", (*tensor.Tensor).T, func(a ref) (ref, verdict) {
			if len(a.shape) < 2 {
				return a, mayWork
			}
			if len(a.shape) > 2 {
				return a, mustFail
			}
			return refPermute(a, []int{1, 0})
		}}
	default:
		return viewStep{"Contiguous()", (*tensor.Tensor).Contiguous, func(a ref) (ref, verdict) { return a, mustWork }}
	}
}

func iotaInts(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func refReshape(a ref, shape []int) (ref, verdict) {
	n, infer, zero := 1, -1, false
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
			continue
		case s < 0:
			return a, mustFail
		case s == 0:
			zero = true
		}
		var ok bool
		if n, ok = mulOK(n, s); !ok {
			if zero {
				return a, mayWork
			}
			return a, mustFail
		}
	}
	out := slices.Clone(shape)
	if infer >= 0 {
		if n == 0 || len(a.v)%n != 0 {
			return a, mustFail
		}
		out[infer] = len(a.v) / n
	} else if n != len(a.v) {
		return a, mustFail
	}
	if zero && slices.ContainsFunc(shape, func(s int) bool { return s > 1<<20 }) {
		return ref{out, a.v}, mayWork
	}
	return ref{out, a.v}, mustWork
}

func refPermute(a ref, perm []int) (ref, verdict) {
	n := len(a.shape)
	if len(perm) != n {
		return a, mustFail
	}
	seen := make([]bool, n)
	p := make([]int, n)
	for i, d := range perm {
		q, ok := normDim(d, n)
		if !ok || seen[q] {
			return a, mustFail
		}
		seen[q], p[i] = true, q
	}
	shape := make([]int, n)
	for i, q := range p {
		shape[i] = a.shape[q]
	}
	src := make([]int, n)
	return gen(shape, func(idx []int) float64 {
		for i, q := range p {
			src[q] = idx[i]
		}
		return a.at(src)
	}), mustWork
}

func refSlice(a ref, d, s, e, st int) (ref, verdict) {
	p, ok := normDim(d, len(a.shape))
	if !ok || st <= 0 {
		return a, mustFail
	}
	size := a.shape[p]
	clamp := func(i int) int {
		if i < 0 {
			i = max(i+size, 0)
		}
		return min(i, size)
	}
	s, e = clamp(s), clamp(e)
	n := 0
	if e > s {
		n = (e-s-1)/st + 1
	}
	shape := slices.Clone(a.shape)
	shape[p] = n
	src := make([]int, len(shape))
	return gen(shape, func(idx []int) float64 {
		copy(src, idx)
		src[p] = s + idx[p]*st
		return a.at(src)
	}), mustWork
}

func refExpand(a ref, sizes []int) (ref, verdict) {
	n := len(a.shape)
	if len(sizes) < n {
		return a, mustFail
	}
	lead := len(sizes) - n
	shape := make([]int, len(sizes))
	for i, s := range sizes {
		switch {
		case i < lead && s >= 0:
			shape[i] = s
		case i < lead:
			return a, mustFail
		case s == -1 || s == a.shape[i-lead]:
			shape[i] = a.shape[i-lead]
		case a.shape[i-lead] == 1 && s >= 0:
			shape[i] = s
		default:
			return a, mustFail
		}
	}
	total := 1
	for _, s := range shape {
		var ok bool
		if total, ok = mulOK(total, s); !ok || total > 1<<12 {
			return ref{shape: shape}, mayWork // too large to check by value
		}
	}
	src := make([]int, n)
	return gen(shape, func(idx []int) float64 {
		for i := range src {
			if a.shape[i] != 1 {
				src[i] = idx[lead+i]
			}
		}
		return a.at(src)
	}), mustWork
}

func refSqueeze(a ref, dims []int) (ref, verdict) {
	n := len(a.shape)
	drop := make([]bool, n)
	if len(dims) == 0 {
		for i, s := range a.shape {
			drop[i] = s == 1
		}
	}
	v := mustWork
	for _, d := range dims {
		if n == 0 && (d == 0 || d == -1) {
			v = mayWork // torch squeezes a 0-d tensor at dim 0 or -1
			continue
		}
		p, ok := normDim(d, n)
		if !ok {
			return a, mustFail
		}
		if drop[p] {
			v = mayWork // a repeated dim
		}
		drop[p] = a.shape[p] == 1
	}
	var shape []int
	for i, s := range a.shape {
		if !drop[i] {
			shape = append(shape, s)
		}
	}
	return ref{append([]int{}, shape...), a.v}, v
}

// FuzzViews applies a chain of up to six view ops, with adversarial dims,
// sizes and bounds, to a small tensor of each dtype and compares every
// step with the naive reference: a valid call gives the reference's shape
// and values (read directly and through a kernel), an invalid one a
// *tensor.Error, and nothing panics otherwise. A sampled input repeats
// the chain on the GPU.
func FuzzViews(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for _, s := range []string{"", "\x02\x03\x10\x05\x00\x01", "\x03\x02\x02\x06\x03\x02\xf0\x05\x01", "\x01\x01\x03\x00\x06\x01\xff\x04\x03"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		shape, dt := r.shape(), r.dtype()
		devs := []tensor.Device{tensor.CPU}
		if r.gpuLeg(hasGPU) && dt != tensor.Float64 {
			devs = append(devs, gpu)
		}
		steps := make([]viewStep, r.small(7))
		a := refIota(shape)
		if dt == tensor.Bool {
			for i := range a.v {
				a.v[i] = float64(i % 2)
			}
		}
		for i := range steps {
			steps[i] = decodeView(r, len(a.shape))
		}
		for _, dev := range devs {
			runViews(t, dev, dt, a, steps)
		}
	})
}

func runViews(t *testing.T, dev tensor.Device, dt tensor.DType, a ref, steps []viewStep) {
	x := tensor.New(a.v, a.shape...).Cast(dt).To(dev)
	what := fmt.Sprintf("%v %v %v", dev, dt, a.shape)
	for _, st := range steps {
		what += "." + st.name
		want, v := st.ref(a)
		var y *tensor.Tensor
		ok := call(t, what, func() { y = st.do(x) })
		switch {
		case !ok && v == mustWork:
			t.Fatalf("%s: refused a valid call: %v", what, tensor.Catch(func() { st.do(x) }))
		case !ok:
			return
		case v == mustFail:
			t.Fatalf("%s: accepted an invalid call, giving shape %v", what, y.Shape())
		}
		if want.v == nil && layout.Numel(want.shape) != 0 {
			if !slices.Equal(y.Shape(), want.shape) {
				t.Fatalf("%s: shape %v, want %v", what, y.Shape(), want.shape)
			}
			return // a huge expanded view: its shape is all to check
		}
		checkRef(t, what, y, want, 0)
		if call(t, what+".MulScalar(1)", func() { y.MulScalar(1).Release() }) != true {
			t.Fatalf("%s: a kernel refused the view", what)
		}
		x, a = y, want
	}
}
