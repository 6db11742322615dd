package tensor

// ConvOptions are the arguments of Conv2d and ConvTranspose2d after the
// tensors, as torch.nn.functional.conv2d and conv_transpose2d take them:
// Stride, Padding and Dilation as (height, width) pairs, zero Stride and
// Dilation meaning 1; Groups, 0 meaning 1; OutputPadding, ConvTranspose2d
// only: rows and columns added to one side of its output.
type ConvOptions struct {
	Stride, Padding, Dilation, OutputPadding [2]int
	Groups                                   int
}

// window returns the sliding window of a kernel (kh, kw) under o.
func (o ConvOptions) window(kh, kw int) Window2d {
	return Window2d{Kernel: [2]int{kh, kw}, Stride: o.Stride, Padding: o.Padding, Dilation: o.Dilation}.resolved()
}

// groups returns o.Groups, 0 meaning 1.
func (o ConvOptions) groups() int { return max(o.Groups, 1) }

// convArgs are the checked operands of a convolution: x as 4-D (and
// whether it was 3-D), weight and bias in the float dtype they compute
// in, the groups, the window of the weight's kernel, and x's extent.
type convArgs struct {
	x, w, b   *Tensor
	unbatched bool
	g         int
	win       Window2d
	h, wd     int
}

// convOperands checks the operands shared by Conv2d and
// ConvTranspose2d (transposed): the weight is (Cout, Cin/groups, kh, kw)
// for Conv2d and (Cin, Cout/groups, kh, kw) for ConvTranspose2d.
func convOperands(op string, x, weight, bias *Tensor, o ConvOptions, transposed bool) convArgs {
	argsNonNil(op, 1, x, weight)
	g := o.groups()
	if o.Groups < 0 {
		failf(op, ErrArgument, []*Tensor{x, weight}, "groups must be positive, got %d", o.Groups)
	}
	x4, unbatched := batched4(op, x)
	if weight.Dim() != 4 {
		fail(op, ErrShape, "the weight must be 4-D", x, weight, bias)
	}
	for _, t := range []*Tensor{weight, bias} {
		if t != nil && t.Device() != x.Device() {
			fail(op, ErrDevice, "input, weight and bias must be on one device", x, weight, bias)
		}
	}
	cin, ws := x4.shape[1], weight.shape
	cout := ws[0]
	if transposed {
		cout = ws[1] * g
	}
	switch {
	case !transposed && (cin != ws[1]*g || ws[0]%g != 0):
		failf(op, ErrShape, []*Tensor{x, weight, bias}, "with %d groups the weight must be (out_channels divisible by %d, %d, kh, kw) for %d input channels", g, g, cin/max(g, 1), cin)
	case transposed && (cin != ws[0] || cin%g != 0):
		failf(op, ErrShape, []*Tensor{x, weight, bias}, "with %d groups the weight must be (%d, out_channels/%d, kh, kw) for %d input channels divisible by %d", g, cin, g, cin, g)
	case bias != nil && (bias.Dim() != 1 || bias.shape[0] != cout):
		failf(op, ErrShape, []*Tensor{x, weight, bias}, "the bias must have shape [%d]", cout)
	}
	dt := floatType(PromoteTypes(x.dtype, weight.dtype))
	if bias != nil {
		dt = floatType(PromoteTypes(dt, bias.dtype))
		bias = bias.Cast(dt)
	}
	win := o.window(ws[2], ws[3])
	win.check(op, x, weight)
	return convArgs{x: x4.Cast(dt), w: weight.Cast(dt), b: bias, unbatched: unbatched, g: g, win: win,
		h: x4.shape[2], wd: x4.shape[3]}
}

// withBias adds bias (C) or nil over dim 1 of y (N, C, H, W) and drops
// the batch dim of an unbatched call.
func withBias(y, bias *Tensor, unbatched bool) *Tensor {
	if bias != nil {
		y = y.Add(bias.Reshape(-1, 1, 1))
	}
	if unbatched {
		return y.Squeeze(0)
	}
	return y
}

