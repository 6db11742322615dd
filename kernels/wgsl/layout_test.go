package wgsl

import (
	"math"
	"testing"
)

// TestCheckLayout: an empty layout is bindable whatever its other
// extents and strides (FuzzCreation found Full of [1 0 2 2⁶²-1] refused
// on the GPU, FuzzViews a Reshape to [0 2⁶³-1 2]),
// and huge extents or strides are refused without overflowing.
func TestCheckLayout(t *testing.T) {
	for _, c := range []struct {
		l  Layout
		ok bool
	}{
		{Layout{Shape: []int{1, 0, 2, 1<<62 - 1}, Strides: []int{math.MaxInt - 1, math.MaxInt - 1, 1<<62 - 1, 1}}, true},
		{Layout{Shape: []int{0}, Strides: []int{1}, Offset: 5}, true},
		{Layout{Shape: []int{0, math.MaxInt, 2}, Strides: []int{-2, 2, 1}}, true}, // FuzzViews: wrapped strides of an empty reshape
		{Layout{Shape: []int{3, 4}, Strides: []int{4, 1}}, true},
		{Layout{Shape: []int{1 << 31}, Strides: []int{0}}, false},
		{Layout{Shape: []int{2, 3}, Strides: []int{math.MaxInt / 2, 1}}, false},
		{Layout{Shape: []int{1 << 30, 1 << 30}, Strides: []int{1 << 30, 1}}, false},
		{Layout{Shape: []int{2}, Strides: []int{1 << 31}, Offset: 1 << 31}, false},
		{Layout{Shape: []int{2}, Strides: []int{-1}}, false},
		{Layout{Shape: []int{-1}, Strides: []int{1}}, false},
	} {
		if err := checkLayout(c.l, "x"); (err == nil) != c.ok {
			t.Errorf("checkLayout(%+v) = %v, want ok %v", c.l, err, c.ok)
		}
	}
}
