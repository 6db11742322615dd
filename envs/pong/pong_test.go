package pong

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

// A policy chooses the agent's action in a game.
type policy func(g *Game) Action

// random returns a policy that draws uniformly from actions.
func random(seed uint64, actions ...Action) policy {
	r := rand.New(rand.NewPCG(seed, 99))
	return func(*Game) Action { return actions[r.IntN(len(actions))] }
}

// tracker keeps the agent's paddle level with the ball.
func tracker(g *Game) Action {
	ball, _ := g.Ball()
	switch dy := ball.Y() - g.Agent().Y(); {
	case dy < -2:
		return Up
	case dy > 2:
		return Down
	}
	return Noop
}

// play runs one episode of g under p (at most limit steps) and returns
// the score and the sum of the rewards.
func play(t *testing.T, g *Game, p policy, limit int) (agent, opponent int, total float32) {
	t.Helper()
	for !g.Done() {
		if g.Steps() == limit {
			a, o := g.Score()
			t.Fatalf("no end after %d steps (score %d–%d)", limit, a, o)
		}
		total += g.Step(p(g))
		ball, _ := g.Ball()
		if y := ball.Y(); y < Top+BallHeight/2 || y > Bottom-BallHeight/2 {
			t.Fatalf("step %d: the ball's center left the court: y %v", g.Steps(), y)
		}
		for _, paddle := range []float32{g.Agent().Y(), g.Opponent().Y()} {
			if paddle < Top+PaddleHeight/2 || paddle > Bottom-PaddleHeight/2 {
				t.Fatalf("step %d: a paddle left the court: y %v", g.Steps(), paddle)
			}
		}
	}
	agent, opponent = g.Score()
	return agent, opponent, total
}

func TestOpponentBeatsARandomPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		actions []Action
	}{{"up or down (pg-pong's choice)", []Action{Up, Down}}, {"noop, up or down", []Action{Noop, Up, Down}}} {
		const seeds = 6
		margin := 0
		for seed := range uint64(seeds) {
			a, o, total := play(t, New(seed), random(seed, tc.actions...), 20000)
			if max(a, o) != Points || total != float32(a-o) {
				t.Fatalf("seed %d: episode ended %d–%d with rewards summing to %v", seed, a, o, total)
			}
			margin += o - a
		}
		avg := float64(margin) / seeds
		t.Logf("%s: the opponent wins by %.2f points per episode on average over %d seeds", tc.name, avg, seeds)
		if avg < 15 {
			t.Errorf("%s: the opponent wins by %.2f points per episode, want at least 15", tc.name, avg)
		}
	}
}

func TestTrackingPolicyScores(t *testing.T) {
	for seed := range uint64(3) {
		a, o, _ := play(t, New(seed), tracker, 50000)
		t.Logf("seed %d: a tracking agent ends %d–%d", seed, a, o)
		if a < 5 {
			t.Errorf("seed %d: a tracking agent scores %d points, want at least 5", seed, a)
		}
	}
}

func TestEpisodesEndAt21AndReset(t *testing.T) {
	g := New(4)
	play(t, g, random(4, Up, Down), 20000)
	err := tensor.Catch(func() { g.Step(Up) })
	if !errors.Is(err, tensor.ErrArgument) {
		t.Fatalf("Step after the episode: %v, want ErrArgument", err)
	}
	g.Reset()
	if a, o := g.Score(); a != 0 || o != 0 || g.Done() || g.Steps() != 0 {
		t.Fatalf("after Reset: %d–%d, done %v, %d steps", a, o, g.Done(), g.Steps())
	}
	for _, a := range []Action{1, 4, -1} {
		if err := tensor.Catch(func() { g.Step(a) }); !errors.Is(err, tensor.ErrArgument) {
			t.Errorf("Step(%d): %v, want ErrArgument", a, err)
		}
	}
}

func TestDeterministicForASeed(t *testing.T) {
	run := func(seed uint64) []float32 {
		e := NewEnv(seed)
		p := random(1, Up, Down)
		var trace []float32
		for range 400 {
			obs, r, _ := e.Step(p(e.Game))
			ball, _ := e.Ball()
			trace = append(trace, r, ball.X(), ball.Y(), obs[40*ObsSide+40])
		}
		return trace
	}
	a, b, c := run(7), run(7), run(8)
	same := func(x, y []float32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("two games of one seed and one policy differ")
	}
	if same(a, c) {
		t.Fatal("games of two seeds are the same")
	}
}
