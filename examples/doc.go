// Package examples holds runnable example programs, one per
// subdirectory (minchar trains Karpathy's min-char-rnn with Adagrad), and
// the tests that recompute Karpathy's three NumPy programs —
// min-char-rnn.py, lstm.py and pg-pong.py — with Tessera's autograd and
// compare them with his hand-written backward passes, re-derived in Go
// float64.
package examples
