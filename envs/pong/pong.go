// Package pong is a Pong simulator for policy-gradient agents, after the
// Atari 2600 game that Karpathy's pg-pong plays through OpenAI Gym: the
// agent moves the right paddle up or down, a scripted opponent the left
// one, each point scores +1 or -1 for the agent, and an episode ends when
// either side has 21 points. Frames are drawn as the Atari's 210×160
// screen (its red channel, the one pg-pong keeps), and Preprocess and Env
// turn them into the 80×80 difference frames pg-pong feeds its network.
//
// The ball and the paddles are github.com/go-gl/mathgl/mgl32 vectors in
// screen pixels (x to the right, y down). The ball bounces off the walls;
// each return off a paddle is faster, and steeper the farther from the
// paddle's center it strikes. The opponent follows the ball's height at
// a limited speed: it beats a random policy by about 19 points of 21,
// and loses to an agent that keeps level with the ball. Everything random (serves, the
// spin a paddle puts on the ball) comes from one PCG-DXSM generator
// seeded by New, so a seed and a sequence of actions give the same game
// on every machine.
package pong

import (
	"fmt"
	"math/rand/v2"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/tessera-ml/tessera/tensor"
)

// An Action is what the agent does in one step, numbered as the Atari
// actions pg-pong uses: Up (2) and Down (3); Noop (0) keeps the paddle
// still.
type Action int

// The agent's actions.
const (
	Noop Action = 0
	Up   Action = 2
	Down Action = 3
)

// Geometry of the screen and the court, in pixels.
const (
	Width  = 160 // screen width
	Height = 210 // screen height
	Top    = 34  // first row of the court; rows 24–33 are the top wall
	Bottom = 194 // first row of the bottom wall (rows 194–209)

	PaddleWidth  = 4
	PaddleHeight = 16
	BallWidth    = 2
	BallHeight   = 4
	OpponentX    = 16  // left column of the opponent's paddle
	AgentX       = 140 // left column of the agent's paddle

	Points = 21 // points that end an episode
)

// Speeds, in pixels per step.
const (
	ballSpeedX    = 3    // the ball's horizontal speed at a serve
	speedUp       = 1.1  // each hit multiplies it by speedUp …
	maxSpeedX     = 7    // … up to maxSpeedX
	maxSpeedY     = 4.5  // the steepest the ball goes
	angle         = 3    // a hit at a paddle's edge adds ±angle to the vertical speed
	serveSpeedY   = 2    // serves leave at up to this vertical speed
	spin          = 0.75 // a hit adds up to ±spin to the vertical speed
	agentSpeed    = 4    // the agent's paddle per Up or Down
	opponentSpeed = 2.75 // the most the opponent's paddle moves per step
)

// A Game is one Pong match at a time: the ball, the two paddles, the
// score and the generator of its random numbers.
type Game struct {
	ball, vel       mgl32.Vec2 // the ball's center and velocity
	agent, opponent mgl32.Vec2 // the paddles' centers
	scoreA, scoreO  int
	steps           int
	done            bool
	rng             *rand.PCG
}

// New returns a game whose random numbers come from seed, at the start
// of its first episode.
func New(seed uint64) *Game {
	g := &Game{rng: rand.NewPCG(seed, 0)}
	g.Reset()
	return g
}

// Reset starts a new episode: 0–0, paddles centered, the ball served.
// Episodes after the first draw on from the same generator.
func (g *Game) Reset() {
	mid := float32(Top+Bottom) / 2
	g.agent = mgl32.Vec2{AgentX + PaddleWidth/2, mid}
	g.opponent = mgl32.Vec2{OpponentX + PaddleWidth/2, mid}
	g.scoreA, g.scoreO, g.steps, g.done = 0, 0, 0, false
	g.serve()
}

// Ball returns the ball's center and velocity.
func (g *Game) Ball() (pos, vel mgl32.Vec2) { return g.ball, g.vel }

// Agent returns the center of the agent's (right) paddle.
func (g *Game) Agent() mgl32.Vec2 { return g.agent }

// Opponent returns the center of the opponent's (left) paddle.
func (g *Game) Opponent() mgl32.Vec2 { return g.opponent }

// Score returns the points of the agent and of the opponent.
func (g *Game) Score() (agent, opponent int) { return g.scoreA, g.scoreO }

// Steps returns the steps taken in this episode.
func (g *Game) Steps() int { return g.steps }

// Done reports whether the episode is over (a side has Points).
func (g *Game) Done() bool { return g.done }

