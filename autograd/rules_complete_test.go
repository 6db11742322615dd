package autograd

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestRulesComplete fails when a differentiable op is added to
// tensor/op.go without a derivative rule here, or when a rule exists for
// an op that is not differentiable (it would never run).
func TestRulesComplete(t *testing.T) {
	for _, op := range tensor.Ops() {
		_, ok := rules[op]
		switch {
		case op.Differentiable() && !ok:
			t.Errorf("no derivative rule for %v: add one to rules*.go", op)
		case !op.Differentiable() && ok:
			t.Errorf("%v is not differentiable but has a derivative rule", op)
		}
	}
	for op := range rules {
		if op == tensor.OpNone {
			t.Error("a derivative rule for OpNone (leaves)")
		}
	}
}
