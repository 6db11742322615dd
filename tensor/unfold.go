package tensor

import (
	"fmt"
	"math"
)

// Convolution and pooling rest on two primitive ops, OpUnfold (im2col)
// and OpFold (col2im), each other's adjoint: Unfold copies every
// sliding window of an NCHW tensor into a column of a matrix, and Fold
// sums columns back into the windows they came from. Conv2d is Unfold
// followed by one matrix multiply with the weight (the CPU's GEMM, the
// GPU's tiled matmul), ConvTranspose2d is a matrix multiply followed by
// Fold, and the pools reduce the unfolded windows (conv.go, pool.go).
// Autograd differentiates Unfold with Fold and Fold with Unfold, so no
// convolution needs a kernel of its own in either direction.

// A Window2d is the sliding window of Unfold, Fold, the convolutions
// and the pools over the last two dims (H, W) of an NCHW tensor, as in
// torch.nn.functional.unfold: Kernel (kh, kw) elements spaced Dilation
// apart, moved by Stride, over the input with Padding added on both
// sides. Each pair is (height, width). A zero Stride or Dilation means 1
// (the pools default Stride to Kernel instead). CeilMode rounds the
// number of window positions up, as the pools' ceil_mode, dropping a
// last window that would start in the right padding; Unfold and Fold
// accept it too, so that a pool's gradient folds back.
type Window2d struct {
	Kernel, Stride, Padding, Dilation [2]int
	CeilMode                          bool
}

// resolved returns w with its zero Stride and Dilation set to 1.
func (w Window2d) resolved() Window2d {
	for i := range 2 {
		if w.Stride[i] == 0 {
			w.Stride[i] = 1
		}
		if w.Dilation[i] == 0 {
			w.Dilation[i] = 1
		}
	}
	return w
}

// maxWindow bounds each field of a window, so that the window arithmetic
// (positions) cannot overflow: a kernel, stride, dilation or padding
// beyond 2³⁰ fits no tensor anyway.
const maxWindow = 1 << 30

// check panics with ErrArgument for a kernel, stride or dilation below 1
// or a negative padding (after resolved), and with ErrShape for any field
// beyond 2³⁰, a window that fits no input.
func (w Window2d) check(op string, ts ...*Tensor) {
	for i := range 2 {
		if w.Kernel[i] > maxWindow || w.Stride[i] > maxWindow || w.Dilation[i] > maxWindow || w.Padding[i] > maxWindow {
			failf(op, ErrShape, ts, "the window %+v fits no input: each field must be at most 2^30", w)
		}
		if w.Kernel[i] < 1 || w.Stride[i] < 1 || w.Dilation[i] < 1 || w.Padding[i] < 0 {
			failf(op, ErrArgument, ts, "bad window %+v: kernel, stride and dilation must be positive and padding non-negative", w)
		}
	}
}

// positions returns the number of window positions along dim i (0: H,
// 1: W) over an input extent n, or a number below 1 when the window
// does not fit.
func (w Window2d) positions(i, n int) int {
	span := n + 2*w.Padding[i] - w.Dilation[i]*(w.Kernel[i]-1) - 1
	if span < 0 {
		return 0
	}
	if !w.CeilMode {
		return span/w.Stride[i] + 1
	}
	o := (span+w.Stride[i]-1)/w.Stride[i] + 1
	if (o-1)*w.Stride[i] >= n+w.Padding[i] {
		o--
	}
	return o
}

// outSize returns the window positions (oh, ow) over an input of extent
// (h, wd), panicking with ErrShape when the window does not fit.
func (w Window2d) outSize(op string, h, wd int, ts ...*Tensor) (int, int) {
	oh, ow := w.positions(0, h), w.positions(1, wd)
	if oh < 1 || ow < 1 {
		failf(op, ErrShape, ts, "the window %+v does not fit an input of size (%d, %d)", w, h, wd)
	}
	return oh, ow
}

// A window is a resolved Window2d with the geometry a backend needs:
// the channels C, the input extent (H, W) and the positions (OH, OW).
type window struct {
	Window2d
	C, H, W, OH, OW int
}

// batched4 returns x as a 4-D NCHW tensor, adding a batch dim of 1 to a
// 3-D (C, H, W) tensor, and whether it did; other ranks panic with
// ErrShape.
func batched4(op string, x *Tensor) (*Tensor, bool) {
	switch x.Dim() {
	case 4:
		return x, false
	case 3:
		return x.Unsqueeze(0), true
	}
	fail(op, ErrShape, "want an input (N, C, H, W) or (C, H, W)", x)
	return nil, false
}

// Unfold returns the sliding windows of x (N, C, H, W) as columns, as
// torch.nn.functional.unfold: the result is (N, C·kh·kw, L), L = oh·ow
// being the number of window positions, with row (c·kh + i)·kw + j
// holding kernel element (i, j) of channel c and padding read as 0. A
// 3-D x (C, H, W) gives (C·kh·kw, L). Integer inputs are computed in
// Float32. It panics with ErrShape for another rank or a window that
// does not fit, and ErrArgument for a bad window.
func Unfold(x *Tensor, w Window2d) *Tensor {
	argsNonNil("Unfold", 1, x)
	x4, unbatched := batched4("Unfold", x)
	out := unfold("Unfold", x4, w, 0)
	if unbatched {
		return out.Squeeze(0)
	}
	return out
}

