package examples

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// lstmRef is Karpathy's lstm.py (LSTM.forward and LSTM.backward) in Go
// float64: WLSTM is (1+input+d, 4d) with the bias in row 0 and the gates
// in the order i, f, o (sigmoid) and g (tanh).
type lstmRef struct {
	n, b, in, d int
	w           []float64 // WLSTM, row-major
}

// col returns WLSTM's row width.
func (l *lstmRef) col() int { return 4 * l.d }

// forward returns Hout (n, b, d) and the cache his backward reads: Hin
// (n, b, 1+in+d), IFOGf (n, b, 4d) and C (n, b, d).
func (l *lstmRef) forward(x, c0, h0 []float64) (hout, hin, ifogf, c []float64) {
	n, b, in, d := l.n, l.b, l.in, l.d
	k := 1 + in + d
	hout, hin = make([]float64, n*b*d), make([]float64, n*b*k)
	ifogf, c = make([]float64, n*b*4*d), make([]float64, n*b*d)
	for t := 0; t < n; t++ {
		for bi := 0; bi < b; bi++ {
			row := hin[(t*b+bi)*k : (t*b+bi+1)*k]
			row[0] = 1
			copy(row[1:1+in], x[(t*b+bi)*in:(t*b+bi+1)*in])
			prevh, prevc := h0[bi*d:(bi+1)*d], c0[bi*d:(bi+1)*d]
			if t > 0 {
				prevh, prevc = hout[((t-1)*b+bi)*d:((t-1)*b+bi+1)*d], c[((t-1)*b+bi)*d:((t-1)*b+bi+1)*d]
			}
			copy(row[1+in:], prevh)
			ifog := matTVec(l.w, 4*d, row) // Hin[t] @ WLSTM
			f := ifogf[(t*b+bi)*4*d : (t*b+bi+1)*4*d]
			for j := range f {
				if j < 3*d {
					f[j] = sigmoid(ifog[j])
				} else {
					f[j] = math.Tanh(ifog[j])
				}
			}
			for j := 0; j < d; j++ {
				cj := f[j]*f[3*d+j] + f[d+j]*prevc[j]
				c[(t*b+bi)*d+j] = cj
				hout[(t*b+bi)*d+j] = f[2*d+j] * math.Tanh(cj)
			}
		}
	}
	return hout, hin, ifogf, c
}

// backward is his LSTM.backward(dHout, cache) with dcn = dhn = None.
func (l *lstmRef) backward(dHoutIn, hin, ifogf, c, c0 []float64) (dX, dW, dc0, dh0 []float64) {
	n, b, in, d := l.n, l.b, l.in, l.d
	k := 1 + in + d
	dX, dW = make([]float64, n*b*in), make([]float64, k*4*d)
	dc0, dh0 = make([]float64, b*d), make([]float64, b*d)
	dHout := append([]float64(nil), dHoutIn...)
	dC := make([]float64, n*b*d)
	for t := n - 1; t >= 0; t-- {
		for bi := 0; bi < b; bi++ {
			f := ifogf[(t*b+bi)*4*d : (t*b+bi+1)*4*d]
			dh := dHout[(t*b+bi)*d : (t*b+bi+1)*d]
			dc := dC[(t*b+bi)*d : (t*b+bi+1)*d]
			dIFOGf := make([]float64, 4*d)
			for j := 0; j < d; j++ {
				tanhCt := math.Tanh(c[(t*b+bi)*d+j])
				dIFOGf[2*d+j] = tanhCt * dh[j]
				dc[j] += (1 - tanhCt*tanhCt) * (f[2*d+j] * dh[j])
				if t > 0 {
					dIFOGf[d+j] = c[((t-1)*b+bi)*d+j] * dc[j]
					dC[((t-1)*b+bi)*d+j] += f[d+j] * dc[j]
				} else {
					dIFOGf[d+j] = c0[bi*d+j] * dc[j]
					dc0[bi*d+j] = f[d+j] * dc[j]
				}
				dIFOGf[j] = f[3*d+j] * dc[j]
				dIFOGf[3*d+j] = f[j] * dc[j]
			}
			dIFOG := make([]float64, 4*d)
			for j := range dIFOG {
				if j < 3*d {
					dIFOG[j] = f[j] * (1 - f[j]) * dIFOGf[j]
				} else {
					dIFOG[j] = (1 - f[j]*f[j]) * dIFOGf[j]
				}
			}
			row := hin[(t*b+bi)*k : (t*b+bi+1)*k]
			addOuter(dW, row, dIFOG)      // dWLSTM += Hin[t].T @ dIFOG[t]
			dHin := matVec(l.w, k, dIFOG) // dIFOG[t] @ WLSTM.T
			copy(dX[(t*b+bi)*in:(t*b+bi+1)*in], dHin[1:1+in])
			for j := 0; j < d; j++ {
				if t > 0 {
					dHout[((t-1)*b+bi)*d+j] += dHin[1+in+j]
				} else {
					dh0[bi*d+j] += dHin[1+in+j]
				}
			}
		}
	}
	return dX, dW, dc0, dh0
}

