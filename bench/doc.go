// Package bench is Tessera's benchmark suite: a registry of workloads
// (GEMM across sizes, elementwise, reductions, softmax, per-op overhead,
// training steps of an MLP and of Karpathy's min-char-rnn) that Run
// measures on every device, interleaved round by round with their
// PyTorch and NumPy counterparts (tools/bench/peers), reporting rates,
// peak memory, GPU dispatches per step and per-round ratios, with the
// machine that produced them. `tessera bench` is its command line:
//
//	tessera bench                  # every workload on the CPU and every adapter
//	tessera bench -quick           # small sizes, short measurements (CI)
//	tessera bench -torch           # with PyTorch/NumPy peers and ratios
//
// Rates wait for the device inside the timed loop. Ratios are taken per
// round and summarised by their median and spread, because these machines
// are shared and noisy and only numbers measured side by side compare.
//
// `go test ./bench -bench .` runs the same registry through testing.B.
package bench
