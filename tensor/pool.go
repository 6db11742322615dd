package tensor

import "math"

// poolWindow resolves a pool's window: Stride defaults to Kernel, and
// each padding must be at most half its kernel, as PyTorch requires.
func poolWindow(op string, x *Tensor, w Window2d) Window2d {
	if w.Stride == [2]int{} {
		w.Stride = w.Kernel
	}
	w = w.resolved()
	w.check(op, x)
	for i := range 2 {
		if 2*w.Padding[i] > w.Kernel[i] {
			failf(op, ErrArgument, []*Tensor{x}, "padding %v must be at most half the kernel %v", w.Padding, w.Kernel)
		}
	}
	return w
}

// pooled unfolds the 4-D x for a pool, reading padding as pad, and
// returns f of the windows as (n, C, kh·kw, L), run by slices of the
// batch (byBatch), and the positions (oh, ow).
func pooled(op string, x *Tensor, w Window2d, pad float64, f func(win *Tensor) []*Tensor) ([]*Tensor, int, int) {
	oh, ow := w.outSize(op, x.shape[2], x.shape[3], x)
	c, kk := x.shape[1], shapeNumel(op, w.Kernel[:], x)
	outs := byBatch(x, shapeNumel(op, []int{c, kk, oh, ow}, x), func(xs *Tensor) []*Tensor {
		return f(unfold(op, xs, w, pad).Reshape(xs.shape[0], c, kk, oh*ow))
	})
	return outs, oh, ow
}

// unbatch drops the batch dim that batched4 added.
func unbatch(y *Tensor, unbatched bool) *Tensor {
	if unbatched {
		return y.Squeeze(0)
	}
	return y
}

// MaxPool2d returns the maximum of each window of x (N, C, H, W) or (C,
// H, W), as torch.nn.functional.max_pool2d: (N, C, oh, ow) with the
// window's positions; a zero Stride means Kernel; padding never wins. A
// NaN in a window makes its maximum NaN. The gradient goes to the first
// maximum of each window (summed where windows overlap), as PyTorch's.
// It is the maximum over the windows that Unfold makes, padded with
// -Inf. Integer inputs are computed in Float32. It panics with ErrShape
// for another rank or a window that does not fit, and ErrArgument for a
// bad window or a padding over half the kernel.
func MaxPool2d(x *Tensor, w Window2d) *Tensor {
	out, _ := maxPool2d(x, w, false)
	return out
}

// MaxPool2dWithIndices is MaxPool2d that also returns where each
// maximum is, as max_pool2d(return_indices=True): Int32 indices (int64
// in PyTorch) into the flattened (H·W) plane of its channel.
func MaxPool2dWithIndices(x *Tensor, w Window2d) (out, indices *Tensor) {
	return maxPool2d(x, w, true)
}

func maxPool2d(x *Tensor, w Window2d, withIndices bool) (out, indices *Tensor) {
	argsNonNil("MaxPool2d", 1, x)
	x4, unbatched := batched4("MaxPool2d", x)
	w = poolWindow("MaxPool2d", x, w)
	// (N, C, L): the maximum of each window and its kernel element.
	outs, oh, ow := pooled("MaxPool2d", x4, w, math.Inf(-1), func(win *Tensor) []*Tensor {
		vals, at := win.MaxDim(2, false)
		return []*Tensor{vals, at}
	})
	vals, at := outs[0], outs[1]
	n, c := x4.shape[0], x4.shape[1]
	out = unbatch(vals.Reshape(n, c, oh, ow), unbatched)
	if !withIndices {
		return out, nil
	}
	// The input position of kernel element k at window position l is
	// rowOff[k] + base[l], both tables made on the host.
	width := x4.shape[3]
	if x4.shape[2]*width > math.MaxInt32 {
		fail("MaxPool2d", ErrArgument, "indices into a plane of more than 2^31-1 elements do not fit Int32", x)
	}
	rowOff := make([]int32, 0, w.Kernel[0]*w.Kernel[1])
	for i := range w.Kernel[0] {
		for j := range w.Kernel[1] {
			rowOff = append(rowOff, int32(i*w.Dilation[0]*width+j*w.Dilation[1]))
		}
	}
	base := make([]int32, 0, oh*ow)
	for i := range oh {
		for j := range ow {
			base = append(base, int32((i*w.Stride[0]-w.Padding[0])*width+j*w.Stride[1]-w.Padding[1]))
		}
	}
	opts := []Option{On(x.Device()), In(x.Context())}
	rows := From(rowOff, []int{len(rowOff)}, opts...)
	idx := rows.IndexSelect(0, at.Reshape(-1)).Reshape(n, c, oh*ow).Add(From(base, []int{oh * ow}, opts...))
	return out, unbatch(idx.Reshape(n, c, oh, ow), unbatched)
}

