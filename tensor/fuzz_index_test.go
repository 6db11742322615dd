package tensor_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
	"github.com/tessera-ml/tessera/tensor"
)

// An indexCase is one decoded index op: its call on tensors of a device
// and its reference result with the verdict on validity.
type indexCase struct {
	name string
	do   func(dev tensor.Device, computed bool) *tensor.Tensor
	want ref
	v    verdict
}

// indexValues returns n index values: in [0, size) mostly, else
// adversarial (negative, past the end, huge).
func (r *bytesReader) indexValues(n, size int) []int32 {
	v := make([]int32, n)
	for i := range v {
		c := r.byte()
		switch {
		case c < 230 && size > 0:
			v[i] = int32(int(c) % size)
		case c%4 == 0:
			v[i] = int32(size)
		case c%4 == 1:
			v[i] = -1
		case c%4 == 2:
			v[i] = 1<<31 - 1
		default:
			v[i] = -1 << 31
		}
	}
	return v
}

func inRange(v []int32, size int) bool {
	for _, i := range v {
		if i < 0 || int(i) >= size {
			return false
		}
	}
	return true
}

// upload makes an Int32 index tensor on dev; computed, it is computed on
// the device (so its range is unknown and checked there, late).
func upload(v []int32, shape []int, dev tensor.Device, computed bool) *tensor.Tensor {
	x := tensor.From(v, shape, tensor.On(dev))
	if computed {
		return x.Add(tensor.Zeros(shape, tensor.On(dev), tensor.Of(tensor.Int32)))
	}
	return x
}

// nearShape returns a shape of rank n no larger than of in each dim
// (or, rarely, larger in one).
func (r *bytesReader) nearShape(of []int) []int {
	s := make([]int, len(of))
	for i, o := range of {
		s[i] = r.small(o + 1)
	}
	if len(s) > 0 && r.small(8) == 0 {
		s[r.small(len(s))]++
	}
	return s
}

func fitsUnder(a, b []int, skip int) bool {
	for i := range a {
		if i != skip && a[i] > b[i] {
			return false
		}
	}
	return true
}

func decodeIndex(r *bytesReader, dt tensor.DType) indexCase {
	xs := r.shape()
	a := refIota(xs)
	xOn := func(dev tensor.Device) *tensor.Tensor { return tensor.New(a.v, xs...).Cast(dt).To(dev) }
	n := len(xs)
	switch r.small(6) {
	case 0:
		d := r.int()
		is := r.nearShape(xs)
		p, ok := normDim(d, n)
		if ok {
			is[p] = r.small(4)
		}
		iv := r.indexValues(layout.Numel(is), sizeAt(xs, p, ok))
		c := indexCase{name: fmt.Sprintf("%v.Gather(%d, %v%v)", xs, d, is, iv), do: func(dev tensor.Device, comp bool) *tensor.Tensor {
			return xOn(dev).Gather(d, upload(iv, is, dev, comp))
		}}
		switch {
		case n == 0:
			c.v = mayWork
		case !ok || !fitsUnder(is, xs, p) || (layout.Numel(is) > 0 && !inRange(iv, xs[p])):
			c.v = mustFail
		default:
			c.want = gen(is, func(idx []int) float64 {
				src := slices.Clone(idx)
				src[p] = int(iv[flat(is, idx)])
				return a.at(src)
			})
		}
		return c
	case 1:
		d := r.int()
		is := r.nearShape(xs)
		p, ok := normDim(d, n)
		if ok {
			is[p] = r.small(4)
		}
		ss := slices.Clone(is)
		for i := range ss {
			ss[i] += r.small(2)
		}
		iv := r.indexValues(layout.Numel(is), sizeAt(xs, p, ok))
		src := refIota(ss)
		c := indexCase{name: fmt.Sprintf("%v.ScatterAdd(%d, %v%v, %v)", xs, d, is, iv, ss), do: func(dev tensor.Device, comp bool) *tensor.Tensor {
			return xOn(dev).ScatterAdd(d, upload(iv, is, dev, comp), tensor.New(src.v, ss...).Cast(dt).To(dev))
		}}
		switch {
		case n == 0 || dt == tensor.Bool:
			c.v = mayWork
		case !ok || !fitsUnder(is, xs, p) || !fitsUnder(is, ss, -1) || (layout.Numel(is) > 0 && !inRange(iv, xs[p])):
			c.v = mustFail
		default:
			out := ref{slices.Clone(xs), slices.Clone(a.v)}
			gen(is, func(idx []int) float64 {
				dst := slices.Clone(idx)
				dst[p] = int(iv[flat(is, idx)])
				out.v[flat(xs, dst)] += src.at(idx)
				return 0
			})
			c.want = out
		}
		return c
	case 2, 3:
		add := r.small(2) == 0
		d := r.int()
		p, ok := normDim(d, n)
		k := r.small(5)
		iv := r.indexValues(k, sizeAt(xs, p, ok))
		ss := slices.Clone(xs)
		if ok {
			ss[p] = k
		}
		src := refIota(ss)
		c := indexCase{name: fmt.Sprintf("%v.IndexSelect(%d, %v)", xs, d, iv), do: func(dev tensor.Device, comp bool) *tensor.Tensor {
			return xOn(dev).IndexSelect(d, upload(iv, []int{k}, dev, comp))
		}}
		if add {
			c.name = fmt.Sprintf("%v.IndexAdd(%d, %v, %v)", xs, d, iv, ss)
			c.do = func(dev tensor.Device, comp bool) *tensor.Tensor {
				return xOn(dev).IndexAdd(d, upload(iv, []int{k}, dev, comp), tensor.New(src.v, ss...).Cast(dt).To(dev))
			}
		}
		switch {
		case n == 0 || (add && dt == tensor.Bool):
			c.v = mayWork
		case !ok || !inRange(iv, xs[p]):
			c.v = mustFail
		case add:
			out := ref{slices.Clone(xs), slices.Clone(a.v)}
			gen(ss, func(idx []int) float64 {
				dst := slices.Clone(idx)
				dst[p] = int(iv[idx[p]])
				out.v[flat(xs, dst)] += src.at(idx)
				return 0
			})
			c.want = out
		default:
			c.want = gen(ss, func(idx []int) float64 {
				s := slices.Clone(idx)
				s[p] = int(iv[idx[p]])
				return a.at(s)
			})
		}
		return c
	case 4:
		d, s, e, st := r.int(), r.int(), r.int(), r.int()
		shape := xs
		if r.small(6) == 0 {
			shape = slices.Clone(xs)
			for i := range shape {
				shape[i] = r.int()
			}
		}
		pos, v := ref{}, mustFail
		if layout.Numel(shape) >= 0 && !slices.ContainsFunc(shape, func(x int) bool { return x < 0 || x > 16 }) {
			pos, v = refSlice(refIota(shape), d, s, e, st)
		} else if !slices.ContainsFunc(shape, func(x int) bool { return x < 0 }) {
			v = mayWork
		}
		ss := pos.shape
		if ss == nil || r.small(8) == 0 {
			ss, v = r.shape(), max(v, mayWork)
		}
		src := refIota(ss)
		c := indexCase{name: fmt.Sprintf("SliceScatter(%v, %v, %d, %d, %d, %d)", ss, shape, d, s, e, st), v: v, do: func(dev tensor.Device, _ bool) *tensor.Tensor {
			return tensor.SliceScatter(tensor.New(src.v, ss...).Cast(dt).To(dev), shape, d, s, e, st)
		}}
		if v == mustWork {
			out := ref{slices.Clone(shape), make([]float64, layout.Numel(shape))}
			for i, q := range pos.v {
				out.v[int(q)] = src.v[i]
			}
			c.want = out
		}
		return c
	default:
		k := r.int()
		iv := r.indexValues(layout.Numel(xs), max(k, 0))
		c := indexCase{name: fmt.Sprintf("OneHot(%v%v, %d)", xs, iv, k), do: func(dev tensor.Device, comp bool) *tensor.Tensor {
			return tensor.OneHot(upload(iv, xs, dev, comp), k)
		}}
		switch {
		case k == -1 || ((k == 0 || k > 1<<16) && layout.Numel(xs) == 0):
			c.v = mayWork
		case k <= 0 || k > 1<<16 || !inRange(iv, k):
			c.v = mustFail
		default:
			c.want = gen(append(slices.Clone(xs), k), func(idx []int) float64 {
				if int(iv[flat(xs, idx[:len(xs)])]) == idx[len(xs)] {
					return 1
				}
				return 0
			})
		}
		return c
	}
}

