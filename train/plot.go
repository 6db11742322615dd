package train

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tessera-ml/tessera/internal/atomicfile"
)

// History is a run's curves: the training value of every step and each
// evaluation's metrics. Checkpoints carry it, so a resumed run plots the
// whole run.
type History struct {
	Curve     string               `json:"curve"`
	Steps     []int                `json:"steps"`
	Values    []float64            `json:"values"`
	EvalSteps []int                `json:"eval_steps"`
	Evals     map[string][]float64 `json:"evals"`
	Names     []string             `json:"names"`      // metric names in order
	WithCurve map[string]bool      `json:"with_curve"` // metrics drawn with the training curve
}

func (h *History) addStep(step int, v float64) {
	h.Steps = append(h.Steps, step)
	h.Values = append(h.Values, v)
}

func (h *History) addEval(step int, ms []Metric) {
	if h.Evals == nil {
		h.Evals, h.WithCurve = map[string][]float64{}, map[string]bool{}
	}
	if len(h.EvalSteps) == 0 {
		h.Names = nil
		for _, m := range ms {
			h.Names = append(h.Names, m.Name)
			h.WithCurve[m.Name] = m.WithCurve
		}
	}
	h.EvalSteps = append(h.EvalSteps, step)
	for _, m := range ms {
		h.Evals[m.Name] = append(h.Evals[m.Name], m.Value)
	}
}

// smoothed returns the training curve averaged over windows of about a
// hundredth of the run (at least one step), as points (step+1, mean).
func (h *History) smoothed() plotter.XYs {
	w := max(1, len(h.Values)/100)
	var pts plotter.XYs
	for lo := 0; lo < len(h.Values); lo += w {
		hi := min(lo+w, len(h.Values))
		s := 0.0
		for _, v := range h.Values[lo:hi] {
			s += v
		}
		pts = append(pts, plotter.XY{X: float64(h.Steps[hi-1] + 1), Y: s / float64(hi-lo)})
	}
	return pts
}

func (h *History) evalPoints(name string) plotter.XYs {
	var pts plotter.XYs
	for i, v := range h.Evals[name] {
		pts = append(pts, plotter.XY{X: float64(h.EvalSteps[i] + 1), Y: v})
	}
	return pts
}

var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

// Plot draws the training curve (with the metrics marked WithCurve) and,
// beside it, each other metric on a panel of its own (their scales
// differ: an accuracy, an episode count, a ratio), against the step,
// into a PNG file; the panels fill rows of at most three.
func (h *History) Plot(path, title string) error {
	left := plot.New()
	left.Title.Text = title + ": training " + h.Curve
	left.X.Label.Text = "step"
	left.Y.Label.Text = h.Curve
	left.Legend.Top = true
	panels := []*plot.Plot{left}
	if err := addLine(left, "training "+h.Curve, h.smoothed(), palette[0]); err != nil {
		return err
	}
	for i, name := range h.Names {
		p := left
		if !h.WithCurve[name] {
			p = plot.New()
			p.Title.Text = title + ": " + name
			p.X.Label.Text = "step"
			p.Y.Label.Text = name
			panels = append(panels, p)
		}
		if err := addLine(p, name, h.evalPoints(name), palette[(i+1)%len(palette)]); err != nil {
			return err
		}
		if p != left {
			p.Legend = plot.NewLegend() // the panel's title names its one line
		}
	}
	cols := min(len(panels), 3)
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i, p := range panels {
		grid[i/cols] = append(grid[i/cols], p)
	}
	for len(grid[rows-1]) < cols {
		grid[rows-1] = append(grid[rows-1], nil) // plot.Align leaves a nil panel's tile empty
	}
	const w, ht = 6 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w*vg.Length(cols), ht*vg.Length(rows))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(grid, tiles, dc)
	for r, row := range grid {
		for c, p := range row {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	png := vgimg.PngCanvas{Canvas: img}
	return atomicfile.Write(path, func(w io.Writer) error { _, err := png.WriteTo(w); return err })
}

func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	p.Add(l)
	if len(pts) < 30 {
		s, err := plotter.NewScatter(pts)
		if err == nil {
			s.Color = c
			p.Add(s)
		}
	}
	p.Legend.Add(name, l)
	return nil
}
