// Package pong is a Pong simulator for policy-gradient agents, after the
// Atari 2600 game that Karpathy's pg-pong plays through OpenAI Gym: the
// agent moves the right paddle up or down, a scripted opponent the left
// one, each point scores +1 or -1 for the agent, and an episode ends when
// either side has 21 points. Frames are drawn as the Atari's 210×160
// screen (its red channel, the one pg-pong keeps), and Preprocess and Env
// turn them into the 80×80 difference frames pg-pong feeds its network.
//
// The ball and the paddles are github.com/go-gl/mathgl/mgl32 vectors in
// screen pixels (x to the right, y down). Each point starts with both
// paddles centered and the ball served from the center; it bounces off
// the walls, and, as on the Atari, it travels at a few fixed angles: the
// serve's is drawn from four, a return's is set by the quarter of the
// paddle it strikes (the edges send it steepest), and each return is
// faster. The opponent follows the ball's height at a limited speed: it
// aiming each return at a quarter of its paddle drawn at random: it beats
// a random policy by about 20 points of 21, and loses to an agent that
// keeps level with the ball. A pixel policy learns this game in a
// few hundred episodes; with continuous angles and paddles left where
// the last point ended, every rally was new to it and it learned nothing
// in thousands. The serves and the opponent's aim are drawn from one
// PCG-DXSM generator seeded by New, so a seed and a sequence of actions
// give the same game on every machine.
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
	ballSpeedX    = 3   // the ball's horizontal speed at a serve
	speedUp       = 1.1 // each hit multiplies it by speedUp …
	maxSpeedX     = 7   // … up to maxSpeedX
	agentSpeed    = 4   // the agent's paddle per Up or Down
	opponentSpeed = 2   // the most the opponent's paddle moves per step
)

// Vertical speeds, in pixels per step, as the Atari's few fixed angles:
// a serve leaves at one of serveSpeedsY, and a return at the one of
// hitSpeedsY that the quarter of the paddle it strikes gives (from the
// top quarter, steepest upward): the edges send it steeper than the
// opponent can follow, the middle back nearly level.
var (
	serveSpeedsY = [...]float32{-2, -1, 1, 2}
	hitSpeedsY   = [...]float32{-3, -1, 1, 3}
)

// A Game is one Pong match at a time: the ball, the two paddles, the
// score and the generator of its random numbers.
type Game struct {
	ball, vel       mgl32.Vec2 // the ball's center and velocity
	agent, opponent mgl32.Vec2 // the paddles' centers
	aim             float32    // where the opponent keeps the ball: its paddle's center + aim
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

// Reset starts a new episode: 0–0, the paddles centered, the ball served.
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
	dy := mgl32.Clamp(g.ball.Y()+g.aim-g.opponent.Y(), -opponentSpeed, opponentSpeed)
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

// serve centers the paddles and puts the ball in the center, leaving
// toward a random side at one of serveSpeedsY drawn at random.
func (g *Game) serve() {
	mid := float32(Top+Bottom) / 2
	g.agent[1], g.opponent[1] = mid, mid
	g.ball = mgl32.Vec2{Width / 2, mid}
	dir := float32(1)
	if g.rng.Uint64()&1 == 0 {
		dir = -1
	}
	g.vel = mgl32.Vec2{dir * ballSpeedX, serveSpeedsY[g.rng.Uint64()%uint64(len(serveSpeedsY))]}
	g.aimAnew()
}

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
// paddle. The return is faster (speedUp, up to maxSpeedX) and leaves at
// the vertical speed of hitSpeedsY that the quarter of the paddle struck
// gives: an agent that strikes with its paddle's edge sends the ball
// steeper than the opponent can follow.
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
	quarter := min(int((offset/reach+1)*2), len(hitSpeedsY)-1)
	g.vel[1] = hitSpeedsY[quarter]
	if g.vel.X() < 0 {
		g.aimAnew()
	}
}

// aimAnew draws the quarter of its paddle the opponent means to return
// the ball with, so that its returns take every angle.
func (g *Game) aimAnew() {
	const reach = PaddleHeight/2 + BallHeight/2
	g.aim = reach * (float32(g.rng.Uint64()%4)/2 - 0.75)
}