// TestKarpathyLSTM runs one batched LSTM forward/backward in lstm.py's
// style (n=5 steps, batch 3, input 7, hidden 4, loss Σ H⊙wrand as in his
// checkBatchGradient) with Tessera and compares H and the gradients of X,
// WLSTM, c0 and h0 with his backward formulas. It then runs nn.LSTM with
// the same weights permuted to PyTorch's i, f, g, o layout.
func TestKarpathyLSTM(t *testing.T) {
	const n, b, in, d = 5, 3, 7, 4
	const k = 1 + in + d
	r := rand.New(rand.NewPCG(2015, 11))
	ref := &lstmRef{n: n, b: b, in: in, d: d, w: randn(r, k*4*d, 1/math.Sqrt(in+d))}
	for j := 0; j < 4*d; j++ {
		ref.w[j] = 0 // WLSTM[0,:] = 0
		if j >= d && j < 2*d {
			ref.w[j] = 3 // fancy_forget_bias_init
		}
	}
	x, c0, h0, wrand := randn(r, n*b*in, 1), randn(r, b*d, 1), randn(r, b*d, 1), randn(r, n*b*d, 1)
	hout, hin, ifogf, c := ref.forward(x, c0, h0)
	dX, dW, dc0, dh0 := ref.backward(wrand, hin, ifogf, c, c0)

	X, W, C0, H0 := leaf(x, n, b, in), leaf(ref.w, k, 4*d), leaf(c0, b, d), leaf(h0, b, d)
	ones := tensor.Ones([]int{b, 1}, tensor.Of(tensor.Float64))
	prevh, prevc := H0, C0
	hs := make([]*tensor.Tensor, n)
	for t := range hs {
		hinT := tensor.Cat([]*tensor.Tensor{ones, X.Select(0, t), prevh}, 1)
		ifog := hinT.MatMul(W)
		ifo := ifog.Narrow(1, 0, 3*d).Sigmoid()
		g := ifog.Narrow(1, 3*d, d).Tanh()
		i, f, o := ifo.Narrow(1, 0, d), ifo.Narrow(1, d, d), ifo.Narrow(1, 2*d, d)
		prevc = i.Mul(g).Add(f.Mul(prevc))
		prevh = o.Mul(prevc.Tanh())
		hs[t] = prevh
	}
	H := tensor.Stack(hs, 0)
	autograd.Backward(H.Mul(tensor.New(wrand, n, b, d)).Sum())
	rep := report{}
	const tol = 1e-12
	rep["H"] = check(t, "H", H, hout, tol)
	rep["dX"] = check(t, "dX", X.Grad(), dX, tol)
	rep["dWLSTM"] = check(t, "dWLSTM", W.Grad(), dW, tol)
	rep["dc0"] = check(t, "dc0", C0.Grad(), dc0, tol)
	rep["dh0"] = check(t, "dh0", H0.Grad(), dh0, tol)
	rep.log(t)

	// nn.LSTM with the weights permuted: torch block q (i, f, g, o) is
	// Karpathy's block his[q] (i, f, o, g); his single bias goes to BiasIH.
	his := [4]int{0, 1, 3, 2}
	wih, whh, bih := make([]float64, 4*d*in), make([]float64, 4*d*d), make([]float64, 4*d)
	for q := 0; q < 4; q++ {
		for j := 0; j < d; j++ {
			col := his[q]*d + j
			bih[q*d+j] = ref.w[col]
			for e := 0; e < in; e++ {
				wih[(q*d+j)*in+e] = ref.w[(1+e)*4*d+col]
			}
			for e := 0; e < d; e++ {
				whh[(q*d+j)*d+e] = ref.w[(1+in+e)*4*d+col]
			}
		}
	}
	cell := &nn.LSTMCell{WeightIH: leaf(wih, 4*d, in), WeightHH: leaf(whh, 4*d, d),
		BiasIH: leaf(bih, 4*d), BiasHH: leaf(make([]float64, 4*d), 4*d)}
	X2, C02, H02 := leaf(x, n, b, in), leaf(c0, 1, b, d), leaf(h0, 1, b, d)
	out, hn, cn := (&nn.LSTM{Cells: []*nn.LSTMCell{cell}}).Forward(X2, H02, C02)
	autograd.Backward(out.Mul(tensor.New(wrand, n, b, d)).Sum())
	rep = report{}
	rep["output"] = check(t, "nn.LSTM output", out, hout, tol)
	rep["h_n"] = check(t, "nn.LSTM h_n", hn, hout[(n-1)*b*d:], tol)
	rep["c_n"] = check(t, "nn.LSTM c_n", cn, c[(n-1)*b*d:], tol)
	rep["dX"] = check(t, "nn.LSTM dX", X2.Grad(), dX, tol)
	rep["dc0"] = check(t, "nn.LSTM dc0", C02.Grad(), dc0, tol)
	rep["dh0"] = check(t, "nn.LSTM dh0", H02.Grad(), dh0, tol)
	// Map dWLSTM into PyTorch's layout and compare.
	wantIH, wantHH, wantB := make([]float64, 4*d*in), make([]float64, 4*d*d), make([]float64, 4*d)
	for q := 0; q < 4; q++ {
		for j := 0; j < d; j++ {
			col := his[q]*d + j
			wantB[q*d+j] = dW[col]
			for e := 0; e < in; e++ {
				wantIH[(q*d+j)*in+e] = dW[(1+e)*4*d+col]
			}
			for e := 0; e < d; e++ {
				wantHH[(q*d+j)*d+e] = dW[(1+in+e)*4*d+col]
			}
		}
	}
	rep["dW_ih"] = check(t, "nn.LSTM dW_ih", cell.WeightIH.Grad(), wantIH, tol)
	rep["dW_hh"] = check(t, "nn.LSTM dW_hh", cell.WeightHH.Grad(), wantHH, tol)
	rep["db_ih"] = check(t, "nn.LSTM db_ih", cell.BiasIH.Grad(), wantB, tol)
	rep["db_hh"] = check(t, "nn.LSTM db_hh", cell.BiasHH.Grad(), wantB, tol)
	rep.log(t)
}
