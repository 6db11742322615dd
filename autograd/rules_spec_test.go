package autograd_test

import (
	"github.com/tessera-ml/tessera/internal/opspec"
)

// init adds to ruleCases, which every rule test (reverse, forward,
// second order, GPU) walks, the cases of the differentiable elementwise
// ops that ruleCases does not list by hand: from each op's spec
// (internal/opspec), its public call with the first parameter set on
// 3×5 leaves drawn from its domain, and on strided ones.
func init() {
	for _, s := range opspec.Specs() {
		if s.Arity == 0 || !s.Op.Differentiable() || len(ruleCases[s.Op]) > 0 {
			continue
		}
		s, p := s, s.FloatParams()[0]
		leaves := func(view func(*T) *T) func() []*T {
			return func() []*T {
				xs := make([]*T, s.Arity)
				for k := range xs {
					lo, hi := s.Range(k)
					xs[k] = view(leaf(lo, hi, 3, 5))
				}
				return xs
			}
		}
		call := func(xs []*T) *T { return s.Call(p, xs...) }
		ruleCases[s.Op] = []ruleCase{
			{"spec 3x5", leaves(func(x *T) *T { return x }), call, zero},
			{"spec strided", leaves(strided), call, zero},
		}
	}
}
