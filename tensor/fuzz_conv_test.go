package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// convCase is one Conv2d call of FuzzConv: operands and options.
type convCase struct {
	x, w, b ref
	bias    bool
	o       tensor.ConvOptions
}

// resolve returns Tessera's reading of a stride or dilation (0 means 1).
func resolve(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// convRef is torch.nn.functional.conv2d on naive references with
// Tessera's zero-value options (stride, dilation 0 → 1, groups 0 → 1),
// and whether the call is valid; big reports an output too large to
// build here (the call may then fail for memory).
func convRef(c convCase) (out ref, valid, big bool) {
	xs, ws := c.x.shape, c.w.shape
	g := max(c.o.Groups, 1)
	if c.o.Groups < 0 {
		return ref{}, false, false
	}
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	cout, kh, kw := ws[0], ws[2], ws[3]
	if cin != ws[1]*g || cout%g != 0 {
		return ref{}, false, false
	}
	var s, d, p [2]int
	var oh [2]int
	ext := [2]int{h, wd}
	kern := [2]int{kh, kw}
	for i := range 2 {
		s[i], d[i], p[i] = resolve(c.o.Stride[i]), resolve(c.o.Dilation[i]), c.o.Padding[i]
		if kern[i] > 1<<30 || s[i] > 1<<30 || d[i] > 1<<30 || p[i] > 1<<30 || kern[i] < 1 || s[i] < 1 || d[i] < 1 || p[i] < 0 {
			return ref{}, false, false
		}
		span := ext[i] + 2*p[i] - d[i]*(kern[i]-1) - 1
		if span < 0 {
			return ref{}, false, false
		}
		oh[i] = span/s[i] + 1
	}
	if float64(n)*float64(cout)*float64(oh[0])*float64(oh[1]) > 1e5 {
		return ref{}, true, true
	}
	cpg, opg := cin/g, cout/g
	out = gen([]int{n, cout, oh[0], oh[1]}, func(idx []int) float64 {
		b, o, i, j := idx[0], idx[1], idx[2], idx[3]
		sum := 0.0
		if c.bias {
			sum = c.b.v[o]
		}
		grp := o / opg
		for ch := range cpg {
			for u := range kh {
				for v := range kw {
					y, x := i*s[0]-p[0]+u*d[0], j*s[1]-p[1]+v*d[1]
					if y < 0 || y >= h || x < 0 || x >= wd {
						continue
					}
					sum += c.x.at([]int{b, grp*cpg + ch, y, x}) * c.w.at([]int{o, ch, u, v})
				}
			}
		}
		return sum
	})
	return out, true, false
}

// FuzzConv runs Conv2d with adversarial strides, paddings, dilations and
// groups (negative, zero, huge) over small operands with adversarial
// values, and requires the naive float64 reference's result for a valid
// Float64 call, a *tensor.Error for an invalid one, and, on a sampled
// GPU leg with Float32 operands, the CPU's outcome and values.
func FuzzConv(f *testing.F) {
	gpu, hasGPU := fuzzSetup(f)
	for _, s := range []string{"", "\x00\x01\x02\x02\x03\x03\x01\x02\x02\x05\x05\x05\x05\x05\x05\x05", "\x00\x01\x01\x04\x04\x05\x01\x02\x03\x06\x06\x06\x07\x05\x05\x07", "\x01\x01\x02\x03\x03\x03\x01\x01\x01\x05\x05\x06\x06\x05\x05\x06"} {
		f.Add([]byte(s))
	}
	sizes := []int{1, 2, 3, 4, 1, 2, 3, 0}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesReader{b: data}
		leg := r.gpuLeg(hasGPU)
		dt := []tensor.DType{tensor.Float64, tensor.Float32}[r.small(2)]
		groups := r.int()
		g := max(groups, 1)
		if g > 4 {
			g = 1
		}
		n, cpg, cout := []int{1, 2, 0}[r.small(3)], 1+r.small(3), g*(1+r.small(3))
		if r.small(8) == 0 {
			cout++ // channels that do not divide by the groups
		}
		xs := []int{n, g * cpg, sizes[r.small(8)] + 1, sizes[r.small(8)] + 1}
		ws := []int{cout, cpg, sizes[r.small(8)], sizes[r.small(8)]}
		c := convCase{bias: r.small(2) == 0}
		c.o.Groups = groups
		for i := range 2 {
			c.o.Stride[i], c.o.Padding[i], c.o.Dilation[i] = r.int(), r.int(), r.int()
		}
		c.x, c.w, c.b = ref{xs, r.values(xs)}, ref{ws, r.values(ws)}, ref{[]int{cout}, r.values([]int{cout})}
		want, valid, big := convRef(c)
		what := fmt.Sprintf("Conv2d(%v x %v, w %v, bias %v, %+v)", dt, xs, ws, c.bias, c.o)
		run := func(dev tensor.Device) (res *tensor.Tensor, ok bool) {
			ok = call(t, what, func() {
				x := tensor.New(c.x.v, xs...).Cast(dt).To(dev)
				w := tensor.New(c.w.v, ws...).Cast(dt).To(dev)
				var b *tensor.Tensor
				if c.bias {
					b = tensor.New(c.b.v, cout).Cast(dt).To(dev)
				}
				res = tensor.Conv2d(x, w, b, c.o)
				res.Float64s()
			})
			return res, ok
		}
		cpuRes, cpuOK := run(tensor.CPU)
		switch {
		case cpuOK && !valid:
			t.Fatalf("%s: accepted an invalid call, giving %v", what, cpuRes.Shape())
		case !cpuOK && valid && !big:
			t.Fatalf("%s: refused a valid call: %v", what, tensor.Catch(func() { run(tensor.CPU) }))
		case cpuOK && !big && dt == tensor.Float64:
			finite := !slices.ContainsFunc(append(slices.Clone(c.x.v), c.w.v...), func(v float64) bool { return math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > 1e150 })
			if finite {
				checkRefScaled(t, what, cpuRes, want, 1+sumAbs(c.x.v)*sumAbs(c.w.v)+sumAbs(c.b.v))
			}
		}
		if !leg || dt != tensor.Float32 || big {
			return
		}
		gpuRes, gpuOK := run(gpu)
		switch {
		case gpuOK != cpuOK:
			t.Fatalf("%s: the CPU succeeded %v, the GPU %v", what, cpuOK, gpuOK)
		case !cpuOK:
			return
		case !slices.Equal(cpuRes.Shape(), gpuRes.Shape()):
			t.Fatalf("%s: CPU %v, GPU %v", what, cpuRes.Shape(), gpuRes.Shape())
		}
		if !slices.ContainsFunc(append(slices.Clone(c.x.v), c.w.v...), func(v float64) bool { return math.Abs(v) > 1e30 || math.IsNaN(v) }) {
			checkRefScaled(t, what+" GPU vs CPU", gpuRes.To(tensor.CPU), ref{cpuRes.Shape(), cpuRes.Float64s()}, 1e5*(1+sumAbs(c.x.v)*sumAbs(c.w.v)+sumAbs(c.b.v)))
		}
	})
}
