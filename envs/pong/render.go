package pong

import (
	"fmt"

	"github.com/tessera-ml/tessera/tensor"
)

// Red-channel values of the Atari Pong palette: what pg-pong's
// preprocessing sees of each object.
const (
	Background  = 144 // the court's brown (144, 72, 17)
	Background2 = 109 // the second background color pg-pong erases (unused here)
	WallColor   = 236 // the walls and the ball, white (236, 236, 236)
	AgentColor  = 92  // the agent's green paddle (92, 186, 92)
	OppColor    = 213 // the opponent's orange paddle (213, 130, 74)
)

// FrameSize is the number of bytes of a Render frame, Height×Width, and
// ObsSize that of a preprocessed 80×80 observation.
const (
	FrameSize = Height * Width
	ObsSide   = 80
	ObsSize   = ObsSide * ObsSide
)

// Render draws the screen into dst (FrameSize bytes, row-major, reused
// when its capacity suffices) and returns it: the red channel of the
// Atari's 210×160 RGB frame, pg-pong's I[:, :, 0]. The walls, the
// paddles and the ball are drawn at their pixel positions rounded down,
// clipped to the screen; the scores, above the court, are not drawn.
func (g *Game) Render(dst []uint8) []uint8 {
	if cap(dst) < FrameSize {
		dst = make([]uint8, FrameSize)
	}
	dst = dst[:FrameSize]
	for i := range dst {
		dst[i] = Background
	}
	fill(dst, 0, Width, Top-10, Top, WallColor)
	fill(dst, 0, Width, Bottom, Height, WallColor)
	for _, p := range []struct {
		x, y, w, h float32
		color      uint8
	}{
		{g.opponent.X(), g.opponent.Y(), PaddleWidth, PaddleHeight, OppColor},
		{g.agent.X(), g.agent.Y(), PaddleWidth, PaddleHeight, AgentColor},
		{g.ball.X(), g.ball.Y(), BallWidth, BallHeight, WallColor},
	} {
		x0, y0 := floor(p.x-p.w/2), floor(p.y-p.h/2)
		fill(dst, x0, x0+int(p.w), y0, y0+int(p.h), p.color)
	}
	return dst
}

// floor rounds v down to an int.
func floor(v float32) int {
	i := int(v)
	if float32(i) > v {
		i--
	}
	return i
}

// fill paints the rectangle [x0, x1)×[y0, y1), clipped to the screen.
func fill(dst []uint8, x0, x1, y0, y1 int, c uint8) {
	x0, x1 = max(x0, 0), min(x1, Width)
	y0, y1 = max(y0, 0), min(y1, Height)
	for y := y0; y < y1; y++ {
		row := dst[y*Width:]
		for x := x0; x < x1; x++ {
			row[x] = c
		}
	}
}

// Preprocess is pg-pong's prepro: it crops the court (rows 35–194), keeps
// every second row and column, erases the two background colors and sets
// every other pixel to 1, writing the 80×80 result, row-major, into dst
// (ObsSize floats, reused when its capacity suffices). It panics with a
// *tensor.Error wrapping ErrShape unless frame has FrameSize bytes.
func Preprocess(frame []uint8, dst []float32) []float32 {
	if len(frame) != FrameSize {
		panic(&tensor.Error{Op: "pong.Preprocess", Err: tensor.ErrShape,
			Detail: fmt.Sprintf("a frame of %d bytes; want %d×%d = %d", len(frame), Height, Width, FrameSize)})
	}
	if cap(dst) < ObsSize {
		dst = make([]float32, ObsSize)
	}
	dst = dst[:ObsSize]
	for r := range ObsSide {
		row := frame[(35+2*r)*Width:]
		for c := range ObsSide {
			v := float32(0)
			if p := row[2*c]; p != Background && p != Background2 {
				v = 1
			}
			dst[r*ObsSide+c] = v
		}
	}
	return dst
}

// An Env is a Game seen as pg-pong sees it: each step's observation is
// the difference of the preprocessed frame after it and the one before
// (cur_x - prev_x), an 80×80 float32 frame of -1, 0 and 1 that shows
// where things move.
type Env struct {
	*Game
	frame     []uint8
	prev, cur []float32
}

// NewEnv returns an environment over New(seed).
func NewEnv(seed uint64) *Env {
	e := &Env{Game: New(seed)}
	e.Reset()
	return e
}

// Reset starts a new episode and returns its first observation: zeros,
// as pg-pong's x when there is no previous frame.
func (e *Env) Reset() []float32 {
	e.Game.Reset()
	e.frame = e.Render(e.frame)
	e.prev = Preprocess(e.frame, e.prev)
	return make([]float32, ObsSize)
}

// Step plays a and returns the difference frame it produced (a new
// slice, ObsSize floats, row-major 80×80), the reward and whether the
// episode is over. It panics as Game.Step does.
func (e *Env) Step(a Action) (obs []float32, reward float32, done bool) {
	reward = e.Game.Step(a)
	e.frame = e.Render(e.frame)
	e.cur = Preprocess(e.frame, e.cur)
	obs = make([]float32, ObsSize)
	for i, v := range e.cur {
		obs[i] = v - e.prev[i]
	}
	e.prev, e.cur = e.cur, e.prev
	return obs, reward, e.Done()
}
