// Package nn holds neural-network building blocks written as
// compositions of tensor primitives, so every one of them is
// differentiable by package autograd and runs on any device.
//
// Functional ops (torch.nn.functional) take every tensor as an argument:
// CrossEntropy, NLLLoss, MSELoss, BinaryCrossEntropyWithLogits, Linear,
// Embedding, Dropout and LayerNorm. Losses take LossOptions (Reduce,
// IgnoreIndex, Weight) with PyTorch's defaults.
//
// Modules (torch.nn) own their parameters, leaves marked
// SetRequiresGrad(true) and initialised as PyTorch does: LinearLayer,
// EmbeddingLayer, LayerNormLayer, DropoutLayer, RNNCell, LSTMCell, LSTM
// and Sequential (NewMLP builds a multi-layer perceptron). The layers
// that share a name with a functional op carry a Layer suffix (Go has one
// namespace per package); constructors are NewLinear, NewEmbedding, and
// so on. Every module has Parameters and To; those that map one tensor to
// one tensor implement Layer.
//
//	model := nn.NewMLP([]int{784, 128, 10}, (*tensor.Tensor).ReLU)
//	opt := optim.NewAdam(model.Parameters(), optim.LR(1e-3))
//	tensor.Scope(func() {
//		loss := nn.CrossEntropy(model.Forward(x), y)
//		autograd.Backward(loss)
//		opt.Step()
//		opt.ZeroGrad()
//	})
//
// Misuse (a bad shape, dtype or argument) panics with a *tensor.Error
// whose Op names the nn function, as the tensor ops do.
package nn
