package bench

import (
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writeCharts draws, for every workload measured at two sizes or more,
// its median rate against size with one line per implementation and
// device, as <dir>/<workload>.png, and returns the paths.
func (rep *Report) writeCharts(dir string) ([]string, error) {
	var order []string
	byWorkload := map[string][]*Result{}
	for _, r := range rep.Results {
		if r.Value == nil {
			continue
		}
		if _, ok := byWorkload[r.Workload]; !ok {
			order = append(order, r.Workload)
		}
		byWorkload[r.Workload] = append(byWorkload[r.Workload], r)
	}
	var paths []string
	for _, name := range order {
		rs := byWorkload[name]
		p, err := chart(rs)
		if err != nil {
			return paths, err
		}
		if p == nil {
			continue
		}
		path := filepath.Join(dir, name+".png")
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// chart plots results of one workload, or returns nil when they cover
// fewer than two sizes.
func chart(rs []*Result) (*plot.Plot, error) {
	var ticks []plot.Tick
	var lines []string
	points := map[string]plotter.XYs{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == r.X }) {
			ticks = append(ticks, plot.Tick{Value: r.X, Label: r.Size})
		}
		line := r.Impl + " " + r.Device
		if r.DeviceName != "" {
			line += " (" + r.DeviceName + ")"
		}
		if _, ok := points[line]; !ok {
			lines = append(lines, line)
		}
		points[line] = append(points[line], plotter.XY{X: r.X, Y: r.Value.Median})
		lo, hi = min(lo, r.Value.Median), max(hi, r.Value.Median)
	}
	if len(ticks) < 2 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = rs[0].Family
	p.X.Label.Text = "size"
	p.Y.Label.Text = rs[0].Unit + " (median over rounds)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Legend.Top = true
	p.Legend.Left = true
	var args []any
	for _, l := range lines {
		xys := points[l]
		slices.SortFunc(xys, func(a, b plotter.XY) int { return int(math.Copysign(1, a.X-b.X)) })
		args = append(args, l, xys)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	// Room above the lines for the legend, one row per line.
	rows := float64(len(lines))
	if lo > 0 && hi/lo > 10 {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = lo/2, hi*math.Pow(hi/lo, 0.12*rows)
	} else {
		p.Y.Min, p.Y.Max = 0, hi*(1+0.12*rows)
	}
	return p, nil
}
