// Package peers carries peers.py, the PyTorch and NumPy counterparts of
// Tessera's benchmark workloads, into the binary, so that `tessera bench
// --torch` (and the self-contained real-GPU bundle) needs no source tree.
// The script's protocol is described in its docstring.
package peers

import _ "embed"

// Script is the text of peers.py.
//
//go:embed peers.py
var Script []byte
