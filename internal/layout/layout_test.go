package layout

import (
	"slices"
	"testing"
)

func TestNumelAndStrides(t *testing.T) {
	cases := []struct {
		shape   []int
		n       int
		strides []int
	}{
		{nil, 1, []int{}},
		{[]int{7}, 7, []int{1}},
		{[]int{2, 3, 4}, 24, []int{12, 4, 1}},
		{[]int{2, 0, 3}, 0, []int{3, 3, 1}}, // size 0 counts as 1 in the strides
	}
	for _, c := range cases {
		if n := Numel(c.shape); n != c.n {
			t.Errorf("Numel(%v) = %d, want %d", c.shape, n, c.n)
		}
		if s := ContiguousStrides(c.shape); !slices.Equal(s, c.strides) {
			t.Errorf("ContiguousStrides(%v) = %v, want %v", c.shape, s, c.strides)
		}
		if !IsContiguous(c.shape, ContiguousStrides(c.shape)) {
			t.Errorf("the contiguous strides of %v are not contiguous", c.shape)
		}
	}
}

func TestIsContiguous(t *testing.T) {
	cases := []struct {
		shape, strides []int
		want           bool
	}{
		{[]int{2, 3}, []int{3, 1}, true},
		{[]int{2, 3}, []int{1, 2}, false}, // transposed
		{[]int{2, 3}, []int{0, 1}, false}, // broadcast
		{[]int{1, 3}, []int{99, 1}, true}, // a size-1 dimension's stride is free
		{[]int{2, 0}, []int{7, 7}, true},  // empty
		{[]int{2, 3}, []int{4, 1}, false}, // a gap between rows
	}
	for _, c := range cases {
		if got := IsContiguous(c.shape, c.strides); got != c.want {
			t.Errorf("IsContiguous(%v, %v) = %v, want %v", c.shape, c.strides, got, c.want)
		}
	}
}

// own is a leaf's layout type: the generic functions accept it.
type own struct {
	Shape   []int
	Strides []int
	Offset  int
}

func TestPromote0D(t *testing.T) {
	s := own{Offset: 5}
	v := own{Shape: []int{4}, Strides: []int{2}, Offset: 1}
	a, b, dim := Promote0D(s, v, 3)
	if !slices.Equal(a.Shape, []int{1}) || !slices.Equal(a.Strides, []int{0}) || a.Offset != 5 || dim != 0 {
		t.Errorf("Promote0D of a 0-d operand: %+v, dim %d", a, dim)
	}
	if !slices.Equal(b.Shape, v.Shape) || b.Offset != 1 {
		t.Errorf("Promote0D changed the 1-D operand: %+v", b)
	}
	m := own{Shape: []int{2, 3}, Strides: []int{3, 1}}
	if a, b, dim := Promote0D(m, v, 1); dim != 1 || !slices.Equal(a.Shape, m.Shape) || !slices.Equal(b.Shape, v.Shape) {
		t.Errorf("Promote0D of non-0-d operands changed them: %+v %+v %d", a, b, dim)
	}
}
