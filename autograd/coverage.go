package autograd

import "github.com/tessera-ml/tessera/tensor"

// HasRule reports whether package autograd has a derivative rule for op.
// Every differentiable op should have one and no other op should;
// tensor's coverage test (docs/coverage.md) reports it per op.
func HasRule(op tensor.Op) bool {
	_, ok := rules[op]
	return ok
}
