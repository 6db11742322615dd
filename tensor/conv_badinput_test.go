package tensor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
)

// TestConvBadInput: every misuse of the convolution and pooling API is a
// typed *tensor.Error naming the op.
func TestConvBadInput(t *testing.T) {
	x := tensor.Zeros([]int{2, 4, 5, 6})
	w := tensor.Zeros([]int{3, 4, 3, 3})
	k3 := tensor.Window2d{Kernel: [2]int{3, 3}}
	for _, c := range []struct {
		name, op string
		kind     error
		f        func()
	}{
		{"nil input", "Conv2d", tensor.ErrArgument, func() { tensor.Conv2d(nil, w, nil, tensor.ConvOptions{}) }},
		{"nil weight", "ConvTranspose2d", tensor.ErrArgument, func() { tensor.ConvTranspose2d(x, nil, nil, tensor.ConvOptions{}) }},
		{"2-D input", "Conv2d", tensor.ErrShape, func() { tensor.Conv2d(tensor.Zeros([]int{5, 6}), w, nil, tensor.ConvOptions{}) }},
		{"3-D weight", "Conv2d", tensor.ErrShape, func() { tensor.Conv2d(x, tensor.Zeros([]int{3, 4, 3}), nil, tensor.ConvOptions{}) }},
		{"channels", "Conv2d", tensor.ErrShape, func() { tensor.Conv2d(x, tensor.Zeros([]int{3, 2, 3, 3}), nil, tensor.ConvOptions{}) }},
		{"groups divide out", "Conv2d", tensor.ErrShape, func() {
			tensor.Conv2d(x, tensor.Zeros([]int{3, 2, 3, 3}), nil, tensor.ConvOptions{Groups: 2})
		}},
		{"negative groups", "Conv2d", tensor.ErrArgument, func() { tensor.Conv2d(x, w, nil, tensor.ConvOptions{Groups: -1}) }},
		{"bias shape", "Conv2d", tensor.ErrShape, func() { tensor.Conv2d(x, w, tensor.Zeros([]int{4}), tensor.ConvOptions{}) }},
		{"negative stride", "Conv2d", tensor.ErrArgument, func() { tensor.Conv2d(x, w, nil, tensor.ConvOptions{Stride: [2]int{-1, 1}}) }},
		{"negative padding", "Conv2d", tensor.ErrArgument, func() { tensor.Conv2d(x, w, nil, tensor.ConvOptions{Padding: [2]int{0, -2}}) }},
		{"kernel too large", "Conv2d", tensor.ErrShape, func() { tensor.Conv2d(x, tensor.Zeros([]int{3, 4, 7, 3}), nil, tensor.ConvOptions{}) }},
		{"huge padding", "Conv2d", tensor.ErrShape, func() {
			tensor.Conv2d(x, w, nil, tensor.ConvOptions{Padding: [2]int{1 << 62, 1 << 62}})
		}},
		{"huge dilation", "Unfold", tensor.ErrShape, func() {
			tensor.Unfold(x, tensor.Window2d{Kernel: [2]int{3, 3}, Dilation: [2]int{1 << 62, 1}})
		}},
		{"transposed output padding", "ConvTranspose2d", tensor.ErrArgument, func() {
			tensor.ConvTranspose2d(x, tensor.Zeros([]int{4, 2, 3, 3}), nil, tensor.ConvOptions{OutputPadding: [2]int{1, 0}})
		}},
		{"transposed channels", "ConvTranspose2d", tensor.ErrShape, func() {
			tensor.ConvTranspose2d(x, tensor.Zeros([]int{3, 2, 3, 3}), nil, tensor.ConvOptions{})
		}},
		{"transposed empty output", "ConvTranspose2d", tensor.ErrShape, func() {
			tensor.ConvTranspose2d(x, tensor.Zeros([]int{4, 2, 1, 1}), nil, tensor.ConvOptions{Padding: [2]int{3, 3}})
		}},
		{"unfold zero kernel", "Unfold", tensor.ErrArgument, func() { tensor.Unfold(x, tensor.Window2d{}) }},
		{"unfold 5-D", "Unfold", tensor.ErrShape, func() { tensor.Unfold(tensor.Zeros([]int{1, 2, 4, 5, 6}), k3) }},
		{"fold rows", "Fold", tensor.ErrShape, func() { tensor.Fold(tensor.Zeros([]int{2, 10, 12}), [2]int{5, 6}, k3) }},
		{"fold positions", "Fold", tensor.ErrShape, func() { tensor.Fold(tensor.Zeros([]int{2, 9, 11}), [2]int{5, 6}, k3) }},
		{"fold size", "Fold", tensor.ErrArgument, func() { tensor.Fold(tensor.Zeros([]int{2, 9, 12}), [2]int{-5, 6}, k3) }},
		{"fold 4-D", "Fold", tensor.ErrShape, func() { tensor.Fold(x, [2]int{5, 6}, k3) }},
		{"huge pool kernel", "MaxPool2d", tensor.ErrShape, func() {
			tensor.MaxPool2d(tensor.Zeros([]int{1, 1, 1, 1}), tensor.Window2d{Kernel: [2]int{1 << 32, 1 << 32}, Padding: [2]int{1 << 31, 1 << 31}})
		}},
		{"huge fold kernel", "Fold", tensor.ErrShape, func() {
			tensor.Fold(tensor.Zeros([]int{1, 1, 1}), [2]int{1, 1}, tensor.Window2d{Kernel: [2]int{1 << 32, 1 << 32}, Padding: [2]int{1 << 31, 1 << 31}})
		}},
		{"max pool padding", "MaxPool2d", tensor.ErrArgument, func() {
			tensor.MaxPool2d(x, tensor.Window2d{Kernel: [2]int{3, 3}, Padding: [2]int{2, 0}})
		}},
		{"max pool nil", "MaxPool2d", tensor.ErrArgument, func() { tensor.MaxPool2dWithIndices(nil, k3) }},
		{"avg pool dilation", "AvgPool2d", tensor.ErrArgument, func() {
			tensor.AvgPool2d(x, tensor.Window2d{Kernel: [2]int{3, 3}, Dilation: [2]int{2, 2}}, true)
		}},
		{"avg pool too small", "AvgPool2d", tensor.ErrShape, func() { tensor.AvgPool2d(x, tensor.Window2d{Kernel: [2]int{7, 3}}, true) }},
		{"adaptive size", "AdaptiveAvgPool2d", tensor.ErrArgument, func() { tensor.AdaptiveAvgPool2d(x, [2]int{0, 2}) }},
		{"adaptive empty", "AdaptiveAvgPool2d", tensor.ErrShape, func() { tensor.AdaptiveAvgPool2d(tensor.Zeros([]int{1, 2, 0, 3}), [2]int{1, 1}) }},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.op) {
			t.Errorf("%s: got %v, want a %v error of %s", c.name, err, c.kind, c.op)
		}
	}
}

