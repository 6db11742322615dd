package nn_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// TestArgumentValidation: nil tensors, nil layers and options, negative
// sizes and out-of-range probabilities are ErrArgument naming the
// function and the argument; never a nil-pointer panic.
func TestArgumentValidation(t *testing.T) {
	x := tensor.Ones([]int{2, 3})
	w := tensor.Ones([]int{4, 3})
	y := tensor.New([]int32{0, 1})
	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"Linear(nil, w, b)", "x (argument 1)", func() { nn.Linear(nil, w, nil) }},
		{"Linear(x, nil, b)", "w (argument 2)", func() { nn.Linear(x, nil, nil) }},
		{"Embedding(nil, idx)", "weight (argument 1)", func() { nn.Embedding(nil, y) }},
		{"Embedding(w, nil)", "indices (argument 2)", func() { nn.Embedding(w, nil) }},
		{"Dropout(nil)", "x (argument 1)", func() { nn.Dropout(nil, 0.5, true, nil) }},
		{"LayerNorm(nil)", "x (argument 1)", func() { nn.LayerNorm(nil, []int{3}, nil, nil, 1e-5) }},
		{"CrossEntropy(nil, y)", "logits (argument 1)", func() { nn.CrossEntropy(nil, y) }},
		{"CrossEntropy(x, nil)", "target (argument 2)", func() { nn.CrossEntropy(x, nil) }},
		{"NLLLoss(x, nil)", "target", func() { nn.NLLLoss(x, nil) }},
		{"MSELoss(nil, x)", "x (argument 1)", func() { nn.MSELoss(nil, x) }},
		{"BCEWithLogits(x, nil)", "y (argument 2)", func() { nn.BinaryCrossEntropyWithLogits(x, nil) }},
		{"a nil loss option", "option 0 is nil", func() { nn.MSELoss(x, x, nil) }},
		{"ClipGradValue with a nil parameter", "parameter 1", func() { nn.ClipGradValue([]*tensor.Tensor{x, nil}, 1) }},
		{"RNNCell.Forward(nil, h)", "x", func() { nn.NewRNNCell(3, 2).Forward(nil, nil) }},
		{"LSTMCell.Forward(nil, h, c)", "x", func() { nn.NewLSTMCell(3, 2).Forward(nil, nil, nil) }},
		{"LSTM.Forward(nil, h, c)", "x", func() { nn.NewLSTM(3, 2, 1).Forward(nil, nil, nil) }},
		{"Sequential with a nil layer", "layer 1 is nil", func() { nn.NewSequential(nn.NewLinear(3, 3), nil).Forward(x) }},
		{"NewLinear(-1, 3)", "negative", func() { nn.NewLinear(-1, 3) }},
		{"NewEmbedding(10, -2)", "negative", func() { nn.NewEmbedding(10, -2) }},
		{"NewLayerNorm([-3])", "negative", func() { nn.NewLayerNorm([]int{-3}) }},
		{"NewRNNCell(3, -1)", "negative", func() { nn.NewRNNCell(3, -1) }},
		{"NewLSTMCell(-3, 2)", "negative", func() { nn.NewLSTMCell(-3, 2) }},
		{"NewLSTM(3, -2, 1)", "negative", func() { nn.NewLSTM(3, -2, 1) }},
		{"NewMLP([3, -1])", "negative", func() { nn.NewMLP([]int{3, -1}, nil) }},
		{"NewDropout(NaN)", "between 0 and 1", func() { nn.NewDropout(math.NaN()) }},
		{"NewDropout(1.5)", "between 0 and 1", func() { nn.NewDropout(1.5) }},
		{"ClipGradValue(NaN)", "clip", func() { nn.ClipGradValue([]*tensor.Tensor{x}, math.NaN()) }},
	} {
		err := tensor.Catch(c.f)
		if !errors.Is(err, tensor.ErrArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrArgument naming %q", c.name, err, c.want)
		}
	}
	// PyTorch builds layers without hidden units (a bound of 0).
	if err := tensor.Catch(func() { nn.NewRNNCell(3, 0); nn.NewLSTM(3, 0, 2); nn.NewLinear(0, 2) }); err != nil {
		t.Errorf("zero-size layers: %v", err)
	}
}
