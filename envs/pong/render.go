package pong

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl32"
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

	cropTop = 35 // the screen row of the observation's first row
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
	for _, o := range g.objects() {
		fill(dst, o.x0, o.x1, o.y0, o.y1, o.color)
	}
	return dst
}

// A box is an object's rectangle of screen pixels, [x0, x1)×[y0, y1).
type box struct {
	x0, x1, y0, y1 int
	color          uint8
}

// objects returns the boxes of the paddles and the ball, at their pixel
// positions rounded down.
func (g *Game) objects() [3]box {
	at := func(c mgl32.Vec2, w, h int, color uint8) box {
		x0, y0 := floor(c.X()-float32(w)/2), floor(c.Y()-float32(h)/2)
		return box{x0, x0 + w, y0, y0 + h, color}
	}
	return [3]box{
		at(g.opponent, PaddleWidth, PaddleHeight, OppColor),
		at(g.agent, PaddleWidth, PaddleHeight, AgentColor),
		at(g.ball, BallWidth, BallHeight, WallColor),
	}
}

// A patch is a rectangle of observation pixels, rows [r0, r1) and
// columns [c0, c1).
type patch struct{ r0, r1, c0, c1 int }

// observe writes Preprocess(Render()) into dst (ObsSize floats) without
// drawing the screen: only the paddles and the ball fall inside the
// crop, and the pixels of theirs that the downsampling keeps are 1. dst
// must be zero but for the patches old (what observe returned when it
// last wrote dst); observe returns the patches it set.
func (g *Game) observe(dst []float32, old [3]patch) (set [3]patch) {
	for _, p := range old {
		p.fill(dst, 0)
	}
	for i, o := range g.objects() {
		// Screen row 35+2r and column 2c become observation (r, c).
		set[i] = patch{
			max(ceilHalf(o.y0-cropTop), 0), min(ceilHalf(o.y1-cropTop), ObsSide),
			max(ceilHalf(o.x0), 0), min(ceilHalf(o.x1), ObsSide),
		}
		set[i].fill(dst, 1)
	}
	return set
}

// fill sets the pixels of p in the 80×80 frame dst to v.
func (p patch) fill(dst []float32, v float32) {
	for r := p.r0; r < p.r1; r++ {
		row := dst[r*ObsSide:]
		for c := p.c0; c < p.c1; c++ {
			row[c] = v
		}
	}
}

// ceilHalf returns ⌈v/2⌉.
func ceilHalf(v int) int {
	if v < 0 {
		return -(-v / 2)
	}
	return (v + 1) / 2
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
		row := frame[(cropTop+2*r)*Width:]
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
// where things move. Its frames are Preprocess(Render()), computed
// without drawing the screen.
type Env struct {
	*Game
	prev, cur       []float32
	prevSet, curSet [3]patch // what observe set in prev and cur
}

// NewEnv returns an environment over New(seed).
func NewEnv(seed uint64) *Env {
	e := &Env{Game: New(seed), prev: make([]float32, ObsSize), cur: make([]float32, ObsSize)}
	e.Reset()
	return e
}

// Reset starts a new episode and returns its first observation: zeros,
// as pg-pong's x when there is no previous frame.
func (e *Env) Reset() []float32 {
	e.Game.Reset()
	e.prevSet = e.observe(e.prev, e.prevSet)
	return make([]float32, ObsSize)
}

// Step plays a and returns the difference frame it produced (a new
// slice, ObsSize floats, row-major 80×80), the reward and whether the
// episode is over. It panics as Game.Step does.
func (e *Env) Step(a Action) (obs []float32, reward float32, done bool) {
	return e.Repeat(a, 1)
}

// Repeat plays a for frames steps, fewer if the episode ends first, as
// Gym's frame skipping does, and returns the difference of the frames
// after and before them (a new slice, as Step's), the sum of the rewards
// and whether the episode is over. It panics as Game.Step does, and
// with a *tensor.Error wrapping ErrArgument when frames is below 1.
func (e *Env) Repeat(a Action, frames int) (obs []float32, reward float32, done bool) {
	if frames < 1 {
		panic(&tensor.Error{Op: "pong.Env.Repeat", Err: tensor.ErrArgument, Detail: fmt.Sprintf("%d frames; want at least 1", frames)})
	}
	for k := 0; k < frames && (k == 0 || !e.Done()); k++ {
		reward += e.Game.Step(a)
	}
	e.curSet = e.observe(e.cur, e.curSet)
	// Only the patches of the two frames can differ.
	obs = make([]float32, ObsSize)
	for _, set := range [][3]patch{e.prevSet, e.curSet} {
		for _, p := range set {
			for r := p.r0; r < p.r1; r++ {
				for i := r*ObsSide + p.c0; i < r*ObsSide+p.c1; i++ {
					obs[i] = e.cur[i] - e.prev[i]
				}
			}
		}
	}
	e.prev, e.cur = e.cur, e.prev
	e.prevSet, e.curSet = e.curSet, e.prevSet
	return obs, reward, e.Done()
}
