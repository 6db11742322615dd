// Package programs holds the programs of `tessera train`, one file each:
// each registers a train.Program from init, so a new program is one new
// file here.
//
//	mnist-mlp   an MLP on MNIST (≥ 98% test accuracy on the CPU)
//	charrnn     Karpathy's min-char-rnn on bytes of text (Go's sources by default)
//	lstm        Karpathy's batched LSTM on the delay-by-5 task
//	pong        Karpathy's policy-gradient Pong agent
//	timeseries  an LSTM forecasting a ramp series read back from CSV
package programs
