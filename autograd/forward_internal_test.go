package autograd

import (
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// TestForwardRunsNoReverseRule: JVP and Jacobian compute derivatives in
// the forward direction only. With every reverse rule replaced by one
// that reports being called, they still give the right derivative of a
// function that uses many kinds of ops.
func TestForwardRunsNoReverseRule(t *testing.T) {
	saved := rules
	defer func() { rules = saved }()
	rules = map[tensor.Op]entry{}
	for op, e := range saved {
		e.reverse = func(g *tensor.Tensor, n *tensor.Node) []*tensor.Tensor {
			t.Errorf("forward mode ran the reverse rule of %v", op)
			return make([]*tensor.Tensor, len(n.Inputs))
		}
		rules[op] = e
	}
	x := tensor.New([]float64{0.3, -1.2, 0.8, 2.1, -0.4, 1.7}, 2, 3)
	w := tensor.New([]float64{0.5, -0.25, 1, 0.75, -1.5, 0.125}, 3, 2)
	f := func(xs []*tensor.Tensor) *tensor.Tensor {
		h := xs[0].MatMul(w).Tanh().Exp()
		return tensor.Cat([]*tensor.Tensor{h.LogSoftmax(1), h.T().Amax([]int{1}, true).T()}, 0).Square().Sum(0)
	}
	v := tensor.OnesLike(x)
	_, jv := JVP(f, []*tensor.Tensor{x}, []*tensor.Tensor{v})
	jac := Jacobian(f, []*tensor.Tensor{x})[0]
	// J·v from the Jacobian: Σ over x's elements of J[:, k]·1.
	sum := jac.SumDims([]int{1, 2}, false).Float64s()
	got := jv.Float64s()
	for i := range got {
		if d := got[i] - sum[i]; d > 1e-12 || d < -1e-12 {
			t.Errorf("J·1 = %v from JVP, %v from Jacobian", got, sum)
			break
		}
	}
	rules = saved // the reference: reverse mode, one row at a time
	for o := range 2 {
		u := tensor.Zeros([]int{2}, tensor.Of(tensor.Float64))
		u = u.IndexAdd(0, tensor.FromInts([]int{o}, 1), tensor.New([]float64{1}))
		_, row := VJP(f, []*tensor.Tensor{x}, u)
		want, got := row[0].Float64s(), jac.Select(0, o).Float64s()
		for k := range want {
			if d := got[k] - want[k]; d > 1e-12 || d < -1e-12 {
				t.Fatalf("Jacobian row %d = %v, reverse mode gives %v", o, got, want)
			}
		}
	}
}