// AvgPool2d returns the mean of each window of x (N, C, H, W) or (C, H,
// W), as torch.nn.functional.avg_pool2d: a zero Stride means Kernel;
// countIncludePad (PyTorch's default, true) counts the padding in each
// window's divisor, else only the input elements it covers; with
// CeilMode a window's divisor never counts what lies past the right
// padding. It sums the windows that Unfold makes and divides. The
// window's Dilation must be 0 or 1 (PyTorch's avg_pool2d has none).
// Integer inputs are computed in Float32. It panics as MaxPool2d does.
func AvgPool2d(x *Tensor, w Window2d, countIncludePad bool) *Tensor {
	argsNonNil("AvgPool2d", 1, x)
	x4, unbatched := batched4("AvgPool2d", x)
	if w.Dilation[0] > 1 || w.Dilation[1] > 1 {
		failf("AvgPool2d", ErrArgument, []*Tensor{x}, "avg_pool2d has no dilation, got %v", w.Dilation)
	}
	w = poolWindow("AvgPool2d", x, w)
	outs, oh, ow := pooled("AvgPool2d", x4, w, 0, func(win *Tensor) []*Tensor {
		return []*Tensor{win.SumDims([]int{2}, false)}
	})
	sums := outs[0]
	h, wd := x4.shape[2], x4.shape[3]
	div := make([]float64, 0, oh*ow)
	for i := range oh {
		for j := range ow {
			div = append(div, float64(poolCount(i, w, 0, h, countIncludePad)*poolCount(j, w, 1, wd, countIncludePad)))
		}
	}
	mean := sums.Div(From(div, []int{oh * ow}, On(x.Device()), In(x.Context()), Of(sums.dtype)))
	return unbatch(mean.Reshape(x4.shape[0], x4.shape[1], oh, ow), unbatched)
}

// poolCount returns the extent along dim d of the window at position o
// that avg_pool2d divides by: clipped to the padded input, and to the
// input itself unless includePad.
func poolCount(o int, w Window2d, d, n int, includePad bool) int {
	start := o*w.Stride[d] - w.Padding[d]
	end := min(start+w.Kernel[d], n+w.Padding[d])
	if includePad {
		return end - start
	}
	return min(end, n) - max(start, 0)
}

// AdaptiveAvgPool2d returns the means of x (N, C, H, W) or (C, H, W)
// over size[0]×size[1] windows that tile it, as
// torch.nn.functional.adaptive_avg_pool2d: output row i averages input
// rows [⌊i·H/oh⌋, ⌈(i+1)·H/oh⌉), and columns alike. It is two matrix
// products with averaging matrices made on the host, P_h (oh, H) · x ·
// P_wᵀ (W, ow), so its gradient is MatMul's. Integer inputs are computed
// in Float32. It panics with ErrArgument for a size below 1 and ErrShape
// for another rank or an empty plane.
func AdaptiveAvgPool2d(x *Tensor, size [2]int) *Tensor {
	argsNonNil("AdaptiveAvgPool2d", 1, x)
	x4, unbatched := batched4("AdaptiveAvgPool2d", x)
	if size[0] < 1 || size[1] < 1 {
		failf("AdaptiveAvgPool2d", ErrArgument, []*Tensor{x}, "the output size %v must be positive", size)
	}
	h, wd := x4.shape[2], x4.shape[3]
	if h < 1 || wd < 1 {
		fail("AdaptiveAvgPool2d", ErrShape, "the input plane is empty", x)
	}
	x4 = x4.Cast(floatType(x4.dtype))
	opts := []Option{On(x.Device()), In(x.Context()), Of(x4.dtype)}
	ph := From(adaptiveMatrix(size[0], h), []int{size[0], h}, opts...)
	pw := From(adaptiveMatrix(size[1], wd), []int{size[1], wd}, opts...)
	return unbatch(ph.MatMul(x4).MatMul(pw.T()), unbatched)
}

// adaptiveMatrix returns the (out, in) matrix whose row i averages the
// inputs [⌊i·in/out⌋, ⌈(i+1)·in/out⌉).
func adaptiveMatrix(out, in int) []float64 {
	m := make([]float64, out*in)
	for i := range out {
		lo, hi := i*in/out, ((i+1)*in+out-1)/out
		for k := lo; k < hi; k++ {
			m[i*in+k] = 1 / float64(hi-lo)
		}
	}
	return m
}
