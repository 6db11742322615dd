package pong

import (
	"errors"
	"testing"

	"github.com/tessera-ml/tessera/tensor"
)

func TestRenderAndPreprocessAtTheServe(t *testing.T) {
	g := New(1)
	frame := g.Render(nil)
	if len(frame) != Height*Width {
		t.Fatalf("frame of %d bytes, want %d×%d", len(frame), Height, Width)
	}
	colors := map[uint8]int{}
	for _, v := range frame {
		colors[v]++
	}
	// Walls 10+16 rows, paddles 16×4 each, ball 4×2.
	want := map[uint8]int{WallColor: 26*Width + 8, OppColor: 64, AgentColor: 64, Background: FrameSize - 26*Width - 8 - 128}
	for c, n := range want {
		if colors[c] != n {
			t.Errorf("%d pixels of color %d, want %d (colors %v)", colors[c], c, n, colors)
		}
	}
	if len(colors) != len(want) {
		t.Errorf("colors %v, want only %v", colors, want)
	}
	ball, _ := g.Ball()
	if px := frame[int(ball.Y())*Width+int(ball.X())]; px != WallColor {
		t.Errorf("pixel under the ball's center is %d", px)
	}
	obs := Preprocess(frame, nil)
	if len(obs) != ObsSide*ObsSide {
		t.Fatalf("observation of %d values, want 80×80", len(obs))
	}
	ones := 0
	for _, v := range obs {
		switch v {
		case 1:
			ones++
		case 0:
		default:
			t.Fatalf("preprocessed value %v, want 0 or 1", v)
		}
	}
	// Each paddle is 8 sampled rows × 2 sampled columns, the ball 2 × 1.
	if ones != 16+16+2 {
		t.Errorf("%d ones in the observation, want 34", ones)
	}
	// The ball's rows 112–115 and columns 79–80 sample as rows 39–40, column 40.
	if obs[39*ObsSide+40] != 1 || obs[40*ObsSide+40] != 1 || obs[41*ObsSide+40] != 0 {
		t.Error("the ball is not where the crop and downsampling put it")
	}
}

func TestPreprocessErasesBothBackgrounds(t *testing.T) {
	frame := make([]uint8, FrameSize)
	for i := range frame {
		frame[i] = Background2
	}
	frame[35*Width+0] = Background
	frame[37*Width+2] = 1    // any other color is an object
	frame[34*Width+4] = 200  // row 34 is cropped away
	frame[195*Width+6] = 200 // so is row 195
	frame[36*Width+8] = 200  // odd columns and even rows are skipped
	obs := Preprocess(frame, make([]float32, 3, ObsSize))
	for i, v := range obs {
		if want := float32(0); i == 1*ObsSide+1 {
			if v != 1 {
				t.Errorf("the object at row 37, column 2 is %v", v)
			}
		} else if v != want {
			t.Errorf("observation %d is %v, want 0", i, v)
		}
	}
	if err := tensor.Catch(func() { Preprocess(frame[:100], nil) }); !errors.Is(err, tensor.ErrShape) {
		t.Errorf("Preprocess of 100 bytes: %v, want ErrShape", err)
	}
}

// Every observation is the difference of the preprocessed frames after
// and before the step: values -1, 0 and 1, zeros after Reset.
func TestEnvDifferenceFrames(t *testing.T) {
	e := NewEnv(3)
	first := e.Reset()
	for _, v := range first {
		if v != 0 {
			t.Fatal("the first observation is not zeros")
		}
	}
	p := random(3, Up, Down)
	prev := Preprocess(e.Render(nil), nil)
	moving, steps := 0, 0
	for done := false; !done && steps < 3000; steps++ {
		var obs []float32
		obs, _, done = e.Step(p(e.Game))
		cur := Preprocess(e.Render(nil), nil)
		nonzero := 0
		for i, v := range obs {
			if v != -1 && v != 0 && v != 1 {
				t.Fatalf("step %d: value %v in the difference frame", steps, v)
			}
			if v != cur[i]-prev[i] {
				t.Fatalf("step %d: difference %v at %d, want %v", steps, v, i, cur[i]-prev[i])
			}
			if v != 0 {
				nonzero++
			}
		}
		if nonzero > 0 {
			moving++
		}
		prev = cur
	}
	if moving < steps*9/10 {
		t.Errorf("only %d of %d difference frames show movement", moving, steps)
	}
}

// The observation Env computes without drawing is Preprocess(Render())
// in every state a game goes through: paddles against the walls, the
// ball leaving the screen, odd and even pixel positions.
func TestObserveIsPreprocessOfRender(t *testing.T) {
	for seed := range uint64(3) {
		g := New(seed)
		p := random(seed, Up, Down, Noop)
		got := make([]float32, ObsSize)
		var set [3]patch
		for step := 0; step < 5000 && !g.Done(); step++ {
			g.Step(p(g))
			set = g.observe(got, set)
			want := Preprocess(g.Render(nil), nil)
			for i := range want {
				if got[i] != want[i] {
					ball, _ := g.Ball()
					t.Fatalf("seed %d step %d: observation %d (row %d, column %d) is %v, want %v (ball %v, paddles %v %v)",
						seed, step, i, i/ObsSide, i%ObsSide, got[i], want[i], ball, g.Agent(), g.Opponent())
				}
			}
		}
	}
}

// Repeat(a, k) is k Steps: the same game, the rewards summed and the
// difference frames added up (they telescope), stopping at the end of
// the episode.
func TestRepeatIsStepsAddedUp(t *testing.T) {
	one, three := NewEnv(5), NewEnv(5)
	p := random(5, Up, Down)
	for done := false; !done; {
		a := p(three.Game)
		obs, reward, d := three.Repeat(a, 3)
		sum, total := make([]float32, ObsSize), float32(0)
		for k := 0; k < 3 && !one.Done(); k++ {
			o, r, _ := one.Step(a)
			for i, v := range o {
				sum[i] += v
			}
			total += r
		}
		if reward != total || d != one.Done() {
			t.Fatalf("Repeat: reward %v, done %v; three Steps: %v, %v", reward, d, total, one.Done())
		}
		for i := range obs {
			if obs[i] != sum[i] {
				t.Fatalf("Repeat's difference frame at %d is %v, the Steps' sum %v", i, obs[i], sum[i])
			}
		}
		done = d
	}
	if err := tensor.Catch(func() { three.Repeat(Up, 1) }); !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Repeat after the episode: %v, want ErrArgument", err)
	}
	three.Reset()
	if err := tensor.Catch(func() { three.Repeat(Up, 0) }); !errors.Is(err, tensor.ErrArgument) {
		t.Errorf("Repeat(Up, 0): %v, want ErrArgument", err)
	}
}
