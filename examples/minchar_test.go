package examples

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/tensor"
)

// charRNN holds min-char-rnn's parameters as flat row-major float64
// slices, column-vector convention: Wxh (H,V), Whh (H,H), Why (V,H),
// bh (H,1), by (V,1).
type charRNN struct {
	v, h                  int
	wxh, whh, why, bh, by []float64
	hprev                 []float64
	inputs, targets       []int
}

// lossFun is Karpathy's lossFun(inputs, targets, hprev) re-derived in Go:
// the forward pass, the summed cross-entropy loss and his hand-written
// backward pass (before np.clip). dhprev is the final dhnext: the
// gradient with respect to hprev.
func (m *charRNN) lossFun() (loss float64, hLast []float64, dWxh, dWhh, dWhy, dbh, dby, dhprev []float64) {
	V, H, T := m.v, m.h, len(m.inputs)
	hs := make([][]float64, T+1) // hs[t+1] is his hs[t]; hs[0] is hs[-1]
	ps := make([][]float64, T)
	hs[0] = m.hprev
	for t := 0; t < T; t++ {
		// Wxh @ xs[t] with xs[t] one-hot is column inputs[t] of Wxh.
		a := matVec(m.whh, H, hs[t])
		h := make([]float64, H)
		for i := range h {
			h[i] = math.Tanh(m.wxh[i*V+m.inputs[t]] + a[i] + m.bh[i])
		}
		hs[t+1] = h
		y := matVec(m.why, V, h)
		var z float64
		p := make([]float64, V)
		for i := range y {
			p[i] = math.Exp(y[i] + m.by[i]) // naive softmax, as his
			z += p[i]
		}
		for i := range p {
			p[i] /= z
		}
		ps[t] = p
		loss += -math.Log(p[m.targets[t]])
	}
	dWxh, dWhh, dWhy = make([]float64, H*V), make([]float64, H*H), make([]float64, V*H)
	dbh, dby = make([]float64, H), make([]float64, V)
	dhnext := make([]float64, H)
	for t := T - 1; t >= 0; t-- {
		dy := append([]float64(nil), ps[t]...)
		dy[m.targets[t]]--
		addOuter(dWhy, dy, hs[t+1])
		for i := range dby {
			dby[i] += dy[i]
		}
		dh := matTVec(m.why, H, dy)
		dhraw := make([]float64, H)
		for i := range dh {
			dh[i] += dhnext[i]
			dhraw[i] = (1 - hs[t+1][i]*hs[t+1][i]) * dh[i]
			dbh[i] += dhraw[i]
			dWxh[i*V+m.inputs[t]] += dhraw[i] // dhraw @ xs[t].T
		}
		addOuter(dWhh, dhraw, hs[t])
		dhnext = matTVec(m.whh, H, dhraw)
	}
	return loss, hs[T], dWxh, dWhh, dWhy, dbh, dby, dhnext
}

// TestMinCharRNN computes one min-char-rnn step (vocabulary 13, hidden
// 17, seq_length 7) with Tessera and compares loss, last hidden state and
// every gradient with lossFun.
func TestMinCharRNN(t *testing.T) {
	const V, H, T = 13, 17, 7
	r := rand.New(rand.NewPCG(2015, 8))
	m := &charRNN{v: V, h: H,
		// Larger than his 0.01 so that tanh and softmax are far from linear.
		wxh: randn(r, H*V, 0.3), whh: randn(r, H*H, 0.3), why: randn(r, V*H, 0.3),
		bh: randn(r, H, 0.1), by: randn(r, V, 0.1), hprev: randn(r, H, 0.5)}
	data := make([]int, T+1)
	for i := range data {
		data[i] = r.IntN(V)
	}
	m.inputs, m.targets = data[:T], data[1:]
	loss, hLast, dWxh, dWhh, dWhy, dbh, dby, dhprev := m.lossFun()

	Wxh, Whh, Why := leaf(m.wxh, H, V), leaf(m.whh, H, H), leaf(m.why, V, H)
	bh, by, hprev := leaf(m.bh, H, 1), leaf(m.by, V, 1), leaf(m.hprev, H, 1)
	h := hprev
	logits := make([]*tensor.Tensor, T)
	for t, ix := range m.inputs {
		x := Wxh.IndexSelect(1, tensor.FromInts([]int{ix})) // Wxh @ one-hot: (H, 1)
		h = x.Add(Whh.MatMul(h)).Add(bh).Tanh()
		logits[t] = Why.MatMul(h).Add(by).Reshape(V)
	}
	lossT := nn.CrossEntropy(tensor.Stack(logits, 0), tensor.FromInts(m.targets), nn.Reduce(nn.ReduceSum))
	autograd.Backward(lossT)

	rep := report{}
	const tol = 1e-12
	rep["loss"] = check(t, "loss", lossT, []float64{loss}, tol)
	rep["h"] = check(t, "hs[T-1]", h, hLast, tol)
	rep["dWxh"] = check(t, "dWxh", Wxh.Grad(), dWxh, tol)
	rep["dWhh"] = check(t, "dWhh", Whh.Grad(), dWhh, tol)
	rep["dWhy"] = check(t, "dWhy", Why.Grad(), dWhy, tol)
	rep["dbh"] = check(t, "dbh", bh.Grad(), dbh, tol)
	rep["dby"] = check(t, "dby", by.Grad(), dby, tol)
	rep["dhprev"] = check(t, "dhprev", hprev.Grad(), dhprev, tol)
	rep.log(t)

	// The same step with the per-step 1-D CrossEntropy form of his loop.
	for _, p := range []*tensor.Tensor{Wxh, Whh, Why, bh, by, hprev} {
		p.SetGrad(nil)
	}
	h = hprev
	var total *tensor.Tensor
	for t, ix := range m.inputs {
		x := nn.Embedding(Wxh.T(), tensor.FromInts([]int{ix})).Reshape(H, 1)
		h = x.Add(Whh.MatMul(h)).Add(bh).Tanh()
		l := nn.CrossEntropy(Why.MatMul(h).Add(by).Reshape(V), tensor.FromInts([]int{m.targets[t]}).Reshape())
		if total == nil {
			total = l
		} else {
			total = total.Add(l)
		}
	}
	autograd.Backward(total)
	check(t, "per-step loss", total, []float64{loss}, tol)
	check(t, "per-step dWxh", Wxh.Grad(), dWxh, tol)
	check(t, "per-step dWhh", Whh.Grad(), dWhh, tol)
	check(t, "per-step dhprev", hprev.Grad(), dhprev, tol)
}