// flat returns the row-major offset of idx in shape.
func flat(shape, idx []int) int {
	off := 0
	for i, s := range shape {
		off = off*s + idx[i]
	}
	return off
}

func sizeAt(shape []int, p int, ok bool) int {
	if !ok {
		return 1
	}
	return shape[p]
}

// FuzzIndex runs Gather, ScatterAdd, IndexSelect, IndexAdd, SliceScatter
// and OneHot with adversarial dims, shapes and index values (negative,
// past the end, ±2³¹) on small tensors of each dtype and compares each
// with the naive reference: a valid call gives the reference's result, an
// invalid one a *tensor.Error (on the GPU possibly at the read, for
// indices computed there), and nothing panics otherwise.
func FuzzIndex(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for _, s := range []string{"", "\x00\x02\x03\x02\x00\x01\x01\x00\x01\x02\x00", "\x00\x02\x03\x02\x01\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", "\x01\x02\x03\x03\x02\x01\x02\x02\xe8\x00\x01", "\x03\x01\x02\x00\x04\x05\x02\x02\x01\x03\x02\x01", "\x02\x02\x03\x03\x05\x05\xf0\x06\x06\x00\x01"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		dt := r.dtype()
		c := decodeIndex(r, dt)
		runIndex(t, tensor.CPU, false, dt, c)
		if leg && dt != tensor.Float64 {
			runIndex(t, gpu, r.small(2) == 0, dt, c)
		}
	})
}

func runIndex(t *testing.T, dev tensor.Device, computed bool, dt tensor.DType, c indexCase) {
	what := fmt.Sprintf("%v %v %s", dev, dt, c.name)
	var got []float64
	var shape []int
	ok := call(t, what, func() {
		y := c.do(dev, computed)
		shape, got = y.Shape(), y.Float64s()
	})
	if dev.Kind == tensor.KindGPU {
		call(t, what+": Sync", func() { tensor.Sync(dev) })
	}
	switch {
	case !ok && c.v == mustWork:
		t.Fatalf("%s: refused a valid call: %v", what, tensor.Catch(func() { c.do(dev, computed).Float64s() }))
	case ok && c.v == mustFail:
		t.Fatalf("%s: accepted an invalid call, giving %v %v", what, shape, got)
	case ok && c.v == mustWork:
		want := c.want
		if dt == tensor.Bool {
			for i := range want.v {
				want.v[i] = b2f(want.v[i] != 0)
			}
		}
		if !slices.Equal(shape, want.shape) || !fuzzWithin(got, want.v, 0) {
			t.Fatalf("%s: got %v %v, want %v %v", what, shape, got, want.shape, want.v)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
