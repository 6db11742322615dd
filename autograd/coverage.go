package autograd

import "github.com/tessera-ml/tessera/tensor"

// HasRule reports whether package autograd has a derivative rule for op
// (its reverse mode). Every differentiable op should have one and no
// other op should; tensor's coverage test (docs/coverage.md) reports it
// per op.
func HasRule(op tensor.Op) bool { return rules[op].reverse != nil }

// HasForwardRule reports whether op's entry in the rule table also
// gives its forward (tangent) rule, which JVP, HVP, Jacobian and Hessian
// use. TestRulesComplete requires it of every differentiable op.
func HasForwardRule(op tensor.Op) bool { return rules[op].forward != nil }
