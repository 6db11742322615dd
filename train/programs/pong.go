package programs

import (
	"flag"
	"math"
	"math/rand/v2"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/envs/pong"
	"github.com/tessera-ml/tessera/nn"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
	"github.com/tessera-ml/tessera/train"
)

func init() {
	train.Register(&train.Program{
		Name:     "pong",
		Summary:  "Karpathy's policy-gradient Pong agent (200 hidden, REINFORCE, RMSProp 0.99, 10 episodes a step) on envs/pong",
		Defaults: train.Defaults{Steps: 1000, Batch: 10, LR: 1e-3, EvalEvery: 1, Curve: "episode reward"},
		Setup: func(fs *flag.FlagSet) train.Builder {
			c := pongConfig{}
			fs.IntVar(&c.hidden, "hidden", 200, "hidden units")
			fs.Float64Var(&c.gamma, "gamma", 0.99, "discount factor of rewards, in [0, 1]")
			fs.Float64Var(&c.decay, "decay", 0.99, "RMSProp decay of the squared gradients, in [0, 1)")
			fs.IntVar(&c.maxFrames, "max-frames", 0, "end an episode after this many decisions (0: at 21 points)")
			fs.IntVar(&c.skip, "frame-skip", 3, "frames each action is repeated for: Gym's Pong-v0, which pg-pong plays, repeats each for 2–4, 3 on average (the observation is the difference across them)")
			return func(r *train.Run) (train.Task, error) { return newPongAgent(r, c) }
		},
	})
}

type pongConfig struct {
	hidden, maxFrames, skip int
	gamma, decay            float64
}

// pongAgent is pg-pong: a policy network p(up | x) = σ(W2·relu(W1 x)) on
// 80×80 difference frames, trained by REINFORCE on -batch episodes a
// step (his batch_size 10) with rewards discounted by gamma and
// standardised per episode, and RMSProp (his decay_rate 0.99, eps 1e-5).
// The episodes of a step are played side by side, which changes nothing
// in the mathematics: the policy only changes between steps. Every
// random choice of step n comes from generators seeded with (seed, n),
// so a step depends only on the weights and the optimizer's state.
type pongAgent struct {
	c      pongConfig
	r      *train.Run
	W1, W2 *tensor.Tensor // [H, 6400] and [H]
	opt    optim.Optimizer
	run    *pongRunning
}

// pongRunning is the checkpointed running reward: his 0.99 moving
// average of episode scores, started at the first episode's score.
type pongRunning struct {
	Episodes int     `json:"episodes"`
	First    float64 `json:"first"`
	Running  float64 `json:"running"`
}

func newPongAgent(r *train.Run, c pongConfig) (*pongAgent, error) {
	if c.hidden < 1 || c.maxFrames < 0 || c.skip < 1 || !(c.gamma >= 0 && c.gamma <= 1) || !(c.decay >= 0 && c.decay < 1) {
		return nil, train.UsageError("-hidden and -frame-skip must be at least 1, -max-frames not negative, -gamma in [0, 1] and -decay in [0, 1)")
	}
	g := tensor.NewGenerator(r.Seed)
	opts := []tensor.Option{tensor.On(r.Device), tensor.WithGenerator(g)}
	a := &pongAgent{c: c, r: r, run: &pongRunning{}}
	// His "Xavier" initialisation: randn / sqrt(fan-in).
	a.W1 = tensor.Normal([]int{c.hidden, pong.ObsSize}, 0, 1/math.Sqrt(pong.ObsSize), opts...).SetRequiresGrad(true).Keep()
	a.W2 = tensor.Normal([]int{c.hidden}, 0, 1/math.Sqrt(float64(c.hidden)), opts...).SetRequiresGrad(true).Keep()
	a.opt = optim.NewRMSProp([]*tensor.Tensor{a.W1, a.W2}, optim.LR(r.LR), optim.Alpha(c.decay), optim.Eps(1e-5))
	return a, nil
}

func (a *pongAgent) Slots() []nn.Slot { return []nn.Slot{nn.Param("W1", &a.W1), nn.Param("W2", &a.W2)} }

func (a *pongAgent) Children() []nn.Child { return nil }

// episode is what one played episode keeps for the update: the sparse
// difference frames, the actions and rewards.
type episode struct {
	env     *pong.Env
	obs     []float32 // the current observation
	frames  frames
	ys      []float32 // 1 for Up, 0 for Down
	rewards []float64
	done    bool
}

// frames are difference frames by their non-zero pixels, which are 1 or
// -1 (differences of frames of 0s and 1s): pixel idx[0][k] of frame
// seg[0][k] is 1, pixel idx[1][k] of frame seg[1][k] is -1.
type frames struct {
	idx, seg [2][]int32
	rows     int
}

// add appends obs as the next frame.
func (f *frames) add(obs []float32) {
	for p, v := range obs {
		if v != 0 {
			s := 0
			if v < 0 {
				s = 1
			}
			f.idx[s], f.seg[s] = append(f.idx[s], int32(p)), append(f.seg[s], int32(f.rows))
		}
	}
	f.rows++
}

// columns returns W1ᵀ, (6400, H), contiguous: the rows logits picks.
func (a *pongAgent) columns() *tensor.Tensor { return a.W1.T().Contiguous() }

