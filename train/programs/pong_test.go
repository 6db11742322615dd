package programs

import (
	"fmt"
	"math"
	"testing"

	"github.com/tessera-ml/tessera/envs/pong"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

// karpathyUpdate is pg-pong's update in float64 from recorded episodes:
// policy_forward on each frame, dlogp = y - aprob modulated by the
// discounted rewards (the sum restarting at each point) standardised by
// their mean and population std, policy_backward summed over the
// episodes into grad_buffer, then his RMSProp ascent from a zero cache.
// It returns the gradient buffers and the updated weights.
func karpathyUpdate(w1, w2 []float64, H int, eps []*episode, lr, gamma, decay float64) (g1, g2, n1, n2 []float64) {
	D := pong.ObsSize
	g1, g2 = make([]float64, H*D), make([]float64, H)
	for _, e := range eps {
		T := len(e.ys)
		// discount_rewards, then standardise.
		d := make([]float64, T)
		run := 0.0
		for t := T - 1; t >= 0; t-- {
			if e.rewards[t] != 0 {
				run = 0
			}
			run = run*gamma + e.rewards[t]
			d[t] = run
		}
		mean, sq := 0.0, 0.0
		for _, v := range d {
			mean += v / float64(T)
		}
		for _, v := range d {
			sq += (v - mean) * (v - mean) / float64(T)
		}
		std := math.Sqrt(sq)
		x := make([]float64, T*D)
		for s, v := range []float64{1, -1} {
			for k, p := range e.frames.idx[s] {
				x[int(e.frames.seg[s][k])*D+int(p)] = v
			}
		}
		for t := range T {
			x := x[t*D : (t+1)*D]
			h := make([]float64, H)
			logit := 0.0
			for j := range H {
				for i, v := range x {
					if v != 0 {
						h[j] += w1[j*D+i] * v
					}
				}
				h[j] = max(h[j], 0)
				logit += w2[j] * h[j]
			}
			aprob := 1 / (1 + math.Exp(-logit))
			dlogp := (float64(e.ys[t]) - aprob) * (d[t] - mean) / std
			for j := range H {
				g2[j] += h[j] * dlogp
				if h[j] <= 0 {
					continue
				}
				dh := dlogp * w2[j]
				for i, v := range x {
					if v != 0 {
						g1[j*D+i] += dh * v
					}
				}
			}
		}
	}
	step := func(w, g []float64) []float64 {
		out := make([]float64, len(w))
		for i := range w {
			cache := (1 - decay) * g[i] * g[i]
			out[i] = w[i] + lr*g[i]/(math.Sqrt(cache)+1e-5)
		}
		return out
	}
	return g1, g2, step(w1, g1), step(w2, g2)
}

func float64s(t *tensor.Tensor) []float64 {
	out := []float64{}
	for _, v := range t.To(tensor.CPU).Float32s() {
		out = append(out, float64(v))
	}
	return out
}

// TestPongUpdateIsKarpathys plays a batch of short episodes with the
// pong program and checks its gradient (the negative of his
// grad_buffer, as we descend) and its RMSProp step against pg-pong's
// formulas in float64 on the same recorded episodes.
func TestPongUpdateIsKarpathys(t *testing.T) {
	const H, lr = 16, 1e-3
	r := &train.Run{Flags: train.Flags{Seed: 3, Batch: 3, LR: lr}, Device: tensor.CPU}
	a, err := newPongAgent(r, pongConfig{hidden: H, maxFrames: 150, skip: 3, gamma: 0.99, decay: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	w1, w2 := float64s(a.W1), float64s(a.W2)
	eps := a.play(0)
	points := 0
	for _, e := range eps {
		for _, r := range e.rewards {
			if r != 0 {
				points++
			}
		}
	}
	if points == 0 {
		t.Fatal("no point scored in the batch: a zero update checks nothing")
	}
	g1, g2, n1, n2 := karpathyUpdate(w1, w2, H, eps, lr, 0.99, 0.99)
	a.accumulate(eps)
	for _, c := range []struct {
		name      string
		got, want []float64
		scale     float64
	}{
		{"-dW1", float64s(a.W1.Grad()), g1, -1},
		{"-dW2", float64s(a.W2.Grad()), g2, -1},
	} {
		compare(t, c.name, c.got, c.want, c.scale, 1e-4)
	}
	a.opt.Step()
	compare(t, "W1 after RMSProp", float64s(a.W1), n1, 1, 1e-4)
	compare(t, "W2 after RMSProp", float64s(a.W2), n2, 1, 1e-4)
}

// compare fails unless got ≈ scale·want within tol relative to want's
// largest magnitude.
func compare(t *testing.T, name string, got, want []float64, scale, tol float64) {
	t.Helper()
	big, worst, at := 0.0, 0.0, 0
	for _, v := range want {
		big = max(big, math.Abs(v))
	}
	for i := range want {
		if d := math.Abs(got[i] - scale*want[i]); d > worst {
			worst, at = d, i
		}
	}
	t.Logf("%s: largest |difference| %.3g at %d (largest |value| %.3g)", name, worst, at, big)
	if big == 0 || worst > tol*big {
		t.Errorf("%s: element %d is %v, want %v (largest |value| %v)", name, at, got[at], scale*want[at], big)
	}
}

// frames keeps a difference frame's 1s and -1s apart, row by row.
func TestPongFramesSplitBySign(t *testing.T) {
	var f frames
	obs := make([]float32, pong.ObsSize)
	f.add(obs)
	obs[3], obs[70], obs[6399] = 1, -1, 1
	f.add(obs)
	want := frames{idx: [2][]int32{{3, 6399}, {70}}, seg: [2][]int32{{1, 1}, {1}}, rows: 2}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("frames %v, want %v", f, want)
	}
}