// Conv2d returns the 2-D cross-correlation of x (N, Cin, H, W) with
// weight (Cout, Cin/groups, kh, kw), plus bias (Cout) when not nil, as
// torch.nn.functional.conv2d: a (N, Cout, oh, ow) result, or (Cout, oh,
// ow) for a 3-D x (Cin, H, W). It unfolds x into columns (im2col) and
// multiplies them by the weight with MatMul, one matrix product per
// group, so both devices run it through their GEMM; the gradients are
// those of Unfold and MatMul. The columns take kh·kw times the input's
// memory, and autograd keeps them for the weight's gradient; a batch
// whose columns pass 64 MiB runs by slices of samples. Integer inputs are computed in Float32.
// It panics with ErrShape when the channels, groups or bias do not match
// or the kernel does not fit the padded input, ErrArgument for a
// non-positive stride, dilation or groups or a negative padding, and
// ErrDevice for operands on different devices.
func Conv2d(x, weight, bias *Tensor, o ConvOptions) *Tensor {
	a := convOperands("Conv2d", x, weight, bias, o, false)
	w, g, win := a.w, a.g, a.win
	cout, kk := w.shape[0], w.shape[2]*w.shape[3]
	oh, ow := win.outSize("Conv2d", a.h, a.wd, x, weight)
	k := a.x.shape[1] / g * kk // the columns of one group
	wm := w.Reshape(g, cout/g, k)
	y := byBatch(a.x, shapeNumel("Conv2d", []int{g, k, oh, ow}, x, weight), func(xs *Tensor) []*Tensor {
		n := xs.shape[0]
		cols := unfold("Conv2d", xs, win, 0) // (n, Cin·kh·kw, L)
		if g == 1 {
			return []*Tensor{wm.Squeeze(0).MatMul(cols).Reshape(n, cout, oh, ow)}
		}
		return []*Tensor{wm.MatMul(cols.Reshape(n, g, k, oh*ow)).Reshape(n, cout, oh, ow)}
	})[0]
	return withBias(y, a.b, a.unbatched)
}

// ConvTranspose2d returns the transposed convolution of x (N, Cin, H, W)
// with weight (Cin, Cout/groups, kh, kw), plus bias (Cout) when not nil,
// as torch.nn.functional.conv_transpose2d: the gradient of Conv2d with
// respect to its input. The result is (N, Cout, oh, ow) with oh = (H-1)·
// stride - 2·padding + dilation·(kh-1) + output_padding + 1 (ow alike),
// or 3-D for a 3-D x. It multiplies x by the weight with MatMul and sums
// the columns into the output with Fold (col2im). Integer inputs are
// computed in Float32. It panics as Conv2d does, and with ErrArgument
// when an output padding is not smaller than the stride or the dilation.
func ConvTranspose2d(x, weight, bias *Tensor, o ConvOptions) *Tensor {
	a := convOperands("ConvTranspose2d", x, weight, bias, o, true)
	w, g, win, h, wd := a.w, a.g, a.win, a.h, a.wd
	cin, kh, kw := w.shape[0], w.shape[2], w.shape[3]
	var size [2]int
	for i, in := range [2]int{h, wd} {
		op := o.OutputPadding[i]
		if op < 0 || op >= win.Stride[i] && op >= win.Dilation[i] {
			failf("ConvTranspose2d", ErrArgument, []*Tensor{x, weight}, "output padding %v must be non-negative and smaller than the stride %v or the dilation %v", o.OutputPadding, win.Stride, win.Dilation)
		}
		size[i] = (in-1)*win.Stride[i] - 2*win.Padding[i] + win.Dilation[i]*(win.Kernel[i]-1) + op + 1
		if size[i] < 1 {
			failf("ConvTranspose2d", ErrShape, []*Tensor{x, weight}, "the output size %v is not positive", size)
		}
	}
	cout := w.shape[1] * g
	// (G, Cout/G·kh·kw, Cin/G) · (n, G, Cin/G, H·W): every input pixel's
	// contribution to each kernel element of each output channel.
	wt := w.Reshape(g, cin/g, cout/g*kh*kw).Transpose(1, 2)
	y := byBatch(a.x, shapeNumel("ConvTranspose2d", []int{cout, kh, kw, h, wd}, x, weight), func(xs *Tensor) []*Tensor {
		n := xs.shape[0]
		cols := wt.MatMul(xs.Reshape(n, g, cin/g, h*wd)).Reshape(n, cout*kh*kw, h*wd)
		return []*Tensor{foldPadded(cols, size, win, h, wd)}
	})[0]
	return withBias(y, a.b, a.unbatched)
}

// foldPadded folds the columns of a transposed convolution, (N,
// Cout·kh·kw, h·wd), into an output of size. An output padding of a
// stride or more (allowed below the dilation) adds window positions:
// then it folds the whole unpadded output and cuts the padding off it,
// extended by zeros where the output padding reaches past it.
func foldPadded(cols *Tensor, size [2]int, win Window2d, h, wd int) *Tensor {
	if win.positions(0, size[0]) == h && win.positions(1, size[1]) == wd {
		return fold(cols, size, win)
	}
	full := [2]int{(h-1)*win.Stride[0] + win.Dilation[0]*(win.Kernel[0]-1) + 1, (wd-1)*win.Stride[1] + win.Dilation[1]*(win.Kernel[1]-1) + 1}
	bare := win
	bare.Padding = [2]int{}
	y := fold(cols, full, bare)
	for i := range 2 {
		dim, p := 2+i, win.Padding[i]
		if extra := p + size[i] - full[i]; extra > 0 {
			zshape := y.Shape()
			zshape[dim] = extra
			y = Cat([]*Tensor{y, Zeros(zshape, Like(y))}, dim)
		}
		y = y.Narrow(dim, p, size[i])
	}
	return y
}
