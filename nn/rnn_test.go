package nn_test

import (
	"math"
	"testing"

	"github.com/tessera-ml/tessera/internal/approx"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// affine returns W·x + b1 + U·h + b2 for row-major W (n, len(x)), U (n, len(h)).
func affine(w, x, b1, u, h, b2 []float64, n int) []float64 {
	out := make([]float64, n)
	for r := 0; r < n; r++ {
		s := b1[r] + b2[r]
		for k, v := range x {
			s += w[r*len(x)+k] * v
		}
		for k, v := range h {
			s += u[r*len(h)+k] * v
		}
		out[r] = s
	}
	return out
}

func TestRNNCell(t *testing.T) {
	opts := f64(tensor.WithGenerator(tensor.NewGenerator(21)))
	c := nn.NewRNNCell(3, 4, opts...)
	x := tensor.Uniform([]int{2, 3}, -1, 1, opts...)
	h := tensor.Uniform([]int{2, 4}, -1, 1, opts...)
	got := c.Forward(x, h).Float64s()
	xv, hv := x.Float64s(), h.Float64s()
	for b := 0; b < 2; b++ {
		a := affine(c.WeightIH.Float64s(), xv[b*3:b*3+3], c.BiasIH.Float64s(), c.WeightHH.Float64s(), hv[b*4:b*4+4], c.BiasHH.Float64s(), 4)
		for j, v := range a {
			if d := math.Abs(got[b*4+j] - math.Tanh(v)); d > 1e-14 {
				t.Fatalf("h'[%d][%d] off by %g", b, j, d)
			}
		}
	}
	if s := c.Forward(x.Select(0, 0), nil).Shape(); len(s) != 1 || s[0] != 4 {
		t.Errorf("unbatched output shape %v", s)
	}
}

// TestLSTMCellGateOrder checks PyTorch's i, f, g, o layout against the
// formulas of the nn.LSTM documentation.
func TestLSTMCellGateOrder(t *testing.T) {
	const in, hid, batch = 3, 5, 2
	opts := f64(tensor.WithGenerator(tensor.NewGenerator(22)))
	cell := nn.NewLSTMCell(in, hid, opts...)
	x := tensor.Uniform([]int{batch, in}, -1, 1, opts...)
	h := tensor.Uniform([]int{batch, hid}, -1, 1, opts...)
	c := tensor.Uniform([]int{batch, hid}, -1, 1, opts...)
	h2, c2 := cell.Forward(x, h, c)
	hv, cv := h2.Float64s(), c2.Float64s()
	xv, hv0, cv0 := x.Float64s(), h.Float64s(), c.Float64s()
	for b := 0; b < batch; b++ {
		a := affine(cell.WeightIH.Float64s(), xv[b*in:(b+1)*in], cell.BiasIH.Float64s(),
			cell.WeightHH.Float64s(), hv0[b*hid:(b+1)*hid], cell.BiasHH.Float64s(), 4*hid)
		for j := 0; j < hid; j++ {
			i, f, g, o := sigmoid(a[j]), sigmoid(a[hid+j]), math.Tanh(a[2*hid+j]), sigmoid(a[3*hid+j])
			cn := f*cv0[b*hid+j] + i*g
			hn := o * math.Tanh(cn)
			if math.Abs(cv[b*hid+j]-cn) > 1e-14 || math.Abs(hv[b*hid+j]-hn) > 1e-14 {
				t.Fatalf("batch %d unit %d: got h %v c %v, want h %v c %v", b, j, hv[b*hid+j], cv[b*hid+j], hn, cn)
			}
		}
	}
}

// TestLSTMLayers checks that a two-layer LSTM chains its cells over time.
func TestLSTMLayers(t *testing.T) {
	opts := f64(tensor.WithGenerator(tensor.NewGenerator(23)))
	m := nn.NewLSTM(3, 4, 2, opts...)
	if len(nn.Parameters(m)) != 8 {
		t.Fatalf("%d parameters, want 8", len(nn.Parameters(m)))
	}
	x := tensor.Uniform([]int{5, 2, 3}, -1, 1, opts...)
	h0 := tensor.Uniform([]int{2, 2, 4}, -1, 1, opts...)
	c0 := tensor.Uniform([]int{2, 2, 4}, -1, 1, opts...)
	out, hn, cn := m.Forward(x, h0, c0)
	var ys []*tensor.Tensor
	h1, c1 := h0.Select(0, 0), c0.Select(0, 0)
	h2, c2 := h0.Select(0, 1), c0.Select(0, 1)
	for t := 0; t < 5; t++ {
		h1, c1 = m.Cells[0].Forward(x.Select(0, t), h1, c1)
		h2, c2 = m.Cells[1].Forward(h1, h2, c2)
		ys = append(ys, h2)
	}
	approx.Require(t, "output", out.Float64s(), tensor.Stack(ys, 0).Float64s(), approx.Rel1(0))
	approx.Require(t, "h_n", hn.Float64s(), tensor.Stack([]*tensor.Tensor{h1, h2}, 0).Float64s(), approx.Rel1(0))
	approx.Require(t, "c_n", cn.Float64s(), tensor.Stack([]*tensor.Tensor{c1, c2}, 0).Float64s(), approx.Rel1(0))
	if s := out.Shape(); s[0] != 5 || s[1] != 2 || s[2] != 4 {
		t.Errorf("output shape %v", s)
	}
	out0, _, _ := m.Forward(x, nil, nil)
	if s := out0.Shape(); s[2] != 4 {
		t.Errorf("zero-state output shape %v", s)
	}
}
