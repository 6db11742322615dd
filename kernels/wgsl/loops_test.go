package wgsl

import (
	"slices"
	"strings"
	"testing"
)

func TestSegments(t *testing.T) {
	lim := DefaultLimits()
	serial := func(seglen, _ int) int { return trips(seglen) }
	for _, c := range []struct {
		n, from, trips int
		cost           func(seglen, segs int) int
		seglen, segs   int
		fails          bool
	}{
		{100000, 13, 0, serial, 7693, 13, false}, // from fits
		{70001, 1, 0, serial, 35001, 2, false},   // the fewest that fit
		{1000, 1, 40, serial, 39, 26, false},     // searched
		{5, 9, 40, serial, 1, 5, false},          // no more segments than elements
		{1521, 1, 40, func(l, s int) int { return max(trips(l), trips(s)) }, 39, 39, false},
		{3000, 1, 40, func(l, s int) int { return max(trips(l), trips(s)) }, 0, 0, true},
	} {
		l := lim
		if c.trips > 0 {
			l.MaxLoopTrips = c.trips
		}
		seglen, segs, err := segments("test", c.n, c.from, c.cost, l)
		if (err != nil) != c.fails || seglen != c.seglen || segs != c.segs {
			t.Errorf("segments(%d from %d, %d trips) = %d, %d, %v; want %d, %d, fails %v", c.n, c.from, l.MaxLoopTrips, seglen, segs, err, c.seglen, c.segs, c.fails)
		}
	}
	if got := treeTrips(256); got != 9 {
		t.Errorf("treeTrips(256) = %d, want 9", got)
	}
}

func TestSpans(t *testing.T) {
	for _, c := range []struct {
		n, step int
		want    [][2]int
	}{
		{0, 5, [][2]int{{0, 0}}},
		{8, 4, [][2]int{{0, 4}, {4, 8}}},
		{10, 4, [][2]int{{0, 4}, {4, 8}, {8, 10}}},
		{3, 65534, [][2]int{{0, 3}}},
	} {
		if got := spans(c.n, c.step); !slices.Equal(got, c.want) {
			t.Errorf("spans(%d, %d) = %v, want %v", c.n, c.step, got, c.want)
		}
	}
}

