package examples

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

// pg-pong's hyper-parameters (learning rate, gamma, RMSProp decay) with
// a tiny network: D inputs, H hidden units, T frames per episode,
// batchSize episodes per update, two updates.
const (
	pgD, pgH, pgT      = 10, 6, 8
	pgBatch, pgUpdates = 2, 2
	pgLR, pgGamma      = 1e-4, 0.99
	pgDecay, pgEps     = 0.99, 1e-5
)

// discountRewards is his discount_rewards: a reverse scan that restarts
// at every non-zero reward (a game boundary in Pong).
func discountRewards(r []float64) []float64 {
	out := make([]float64, len(r))
	running := 0.0
	for t := len(r) - 1; t >= 0; t-- {
		if r[t] != 0 {
			running = 0
		}
		running = running*pgGamma + r[t]
		out[t] = running
	}
	return out
}

// standardize subtracts the mean and divides by the population standard
// deviation (NumPy's std, ddof 0).
func standardize(v []float64) []float64 {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	s = math.Sqrt(s / float64(len(v)))
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = (x - m) / s
	}
	return out
}

// policyForward is his policy_forward: h = relu(W1 x), p = σ(W2·h).
func policyForward(w1, w2, x []float64) (p float64, h []float64) {
	h = matVec(w1, pgH, x)
	logp := 0.0
	for i := range h {
		h[i] = max(h[i], 0)
		logp += w2[i] * h[i]
	}
	return sigmoid(logp), h
}

// TestPGPong runs pg-pong's policy-gradient update on fixed episodes
// (two RMSProp ascent updates of two episodes each) with Tessera — the
// objective Σ advantage·log π(action) as -BCEWithLogits(logit, y,
// weight=advantage, sum), gradients accumulated over episodes by
// backward, optim.RMSProp with Maximize — and compares the gradient
// buffers and the updated weights with his policy_backward and RMSProp
// formulas.
func TestPGPong(t *testing.T) {
	r := rand.New(rand.NewPCG(2016, 5))
	w1, w2 := randn(r, pgH*pgD, 1/math.Sqrt(pgD)), randn(r, pgH, 1/math.Sqrt(pgH)) // "Xavier"
	rewards := [][]float64{
		{0, 0, 0, 1, 0, 0, 0, -1},
		{0, 0, -1, 0, 0, 0, 0, 1},
	}
	W1, W2 := leaf(w1, pgH, pgD), leaf(w2, pgH)
	opt := optim.NewRMSProp([]*tensor.Tensor{W1, W2}, optim.LR(pgLR), optim.Alpha(pgDecay), optim.Eps(pgEps), optim.Maximize())
	cache1, cache2 := make([]float64, pgH*pgD), make([]float64, pgH)
	rep := report{}
	const tol = 1e-12
	for u := 0; u < pgUpdates; u++ {
		buf1, buf2 := make([]float64, pgH*pgD), make([]float64, pgH)
		for ep := 0; ep < pgBatch; ep++ {
			// Frame differences: sparse, like Pong's preprocessed frames.
			epx := make([]float64, pgT*pgD)
			for i := range epx {
				if r.Float64() < 0.4 {
					epx[i] = float64(r.IntN(3) - 1)
				}
			}
			// Reference episode: forward, sample, record y - p.
			eph := make([]float64, pgT*pgH)
			dlogp, ys := make([]float64, pgT), make([]float64, pgT)
			for step := 0; step < pgT; step++ {
				p, h := policyForward(w1, w2, epx[step*pgD:(step+1)*pgD])
				copy(eph[step*pgH:], h)
				if r.Float64() < p { // action UP
					ys[step] = 1
				}
				dlogp[step] = ys[step] - p
			}
			adv := standardize(discountRewards(rewards[ep]))
			for step := range dlogp {
				dlogp[step] *= adv[step] // modulate the gradient with advantage
			}
			// policy_backward.
			dW2 := matTVec(eph, pgH, dlogp) // eph.T @ epdlogp
			dh := make([]float64, pgT*pgH)
			addOuter(dh, dlogp, w2)
			for i := range dh {
				if eph[i] <= 0 {
					dh[i] = 0
				}
			}
			dW1 := make([]float64, pgH*pgD) // dh.T @ epx
			for step := 0; step < pgT; step++ {
				addOuter(dW1, dh[step*pgH:(step+1)*pgH], epx[step*pgD:(step+1)*pgD])
			}
			for i := range buf1 {
				buf1[i] += dW1[i]
			}
			for i := range buf2 {
				buf2[i] += dW2[i]
			}

			// Tessera: the same episode, the advantage standardised with
			// tensor ops, the log-likelihood through BCEWithLogits.
			X := tensor.New(epx, pgT, pgD)
			logit := X.MatMul(W1.T()).ReLU().MatMul(W2) // (T)
			d := tensor.New(discountRewards(rewards[ep]))
			advT := d.Sub(d.Mean()).Div(d.Std(nil, 0, false))
			rep["p"] = max(rep["p"], checkProbs(t, logit, w1, w2, epx, tol))
			J := nn.BinaryCrossEntropyWithLogits(logit, tensor.New(ys), nn.Weight(advT), nn.Reduce(nn.ReduceSum)).Neg()
			autograd.Backward(J) // accumulates into W1.Grad(), W2.Grad()
		}
		if maxAbs(buf1) == 0 || maxAbs(buf2) == 0 {
			t.Fatal("degenerate episode: zero gradient")
		}
		rep["grad W1"] = max(rep["grad W1"], check(t, "grad_buffer W1", W1.Grad(), buf1, tol))
		rep["grad W2"] = max(rep["grad W2"], check(t, "grad_buffer W2", W2.Grad(), buf2, tol))
		// His RMSProp ascent.
		for _, kv := range []struct{ w, g, c []float64 }{{w1, buf1, cache1}, {w2, buf2, cache2}} {
			for i, g := range kv.g {
				kv.c[i] = pgDecay*kv.c[i] + (1-pgDecay)*g*g
				kv.w[i] += pgLR * g / (math.Sqrt(kv.c[i]) + pgEps)
			}
		}
		opt.Step()
		opt.ZeroGrad()
		rep["W1"] = max(rep["W1"], check(t, "W1 after RMSProp", W1, w1, tol))
		rep["W2"] = max(rep["W2"], check(t, "W2 after RMSProp", W2, w2, tol))
	}
	rep.log(t)
}

// checkProbs compares σ(logit) with his policy_forward probabilities.
func checkProbs(t *testing.T, logit *tensor.Tensor, w1, w2, epx []float64, tol float64) float64 {
	t.Helper()
	want := make([]float64, pgT)
	for step := range want {
		want[step], _ = policyForward(w1, w2, epx[step*pgD:(step+1)*pgD])
	}
	return check(t, "aprob", logit.Detach().Sigmoid(), want, tol)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
