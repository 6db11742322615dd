package nn

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// BatchNorm normalises x (N, C, *) per channel, as
// torch.nn.functional.batch_norm. In training (training true, or
// runningMean nil) it uses the batch's mean and biased variance over
// every dimension but 1,
//
//	y = (x - mean) / √(var + eps) · weight + bias
//
// and, when the running statistics are not nil, updates them in place
// (outside the graph) as PyTorch does, with the unbiased variance:
//
//	runningMean = (1 - momentum)·runningMean + momentum·mean
//	runningVar  = (1 - momentum)·runningVar  + momentum·var·n/(n-1)
//
// with n = N·∏(*) the number of values per channel. In evaluation it
// normalises with runningMean and runningVar instead. weight and bias
// (C) may be nil (no affine transform); runningMean and runningVar (C)
// are both nil or both set. The result has x's shape. It panics with
// ErrShape when x has fewer than 2 dimensions or a tensor is not (C),
// and, in training, when a channel has a single value (n = 1), as
// PyTorch raises.
func BatchNorm(x, runningMean, runningVar, weight, bias *tensor.Tensor, training bool, momentum, eps float64) *tensor.Tensor {
	need("BatchNorm", "x", x)
	if x.Dim() < 2 {
		fail("BatchNorm", tensor.ErrShape, "the input must be (N, C, *)", x)
	}
	c := x.Size(1)
	if (runningMean == nil) != (runningVar == nil) {
		fail("BatchNorm", tensor.ErrArgument, "running_mean and running_var must both be set or both be nil", x, runningMean, runningVar)
	}
	for _, p := range []*tensor.Tensor{runningMean, runningVar, weight, bias} {
		if p != nil && (p.Dim() != 1 || p.Size(0) != c) {
			fail("BatchNorm", tensor.ErrShape, fmt.Sprintf("running stats, weight and bias must have shape [%d]", c), x, p)
		}
	}
	dims := []int{0}
	for d := 2; d < x.Dim(); d++ {
		dims = append(dims, d)
	}
	bshape := channelShape(x)
	var y *tensor.Tensor
	if training || runningMean == nil {
		n := x.Numel() / max(c, 1)
		if n <= 1 {
			fail("BatchNorm", tensor.ErrShape, fmt.Sprintf("expected more than 1 value per channel when training, got input size %v", x.Shape()), x)
		}
		mean := x.MeanDims(dims, true)
		d := x.Sub(mean)
		v := d.Square().MeanDims(dims, true)
		y = d.Mul(v.AddScalar(eps).Rsqrt())
		if runningMean != nil {
			updateRunning(runningMean, mean, momentum, 1)
			updateRunning(runningVar, v, momentum, float64(n)/float64(n-1))
		}
	} else {
		y = x.Sub(runningMean.Reshape(bshape...)).Mul(runningVar.AddScalar(eps).Rsqrt().Reshape(bshape...))
	}
	return affine(y, weight, bias, bshape)
}

// channelShape is (1, C, 1, …): the shape that broadcasts a per-channel
// vector against x (N, C, *).
func channelShape(x *tensor.Tensor) []int {
	s := make([]int, x.Dim())
	for i := range s {
		s[i] = 1
	}
	s[1] = x.Size(1)
	return s
}

// affine returns y·weight + bias with weight and bias (C) reshaped to
// bshape, each left out when nil.
func affine(y, weight, bias *tensor.Tensor, bshape []int) *tensor.Tensor {
	if weight != nil {
		y = y.Mul(weight.Reshape(bshape...))
	}
	if bias != nil {
		y = y.Add(bias.Reshape(bshape...))
	}
	return y
}

// updateRunning sets running = (1-momentum)·running +
// momentum·scale·stat in place, without recording a graph; stat is a
// per-channel statistic of shape (1, C, 1, …).
func updateRunning(running, stat *tensor.Tensor, momentum, scale float64) {
	running.Context().NoGrad(func() {
		s := stat.Detach().Reshape(-1).Cast(running.DType())
		running.MulScalarInPlace(1-momentum).AddInPlace(s, momentum*scale)
	})
}