// Step moves the agent's paddle by a, the opponent's toward the ball, and
// the ball, and returns the agent's reward: +1 when the ball passes the
// opponent, -1 when it passes the agent, else 0. A point is followed by
// a serve from the center. Step panics with a *tensor.Error wrapping
// ErrArgument for an action other than Noop, Up and Down, or once the
// episode is over (call Reset).
func (g *Game) Step(a Action) (reward float32) {
	switch {
	case a != Noop && a != Up && a != Down:
		panic(&tensor.Error{Op: "pong.Step", Err: tensor.ErrArgument, Detail: fmt.Sprintf("action %d is not Noop (0), Up (2) or Down (3)", a)})
	case g.done:
		panic(&tensor.Error{Op: "pong.Step", Err: tensor.ErrArgument, Detail: "the episode is over; call Reset"})
	}
	g.steps++
	switch a {
	case Up:
		g.agent[1] -= agentSpeed
	case Down:
		g.agent[1] += agentSpeed
	}
	g.agent[1] = clampPaddle(g.agent[1])
	dy := mgl32.Clamp(g.ball.Y()-g.opponent.Y(), -opponentSpeed, opponentSpeed)
	g.opponent[1] = clampPaddle(g.opponent[1] + dy)

	prev := g.ball
	g.ball = g.ball.Add(g.vel)
	g.bounceOffWalls()
	if g.vel.X() > 0 {
		g.hit(prev, g.agent, AgentX-BallWidth/2)
	} else {
		g.hit(prev, g.opponent, OpponentX+PaddleWidth+BallWidth/2)
	}
	switch {
	case g.ball.X()+BallWidth/2 < 0:
		g.scoreA++
		reward = 1
	case g.ball.X()-BallWidth/2 >= Width:
		g.scoreO++
		reward = -1
	default:
		return 0
	}
	if g.scoreA == Points || g.scoreO == Points {
		g.done = true
	} else {
		g.serve()
	}
	return reward
}

// clampPaddle keeps a paddle's center inside the court.
func clampPaddle(y float32) float32 {
	return mgl32.Clamp(y, Top+PaddleHeight/2, Bottom-PaddleHeight/2)
}

// serve puts the ball in the center, leaving toward a random side at a
// random vertical speed up to serveSpeedY.
func (g *Game) serve() {
	g.ball = mgl32.Vec2{Width / 2, float32(Top+Bottom) / 2}
	dir := float32(1)
	if g.rng.Uint64()&1 == 0 {
		dir = -1
	}
	g.vel = mgl32.Vec2{dir * ballSpeedX, (2*g.uniform() - 1) * serveSpeedY}
}

// uniform returns a float32 drawn uniformly from [0, 1).
func (g *Game) uniform() float32 { return float32(g.rng.Uint64()>>40) / (1 << 24) }

// bounceOffWalls reflects the ball off the top and bottom walls.
func (g *Game) bounceOffWalls() {
	const lo, hi = Top + BallHeight/2, Bottom - BallHeight/2
	switch y := g.ball.Y(); {
	case y < lo:
		g.ball[1] = 2*lo - y
		g.vel[1] = -g.vel.Y()
	case y > hi:
		g.ball[1] = 2*hi - y
		g.vel[1] = -g.vel.Y()
	}
}

// hit sends the ball back when, moving from prev, its center crossed
// face (the x at which its edge meets the paddle's front) within reach of
// paddle. The return is faster (speedUp, up to maxSpeedX) and its
// vertical speed changes by up to ±angle the farther from the paddle's
// center the ball strikes, plus a random spin, capped at ±maxSpeedY: an
// agent that strikes with its paddle's edge sends the ball steeper than
// the opponent can follow.
func (g *Game) hit(prev, paddle mgl32.Vec2, face float32) {
	before, after := prev.X()-face, g.ball.X()-face
	if before*g.vel.X() > 0 || after*g.vel.X() <= 0 {
		return // the ball's center did not cross the face this step
	}
	t := before / (before - after)
	y := prev.Y() + t*(g.ball.Y()-prev.Y())
	offset := y - paddle.Y()
	const reach = PaddleHeight/2 + BallHeight/2
	if mgl32.Abs(offset) > reach {
		return
	}
	g.ball[0] = face - after // mirrored back in front of the face
	g.vel[0] = -mgl32.Clamp(g.vel.X()*speedUp, -maxSpeedX, maxSpeedX)
	vy := g.vel.Y() + angle*offset/reach + (2*g.uniform()-1)*spin
	g.vel[1] = mgl32.Clamp(vy, -maxSpeedY, maxSpeedY)
}