// unfold runs OpUnfold on the 4-D x, reading padding as pad (0 for
// Unfold, -Inf for the max pool).
func unfold(op string, x *Tensor, w Window2d, pad float64) *Tensor {
	x.storage(op)
	x = x.Cast(floatType(x.dtype))
	w = w.resolved()
	w.check(op, x)
	n, c, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	oh, ow := w.outSize(op, h, wd, x)
	shape := []int{n, shapeNumel(op, []int{c, w.Kernel[0], w.Kernel[1]}, x), oh * ow}
	shapeNumel(op, shape, x)
	out := newTensor(x.dtype, shape, x.Device())
	backendOf(x.Device()).unfold(out, x, window{w, c, h, wd, oh, ow}, pad)
	return record(out, OpUnfold, Attrs{Window: w, Shape: clone(x.shape), Scalars: []float64{pad}}, x)
}

// Fold sums columns back into an image, as torch.nn.functional.fold:
// cols (N, C·kh·kw, L) become (N, C, size[0], size[1]), every element of
// column l added at kernel element (i, j) of window position l, and what
// falls in the padding dropped. L must be the number of window positions
// over size. A 2-D cols (C·kh·kw, L) gives (C, H, W). Fold is Unfold's
// adjoint. Integer inputs are computed in Float32. It panics with
// ErrShape when cols does not match the window and size, and ErrArgument
// for a bad window.
func Fold(cols *Tensor, size [2]int, w Window2d) *Tensor {
	argsNonNil("Fold", 1, cols)
	c3, unbatched := cols, false
	switch cols.Dim() {
	case 2:
		c3, unbatched = cols.Unsqueeze(0), true
	case 3:
	default:
		fail("Fold", ErrShape, "want columns (N, C·kh·kw, L) or (C·kh·kw, L)", cols)
	}
	out := fold(c3, size, w)
	if unbatched {
		return out.Squeeze(0)
	}
	return out
}

// fold runs OpFold on the 3-D cols.
func fold(cols *Tensor, size [2]int, w Window2d) *Tensor {
	cols.storage("Fold")
	cols = cols.Cast(floatType(cols.dtype))
	w = w.resolved()
	w.check("Fold", cols)
	if size[0] < 0 || size[1] < 0 {
		failf("Fold", ErrArgument, []*Tensor{cols}, "bad output size %v", size)
	}
	oh, ow := w.outSize("Fold", size[0], size[1], cols)
	kk := shapeNumel("Fold", w.Kernel[:], cols)
	n, rows, l := cols.shape[0], cols.shape[1], cols.shape[2]
	if rows%kk != 0 || l != oh*ow {
		fail("Fold", ErrShape, fmt.Sprintf("columns must be (N, C·%d, %d) for the window %+v and output size %v", kk, oh*ow, w, size), cols)
	}
	c := rows / kk
	shape := []int{n, c, size[0], size[1]}
	shapeNumel("Fold", shape, cols)
	out := newTensor(cols.dtype, shape, cols.Device())
	backendOf(cols.Device()).fold(out, cols, window{w, c, size[0], size[1], oh, ow})
	return record(out, OpFold, Attrs{Window: w, Shape: shape}, cols)
}

// unfoldChunkBytes bounds the columns that one Unfold of a convolution
// or a pool makes: a larger batch runs in slices of samples whose
// columns fit, the results concatenated along the batch (byBatch), so
// that no buffer passes a GPU's per-binding limit (128 MiB on lavapipe)
// merely because the batch is large. Samples are independent, so the
// outputs and the input's gradient do not depend on it; a weight's
// gradient sums the slices' sums, equal within rounding.
var unfoldChunkBytes = 64 << 20

// byBatch runs f on x, or on slices of x's batch (dim 0) when the
// columns of the whole batch, perSample elements of x's dtype per
// sample, pass unfoldChunkBytes, and concatenates each of f's results
// along dim 0. A single sample larger than the bound runs alone.
func byBatch(x *Tensor, perSample int, f func(x *Tensor) []*Tensor) []*Tensor {
	n, size := x.shape[0], math.MaxInt
	if perSample <= math.MaxInt/x.dtype.Size() {
		size = perSample * x.dtype.Size()
	}
	if n <= 1 || size <= unfoldChunkBytes/n {
		return f(x)
	}
	return byBatchSlices(x, max(1, unfoldChunkBytes/max(size, 1)), f)
}

// byBatchSlices is byBatch over slices of step samples.
func byBatchSlices(x *Tensor, step int, f func(x *Tensor) []*Tensor) []*Tensor {
	var parts [][]*Tensor
	for lo := 0; lo < x.shape[0]; lo += step {
		parts = append(parts, f(x.Narrow(0, lo, min(step, x.shape[0]-lo))))
	}
	out := make([]*Tensor, len(parts[0]))
	for i := range out {
		pieces := make([]*Tensor, len(parts))
		for k, p := range parts {
			pieces[k] = p[i]
		}
		out[i] = Cat(pieces, 0)
	}
	return out
}