// BatchNormLayer is torch.nn.BatchNorm1d or BatchNorm2d over C
// channels: BatchNorm of its input with its own running statistics. Its
// state-dict names are PyTorch's: parameters "weight" (C, ones) and
// "bias" (C, zeros), nil without the affine transform; buffers
// "running_mean" (C, zeros), "running_var" (C, ones) and
// "num_batches_tracked" (a 0-d Int32 counter, int64 in PyTorch), all nil
// without running statistics (track_running_stats=False: batch
// statistics in evaluation too). Each forward pass in training counts
// one batch. With Cumulative true (momentum=None in PyTorch) the
// running statistics are the plain average over the batches seen: the
// momentum of each update is 1/num_batches_tracked.
type BatchNormLayer struct {
	Weight, Bias                               *tensor.Tensor
	RunningMean, RunningVar, NumBatchesTracked *tensor.Tensor
	Eps, Momentum                              float64
	Cumulative, Training                       bool
	minDim, maxDim                             int // the input ranks accepted
	name                                       string
}

// NewBatchNorm1d returns torch.nn.BatchNorm1d(c): input (N, C) or
// (N, C, L), eps 1e-5, momentum 0.1, affine, tracking running
// statistics, initialised as PyTorch (weight ones, bias zeros,
// running_mean zeros, running_var ones, num_batches_tracked 0), in
// training mode. opts set the dtype and device. It panics with
// ErrArgument for a negative c.
func NewBatchNorm1d(c int, opts ...tensor.Option) *BatchNormLayer {
	return newBatchNorm("NewBatchNorm1d", "BatchNorm1d", c, 2, 3, opts)
}

// NewBatchNorm2d returns torch.nn.BatchNorm2d(c): input (N, C, H, W),
// otherwise as NewBatchNorm1d.
func NewBatchNorm2d(c int, opts ...tensor.Option) *BatchNormLayer {
	return newBatchNorm("NewBatchNorm2d", "BatchNorm2d", c, 4, 4, opts)
}

func newBatchNorm(op, name string, c, minDim, maxDim int, opts []tensor.Option) *BatchNormLayer {
	checkSizes(op, c)
	shape := []int{c}
	count := append([]tensor.Option{}, opts...)
	return &BatchNormLayer{
		Weight:            tensor.Ones(shape, opts...).SetRequiresGrad(true),
		Bias:              tensor.Zeros(shape, opts...).SetRequiresGrad(true),
		RunningMean:       tensor.Zeros(shape, opts...).Keep(),
		RunningVar:        tensor.Ones(shape, opts...).Keep(),
		NumBatchesTracked: tensor.Zeros([]int{}, append(count, tensor.Of(tensor.Int32))...).Keep(),
		Eps:               1e-5,
		Momentum:          0.1,
		Training:          true,
		minDim:            minDim,
		maxDim:            maxDim,
		name:              name,
	}
}

// Forward normalises x: (N, C) or (N, C, L) for BatchNorm1d,
// (N, C, H, W) for BatchNorm2d; the result has x's shape. In training it
// updates the running statistics and counts the batch. It panics with
// ErrShape for another rank, a channel count other than C, or a single
// value per channel in training.
func (b *BatchNormLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("BatchNormLayer", b)
	name := b.name
	if name == "" {
		name = "BatchNorm"
	}
	need(name, "x", x)
	if b.minDim > 0 && (x.Dim() < b.minDim || x.Dim() > b.maxDim) {
		fail(name, tensor.ErrShape, fmt.Sprintf("expected a %d-D to %d-D input", b.minDim, b.maxDim), x)
	}
	momentum, count := b.Momentum, b.Training && b.NumBatchesTracked != nil
	if count && b.Cumulative {
		momentum = 1 / (b.NumBatchesTracked.Item() + 1)
	}
	y := BatchNorm(x, b.RunningMean, b.RunningVar, b.Weight, b.Bias, b.Training, momentum, b.Eps)
	if count { // after BatchNorm's checks: a rejected input counts no batch
		b.NumBatchesTracked.Context().NoGrad(func() { b.NumBatchesTracked.AddScalarInPlace(1) })
	}
	return y
}