// TestLoopPlans checks, with the default limits, which plans split: long
// lines and reductions beyond 65535 trips per invocation do, ordinary
// shapes keep their one kernel. (loops_gpu_test.go runs them.)
func TestLoopPlans(t *testing.T) {
	lim := DefaultLimits()
	expanded := Layout{Shape: []int{70001, 2048}, Strides: []int{1, 0}} // side by side: serial
	wide := Layout{Shape: []int{64, 20000000}, Strides: []int{0, 1}}    // one workgroup per output
	for _, c := range []struct {
		what    string
		plan    func() (Plan, error)
		kernels int
		scratch int64
		first   string // in the first kernel's source
	}{
		{"cumsum 70001", func() (Plan, error) {
			return CumSum(F32, LineArgs{Out: Contiguous(70001), X: Contiguous(70001), Limits: lim})
		}, 3, 4 * 9, "serial"},
		{"cumsum 64×70001", func() (Plan, error) {
			return CumSum(I32, LineArgs{Out: Contiguous(64, 70001), X: Contiguous(64, 70001), Dim: 1, Limits: lim})
		}, 3, 4 * 64 * 9, "serial"},
		{"cumsum 64×5000", func() (Plan, error) {
			return CumSum(F32, LineArgs{Out: Contiguous(64, 5000), X: Contiguous(64, 5000), Dim: 1, Limits: lim})
		}, 1, 0, "cumsum"},
		{"sum expanded", func() (Plan, error) { return Reduce("sum", F32, Contiguous(1, 2048), expanded, lim) }, 2, 4 * 2048 * 2, "serial"},
		{"max wide", func() (Plan, error) { return Reduce("max", I32, Contiguous(64, 1), wide, lim) }, 2, 4 * 64 * 2, "group"},
		{"sum 7×65", func() (Plan, error) { return Reduce("sum", F32, Contiguous(7, 1), Contiguous(7, 65), lim) }, 1, 0, "group"},
		{"argmax expanded", func() (Plan, error) { return ArgReduce("max", F32, Contiguous(1, 2048), nil, expanded, 0, lim) }, 2, 8 * 2048 * 2, "serial"},
		{"argmin wide", func() (Plan, error) { return ArgReduce("min", I32, Contiguous(64, 1), nil, wide, 1, lim) }, 2, 8 * 64 * 2, "group"},
		{"argmax 70001", func() (Plan, error) { return ArgReduce("max", F32, Contiguous(1), nil, Contiguous(70001), 0, lim) }, 2, 8 * 9, "group"},
		{"argmax 3×5000", func() (Plan, error) { return ArgReduce("max", F32, Contiguous(3, 1), nil, Contiguous(3, 5000), 1, lim) }, 1, 0, "group"},
		{"softmax 70001", func() (Plan, error) {
			return Softmax(false, LineArgs{Out: Contiguous(1, 70001), X: Contiguous(1, 70001), Dim: 1, Limits: lim})
		}, 3, 8 * 9, "max"},
		{"softmax 64×6M", func() (Plan, error) {
			return Softmax(true, LineArgs{Out: Contiguous(64, 6000000), X: Contiguous(64, 6000000), Dim: 1, Limits: lim})
		}, 3, 8 * 64 * 2, "max"},
		{"softmax 4096×1024", func() (Plan, error) {
			return Softmax(false, LineArgs{Out: Contiguous(4096, 1024), X: Contiguous(4096, 1024), Dim: 1, Limits: lim})
		}, 1, 0, "softmax (group)"},
		{"index_add 70001", func() (Plan, error) {
			return IndexAdd(F32, Contiguous(5, 2), 0, Contiguous(70001), Contiguous(70001, 2), lim)
		}, 2, 0, "scatter"},
		{"scatter_add 200003", func() (Plan, error) {
			return ScatterAdd(I32, Contiguous(2, 5), 1, Contiguous(2, 200003), Contiguous(2, 200003), lim)
		}, 4, 0, "scatter"},
		{"matmul K 2M", func() (Plan, error) {
			return MatMul(Contiguous(1, 1, 1), Contiguous(1, 1, 2000000), Contiguous(1, 2000000, 1), lim)
		}, 2, 0, "64×64"},
		{"matmul 100000 batches", func() (Plan, error) {
			return MatMul(Contiguous(100000, 2, 2), Contiguous(100000, 2, 3), Contiguous(100000, 3, 2), lim)
		}, 2, 0, "64×64"},
	} {
		p, err := c.plan()
		k := checkPlan(t, c.what, p, err, c.kernels)
		if p.Scratch != c.scratch || !strings.Contains(k.Source, c.first) {
			t.Errorf("%s: scratch %d, want %d; first kernel %q, want %q", c.what, p.Scratch, c.scratch, k.Source[:60], c.first)
		}
	}
	// Limits that no split can meet are errors, never wrong results.
	for what, f := range map[string]func(lim Limits) error{
		"cumsum": func(lim Limits) error {
			_, err := CumSum(F32, LineArgs{Out: Contiguous(3000), X: Contiguous(3000), Limits: lim})
			return err
		},
		"matmul": func(lim Limits) error {
			_, err := MatMul(Contiguous(1, 1, 1), Contiguous(1, 1, 9), Contiguous(1, 9, 1), Limits{MaxLoopTrips: 3})
			return err
		},
		"reduce": func(lim Limits) error {
			_, err := Reduce("sum", F32, Contiguous(1, 1), Contiguous(2000, 2000), Limits{MaxLoopTrips: 12})
			return err
		},
		"argreduce": func(lim Limits) error {
			_, err := ArgReduce("max", F32, Contiguous(1), nil, Contiguous(4000000), 0, Limits{MaxLoopTrips: 12})
			return err
		},
	} {
		if err := f(Limits{MaxLoopTrips: 40}); err == nil || !strings.Contains(err.Error(), "loop trip") {
			t.Errorf("%s: %v, want an error about the loop trip limit", what, err)
		}
	}
}