// TestConvEmpty: empty batches and channels give empty or zero results,
// as PyTorch's.
func TestConvEmpty(t *testing.T) {
	y := tensor.Conv2d(tensor.Zeros([]int{0, 3, 5, 5}), tensor.Ones([]int{2, 3, 3, 3}), nil, tensor.ConvOptions{})
	if !slices.Equal(y.Shape(), []int{0, 2, 3, 3}) {
		t.Errorf("empty batch: shape %v", y.Shape())
	}
	y = tensor.Conv2d(tensor.Zeros([]int{2, 0, 5, 5}), tensor.Ones([]int{2, 0, 3, 3}), tensor.Ones([]int{2}), tensor.ConvOptions{})
	if !slices.Equal(y.Shape(), []int{2, 2, 3, 3}) || y.Sum().Item() != 36 {
		t.Errorf("no channels: shape %v, sum %v (want bias only)", y.Shape(), y.Sum().Item())
	}
	p := tensor.MaxPool2d(tensor.Zeros([]int{0, 3, 4, 4}), tensor.Window2d{Kernel: [2]int{2, 2}})
	if !slices.Equal(p.Shape(), []int{0, 3, 2, 2}) {
		t.Errorf("empty max pool: shape %v", p.Shape())
	}
}

// TestConvDevices: operands on different devices are an ErrDevice, and
// float64 has no GPU kernel: a typed error, never a crash.
func TestConvDevices(t *testing.T) {
	gpu, ok := devtest.GPU(t)
	if !ok {
		t.Skip("no GPU")
	}
	x := tensor.Zeros([]int{1, 2, 5, 5})
	err := tensor.Catch(func() { tensor.Conv2d(x, tensor.Zeros([]int{3, 2, 3, 3}, tensor.On(gpu)), nil, tensor.ConvOptions{}) })
	if !errors.Is(err, tensor.ErrDevice) || !strings.Contains(err.Error(), "Conv2d") {
		t.Errorf("mixed devices: %v", err)
	}
	err = tensor.Catch(func() { tensor.Unfold(x.To(gpu), tensor.Window2d{Kernel: [2]int{70000, 1}}) })
	if !errors.Is(err, tensor.ErrShape) {
		t.Errorf("oversized kernel on the GPU: %v", err)
	}
	err = tensor.Catch(func() {
		tensor.Fold(tensor.Zeros([]int{1, 2 * 300 * 300, 1}, tensor.On(gpu)), [2]int{300, 300}, tensor.Window2d{Kernel: [2]int{300, 300}}).Sum().Item()
	})
	if err == nil || !strings.Contains(err.Error(), "Fold") {
		t.Errorf("a kernel past the GPU's loop limit: %v", err)
	}
}
