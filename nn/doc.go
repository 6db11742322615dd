// Package nn holds neural-network building blocks written as
// compositions of tensor primitives, so every one of them is
// differentiable by package autograd and runs on any device.
//
// Functional ops (torch.nn.functional) take every tensor as an argument:
// CrossEntropy, NLLLoss, MSELoss, BinaryCrossEntropyWithLogits, Linear,
// Embedding, Dropout, LayerNorm, BatchNorm and GroupNorm. Losses take
// LossOptions (Reduce, IgnoreIndex, Weight) with PyTorch's defaults.
// ClipGradNorm and ClipGradValue clip gradients in place
// (torch.nn.utils).
//
// Modules (torch.nn) implement Module: they name the tensors they hold
// (Slots: parameters, leaves that require grad, initialised as PyTorch
// does, and buffers) and the modules they are made of (Children):
// LinearLayer, EmbeddingLayer, LayerNormLayer, DropoutLayer,
// BatchNormLayer (NewBatchNorm1d, NewBatchNorm2d: running statistics,
// train and eval as PyTorch), GroupNormLayer, RNNCell, LSTMCell,
// GRUCell, the multi-layer RNN, LSTM and GRU over (seq, batch, features),
// MultiheadAttention (AttentionMasks: attn_mask, key_padding_mask,
// causal), TransformerEncoderLayer (pre- or post-norm) and
// TransformerEncoder, the parameter-free ReLU, GELU, SiLU, Tanh,
// Sigmoid, LeakyReLU, Softmax, LogSoftmax, Flatten and Identity, and
// Sequential (NewMLP builds a multi-layer perceptron). Each
// constructor's doc states PyTorch's initialisation, which it follows.
// The layers that share a name with a functional op carry a Layer suffix
// (Go has one namespace per package); constructors are NewLinear,
// NewEmbedding, and so on. Those that map one tensor to one tensor
// implement Layer.
// Convolution and pooling layers wrap the functional ops of package
// tensor (tensor.Conv2d, MaxPool2d, ...), so they keep PyTorch's names:
// Conv2d and ConvTranspose2d (NewConv2d, NewConvTranspose2d), MaxPool2d,
// AvgPool2d (NewAvgPool2d), AdaptiveAvgPool2d, Unfold and Fold.
//
// Batches of sequences of different lengths need no padding
// (torch.nn.utils.rnn): PackSequence and PackPadded build a
// PackedSequence (time-major rows, BatchSizes, sorted order), Unpack and
// Pad read it back, and RNN, LSTM and GRU's ForwardPacked step through
// it, computing at step t only the sequences longer than t. RunPacked is
// their loop and runs any user cell the same way. Each layer of a
// recurrent stack projects its whole input with one product before it
// recurs, padded or packed. MultiheadAttention, TransformerEncoderLayer
// and TransformerEncoder take ragged batches too: ForwardPacked attends
// within each sequence of rows packed one after another (rows +
// offsets, as FlashAttention's varlen API) through the fused
// tensor.ScaledDotProductAttention, with no padding and no score matrix.
//
// Everything torch.nn.Module does by walking its tree is a function
// here: Parameters, NamedParameters, Buffers, NamedBuffers,
// NamedModules, StateDict (PyTorch's dotted names: "0.weight",
// "layers.1.bias", "weight_ih_l0"), To, Train and Eval, Freeze and
// Unfreeze. StateDict returns the model's own tensors, so
// checkpoint.LoadInto loads a file into the model in place, strictly
// (missing, unexpected, mis-shaped and mis-typed names are an error and
// load nothing) or not:
//
//	model := nn.NewMLP([]int{784, 128, 10}, (*tensor.Tensor).ReLU)
//	nn.To(model, dev)
//	opt := optim.NewAdam(nn.Parameters(model), optim.LR(1e-3))
//	tensor.Scope(func() {
//		loss := nn.CrossEntropy(model.Forward(x), y)
//		autograd.Backward(loss)
//		opt.Step()
//		opt.ZeroGrad()
//	})
//	err := checkpoint.Save(path, nn.StateDict(model), nil)
//	...
//	_, err = checkpoint.LoadInto(f, nn.StateDict(model), true)
//
// The same matching copies one model into another in memory:
// checkpoint.LoadInto(&checkpoint.File{Tensors: nn.StateDict(src)},
// nn.StateDict(dst), true).
//
// Misuse (a bad shape, dtype or argument) panics with a *tensor.Error
// whose Op names the nn function, as the tensor ops do.
package nn
