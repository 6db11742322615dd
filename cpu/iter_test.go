package cpu

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tessera-ml/tessera/internal/layout"
)

func TestIterCoalesce(t *testing.T) {
	cases := []struct {
		name    string
		shape   []int
		ls      []Layout
		shapeC  []int
		strides [][]int
	}{
		{"contiguous merges fully", []int{2, 3, 4}, []Layout{Contiguous(2, 3, 4), Contiguous(2, 3, 4)},
			[]int{24}, [][]int{{1}, {1}}},
		{"size-1 dims drop", []int{1, 5, 1, 3}, []Layout{Contiguous(1, 5, 1, 3)}, []int{15}, [][]int{{1}}},
		{"transposed does not merge", []int{3, 4}, []Layout{Contiguous(3, 4), {Shape: []int{3, 4}, Strides: []int{1, 3}}},
			[]int{3, 4}, [][]int{{4, 1}, {1, 3}}},
		{"broadcast row merges with broadcast", []int{5, 6}, []Layout{Contiguous(5, 6), {Shape: []int{5, 6}, Strides: []int{0, 0}}},
			[]int{30}, [][]int{{1}, {0}}},
		{"broadcast column stops merging", []int{2, 5, 6}, []Layout{Contiguous(2, 5, 6), {Shape: []int{2, 5, 6}, Strides: []int{5, 1, 0}}},
			[]int{10, 6}, [][]int{{6, 1}, {1, 0}}},
		{"stepped inner keeps stride", []int{4, 3}, []Layout{{Shape: []int{4, 3}, Strides: []int{6, 2}}},
			[]int{12}, [][]int{{2}}},
		{"gap stops merging", []int{4, 3}, []Layout{{Shape: []int{4, 3}, Strides: []int{4, 1}}},
			[]int{4, 3}, [][]int{{4, 1}}},
		{"0-d is one element", []int{}, []Layout{{}}, []int{1}, [][]int{{0}}},
	}
	for _, c := range cases {
		it := newIter(c.shape, c.ls...)
		if fmt.Sprint(it.shape) != fmt.Sprint(c.shapeC) || fmt.Sprint(it.strides) != fmt.Sprint(c.strides) {
			t.Errorf("%s: shape %v strides %v, want %v %v", c.name, it.shape, it.strides, c.shapeC, c.strides)
		}
		if it.rows*it.inner != layout.Numel(c.shape) {
			t.Errorf("%s: %d rows of %d for %d elements", c.name, it.rows, it.inner, layout.Numel(c.shape))
		}
	}
	if it := newIter([]int{3, 0, 4}, Contiguous(3, 0, 4)); it.rows*it.inner != 0 {
		t.Errorf("empty shape iterates %d×%d", it.rows, it.inner)
	}
}

// TestIterVisitsOnce checks that serial and parallel runs visit every
// element exactly once, at the right offset, for shapes that coalesce
// into one long row (split inside the row), few rows, and many rows.
func TestIterVisitsOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // an odd worker count
	r := newRand(18)
	for _, shape := range [][]int{{1 << 16}, {3, 20001}, {257, 129}, {7, 33}, {}, {5, 0}} {
		for _, k := range inKinds[:3] {
			l, n := makeLayout(r, shape, k)
			for _, parallel := range []bool{false, true} {
				hits := make([]atomic.Int32, n)
				it := newIter(l.Shape, l)
				s := it.step(0)
				row := func(o []int, m int) {
					for i, p := 0, o[0]; i < m; i, p = i+1, p+s {
						hits[p].Add(1)
					}
				}
				if parallel {
					it.runParallel(row)
				} else {
					it.run(row)
				}
				want := make([]int32, n)
				forEach(l.Shape, func(idx []int) { want[at(l, idx)]++ })
				for p := range hits {
					if hits[p].Load() != want[p] {
						t.Fatalf("%v %s parallel=%v: offset %d visited %d times, want %d", shape, k, parallel, p, hits[p].Load(), want[p])
					}
				}
			}
		}
	}
}

func TestParallelForPanics(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "boom") {
			t.Fatalf("recovered %v, want the worker's panic", r)
		}
	}()
	parallelFor(2, 10, func(p, lo, hi int) {
		if p == 1 {
			panic("boom")
		}
	})
	t.Fatal("parallelFor returned normally")
}

func TestParallelForChunks(t *testing.T) {
	for _, c := range []struct{ parts, n int }{{1, 5}, {2, 5}, {3, 2}, {4, 0}, {2, 1}} {
		seen := make([]atomic.Int32, c.n)
		parallelFor(c.parts, c.n, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("parts %d n %d: %d seen %d times", c.parts, c.n, i, seen[i].Load())
			}
		}
	}
}

// TestParallelForNested runs parallelFor inside parallelFor's chunks,
// from several goroutines at once: the pool's helpers take one job at a
// time, so the inner jobs' callers must finish what no helper takes, and
// every element must be visited once, without a deadlock.
func TestParallelForNested(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const outer, inner = 4, 1000
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := make([]atomic.Int32, outer*inner)
			parallelFor(outer, outer, func(_, lo, hi int) {
				for o := lo; o < hi; o++ {
					parallelFor(3, inner, func(_, a, b int) {
						for i := a; i < b; i++ {
							seen[o*inner+i].Add(1)
						}
					})
				}
			})
			for i := range seen {
				if n := seen[i].Load(); n != 1 {
					t.Errorf("goroutine %d: element %d seen %d times", g, i, n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestIsContiguous(t *testing.T) {
	for _, c := range []struct {
		l    Layout
		want bool
	}{
		{Contiguous(2, 3), true},
		{Layout{Shape: []int{2, 1, 3}, Strides: []int{3, 99, 1}}, true},
		{Layout{Shape: []int{2, 3}, Strides: []int{1, 2}}, false},
		{Layout{Shape: []int{2, 3}, Strides: []int{6, 2}}, false},
		{Layout{}, true},
	} {
		if got := c.l.IsContiguous(); got != c.want {
			t.Errorf("%+v: IsContiguous %v, want %v", c.l, got, c.want)
		}
	}
}

// TestEmptyExtents checks that the along-dim kernels do nothing on an
// empty dim and on empty other dims.
func TestEmptyExtents(t *testing.T) {
	d := []float32{9, 9}
	CumSum(d, Contiguous(2, 0), nil, Contiguous(2, 0), 1)
	Softmax(false, d, Contiguous(0, 2), nil, Contiguous(0, 2), 1)
	ArgReduce(betterFor[float32]("max"), d, Contiguous(0, 1), []int32{}, Contiguous(0, 1), nil, Contiguous(0, 2), 1)
	if err := IndexSelect(d, Contiguous(2, 0), []float32{1, 2}, Contiguous(2, 1), 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := ScatterAdd(d, Contiguous(2, 1), 1, nil, Contiguous(2, 0), nil, Contiguous(2, 0)); err != nil {
		t.Fatal(err)
	}
	if d[0] != 9 || d[1] != 9 {
		t.Fatalf("empty kernels wrote %v", d)
	}
}
