package autograd

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestRulesComplete fails when a differentiable op is added to
// tensor/op.go without an entry in the rule table here, when an entry
// lacks either mode (its reverse rule for Backward and Grad, or its
// forward rule for JVP and the functions built on it), or when an entry
// exists for an op that is not differentiable (it would never run).
func TestRulesComplete(t *testing.T) {
	for _, op := range tensor.Ops() {
		e, ok := rules[op]
		switch {
		case op.Differentiable() && !ok:
			t.Errorf("no derivative rule for %v: add an entry to rules*.go", op)
		case !op.Differentiable() && ok:
			t.Errorf("%v is not differentiable but has a derivative rule", op)
		case ok && e.reverse == nil:
			t.Errorf("the entry of %v has no reverse rule", op)
		case ok && e.forward == nil:
			t.Errorf("the entry of %v has no forward rule", op)
		}
		if HasRule(op) != (ok && e.reverse != nil) || HasForwardRule(op) != (ok && e.forward != nil) {
			t.Errorf("HasRule or HasForwardRule disagrees with the table for %v", op)
		}
	}
	for op := range rules {
		if op == tensor.OpNone {
			t.Error("a derivative rule for OpNone (leaves)")
		}
	}
}