// Slots returns "weight", "bias", then the buffers "running_mean",
// "running_var" and "num_batches_tracked", as PyTorch orders them.
func (b *BatchNormLayer) Slots() []Slot {
	receiver("BatchNormLayer.Slots", b)
	return []Slot{Param("weight", &b.Weight), Param("bias", &b.Bias),
		Buffer("running_mean", &b.RunningMean), Buffer("running_var", &b.RunningVar),
		Buffer("num_batches_tracked", &b.NumBatchesTracked)}
}

// Children returns nil.
func (b *BatchNormLayer) Children() []Child { return nil }

// SetTraining switches between training (batch statistics, updating the
// running ones) and evaluation (the running statistics).
func (b *BatchNormLayer) SetTraining(on bool) {
	receiver("BatchNormLayer.SetTraining", b)
	b.Training = on
}

// GroupNorm normalises x (N, C, *) over groups of C/groups channels
// together with their other dimensions, as
// torch.nn.functional.group_norm: each sample's group is brought to zero
// mean and unit (biased) variance, then the per-channel weight and bias
// (C; either may be nil) apply. The same in training and evaluation. The
// result has x's shape. It panics with ErrShape when x has fewer than 2
// dimensions, groups does not divide C, or weight or bias is not (C).
func GroupNorm(x *tensor.Tensor, groups int, weight, bias *tensor.Tensor, eps float64) *tensor.Tensor {
	need("GroupNorm", "x", x)
	if x.Dim() < 2 || groups <= 0 || x.Size(1)%groups != 0 {
		fail("GroupNorm", tensor.ErrShape, fmt.Sprintf("the input must be (N, C, *) with C divisible by %d groups", groups), x)
	}
	c := x.Size(1)
	for _, p := range []*tensor.Tensor{weight, bias} {
		if p != nil && (p.Dim() != 1 || p.Size(0) != c) {
			fail("GroupNorm", tensor.ErrShape, fmt.Sprintf("weight and bias must have shape [%d]", c), x, p)
		}
	}
	g := x.Reshape(x.Size(0), groups, -1)
	d := g.Sub(g.MeanDims([]int{2}, true))
	y := d.Mul(d.Square().MeanDims([]int{2}, true).AddScalar(eps).Rsqrt()).Reshape(x.Shape()...)
	return affine(y, weight, bias, channelShape(x))
}

// GroupNormLayer is torch.nn.GroupNorm: GroupNorm of its input (N, C, *)
// in Groups groups, with the per-channel "weight" (C, ones) and "bias"
// (C, zeros), nil without the affine transform, and Eps 1e-5.
type GroupNormLayer struct {
	Groups       int
	Weight, Bias *tensor.Tensor
	Eps          float64
}

// NewGroupNorm returns torch.nn.GroupNorm(groups, c): eps 1e-5, affine
// weight ones and bias zeros as PyTorch initialises them. opts set the
// dtype and device. It panics with ErrArgument when groups is not
// positive or does not divide c, or c is negative.
func NewGroupNorm(groups, c int, opts ...tensor.Option) *GroupNormLayer {
	checkSizes("NewGroupNorm", c)
	if groups <= 0 || c%groups != 0 {
		fail("NewGroupNorm", tensor.ErrArgument, fmt.Sprintf("num_channels %d must be divisible by num_groups %d", c, groups))
	}
	return &GroupNormLayer{
		Groups: groups,
		Weight: tensor.Ones([]int{c}, opts...).SetRequiresGrad(true),
		Bias:   tensor.Zeros([]int{c}, opts...).SetRequiresGrad(true),
		Eps:    1e-5,
	}
}

// Forward returns GroupNorm(x, g.Groups, g.Weight, g.Bias, g.Eps), of
// x's shape.
func (g *GroupNormLayer) Forward(x *tensor.Tensor) *tensor.Tensor {
	receiver("GroupNormLayer", g)
	return GroupNorm(x, g.Groups, g.Weight, g.Bias, g.Eps)
}

// Slots returns "weight" and "bias".
func (g *GroupNormLayer) Slots() []Slot {
	receiver("GroupNormLayer.Slots", g)
	return []Slot{Param("weight", &g.Weight), Param("bias", &g.Bias)}
}

// Children returns nil.
func (g *GroupNormLayer) Children() []Child { return nil }