// logits returns the policy's logits W2·relu(W1 x) for the frames f, w1t
// being columns(). A difference frame has a few dozen of its 6400 pixels
// set, all 1 or -1, so W1 x is the sum of the columns of W1 at its 1s
// minus the sum at its -1s: rows of W1ᵀ picked by IndexSelect and summed
// per frame by IndexAdd, the same product as the dense (rows, 6400)·
// (6400, H) one at a hundredth of the work, differentiable the same way.
func (a *pongAgent) logits(w1t *tensor.Tensor, f *frames) *tensor.Tensor {
	dev := a.r.Device
	var sums [2]*tensor.Tensor
	for s := range sums {
		sums[s] = tensor.Zeros([]int{f.rows, a.c.hidden}, tensor.On(dev))
		if n := len(f.idx[s]); n > 0 {
			picked := w1t.IndexSelect(0, tensor.New(f.idx[s], n).To(dev))
			sums[s] = sums[s].IndexAdd(0, tensor.New(f.seg[s], n).To(dev), picked)
		}
	}
	return sums[0].Sub(sums[1]).ReLU().MatMul(a.W2)
}

// play plays a batch of episodes side by side with the current policy.
func (a *pongAgent) play(n int) []*episode {
	B := a.r.Batch
	rng := rand.New(rand.NewPCG(a.r.Seed, uint64(n)))
	eps := make([]*episode, B)
	var w1t *tensor.Tensor
	tensor.NoGrad(func() { w1t = a.columns() })
	defer w1t.Release()
	for i := range eps {
		env := pong.NewEnv(rng.Uint64())
		eps[i] = &episode{env: env, obs: env.Reset()}
	}
	for {
		var live []*episode
		for _, e := range eps {
			if !e.done {
				live = append(live, e)
			}
		}
		if len(live) == 0 {
			return eps
		}
		var now frames
		for _, e := range live {
			now.add(e.obs)
		}
		var probs []float32
		tensor.NoGrad(func() {
			tensor.Scope(func() {
				probs = a.logits(w1t, &now).Sigmoid().To(tensor.CPU).Float32s()
			})
		})
		for i, e := range live {
			e.frames.add(e.obs)
			action, y := pong.Down, float32(0)
			if rng.Float32() < probs[i] {
				action, y = pong.Up, 1
			}
			obs, reward, done := e.env.Repeat(action, a.c.skip)
			e.obs = obs
			e.ys = append(e.ys, y)
			e.rewards = append(e.rewards, float64(reward))
			e.done = done || (a.c.maxFrames > 0 && len(e.ys) >= a.c.maxFrames)
		}
	}
}

// advantages returns his discount_rewards (the sum restarting at each
// point scored), standardised by the mean and population std; all zero
// when the rewards are constant (a capped episode without a point).
func advantages(r []float64, gamma float64) []float32 {
	d := make([]float64, len(r))
	running := 0.0
	for t := len(r) - 1; t >= 0; t-- {
		if r[t] != 0 {
			running = 0
		}
		running = running*gamma + r[t]
		d[t] = running
	}
	var mean, sq float64
	for _, v := range d {
		mean += v
	}
	mean /= float64(len(d))
	for _, v := range d {
		sq += (v - mean) * (v - mean)
	}
	std := math.Sqrt(sq / float64(len(d)))
	out := make([]float32, len(d))
	if std == 0 {
		return out
	}
	for i, v := range d {
		out[i] = float32((v - mean) / std)
	}
	return out
}

func (a *pongAgent) Step(n int) float64 {
	eps := a.play(n)
	a.learn(eps)
	total := 0.0
	for _, e := range eps {
		score := 0.0
		for _, r := range e.rewards {
			score += r
		}
		total += score
		if a.run.Episodes == 0 {
			a.run.First, a.run.Running = score, score
		} else {
			a.run.Running = 0.99*a.run.Running + 0.01*score
		}
		a.run.Episodes++
	}
	return total / float64(len(eps))
}

// learn makes his update from a batch of played episodes: the gradient
// of Σ advantage·log π(action) summed over the episodes (his
// grad_buffer), then one RMSProp step.
func (a *pongAgent) learn(eps []*episode) {
	a.accumulate(eps)
	a.opt.Step()
	a.opt.ZeroGrad()
}

// accumulate adds each episode's gradient of -Σ advantage·log π(action)
// to the weights' gradients.
func (a *pongAgent) accumulate(eps []*episode) {
	for _, e := range eps {
		T := len(e.ys)
		tensor.Scope(func() {
			logit := a.logits(a.columns(), &e.frames)
			y := tensor.New(e.ys, T).To(a.r.Device)
			adv := tensor.New(advantages(e.rewards, a.c.gamma), T).To(a.r.Device)
			// -Σ adv·log π(action): descending it ascends his objective.
			autograd.Backward(nn.BinaryCrossEntropyWithLogits(logit, y, nn.Weight(adv), nn.Reduce(nn.ReduceSum)))
		})
	}
}

func (a *pongAgent) Evaluate() []train.Metric {
	return []train.Metric{
		{Name: "running reward", Value: a.run.Running, WithCurve: true},
		{Name: "rise of the running reward", Value: a.run.Running - a.run.First},
		{Name: "episodes", Value: float64(a.run.Episodes)},
	}
}

func (a *pongAgent) State() *train.State {
	return &train.State{Model: a, Optimizer: a.opt, Extra: a.run}
}

func (a *pongAgent) Close() {}
