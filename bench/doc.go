// Package bench holds Tessera's benchmarks. They report rates (GFLOP/s,
// GB/s, steps/s) next to times, wait for the device inside the timed
// loop, and put Tessera side by side with gonum (and, through
// torch_bench.py, PyTorch) in the same run, because these machines are
// noisy and only ratios measured together mean much.
//
//	go test ./bench -run '^$' -bench . -benchtime 3s
//	/usr/bin/python3 bench/torch_bench.py     # the PyTorch baseline, same shapes
package bench
