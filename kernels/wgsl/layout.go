package wgsl

import (
	"fmt"
	"strings"
)

// checkLayout validates a layout for binding: rank, matching lengths,
// non-negative extents, strides and offset, and every addressed element
// below 2^32. An empty layout addresses no element, whatever its extents.
func checkLayout(l Layout, what string) error {
	if len(l.Shape) != len(l.Strides) {
		return fmt.Errorf("wgsl: %s: %d extents but %d strides", what, len(l.Shape), len(l.Strides))
	}
	if l.Offset < 0 {
		return fmt.Errorf("wgsl: %s: negative offset %d", what, l.Offset)
	}
	// An empty layout first: its strides may have wrapped (the row-major
	// strides of [0 2^63-1 2] overflow) and address nothing anyway.
	for _, n := range l.Shape {
		if n == 0 {
			return nil
		}
	}
	for d, n := range l.Shape {
		if n < 0 || l.Strides[d] < 0 {
			return fmt.Errorf("wgsl: %s: negative extent or stride in shape %v strides %v", what, l.Shape, l.Strides)
		}
	}
	last, count := l.Offset, 1
	for d, n := range l.Shape {
		// Both bounds checked before multiplying, so nothing overflows.
		if n >= 1<<31 || l.Strides[d] >= 1<<32 && n > 1 {
			last = 1 << 32
			break
		}
		last += (n - 1) * l.Strides[d]
		count *= n
		if last >= 1<<32 || count >= 1<<31 {
			break
		}
	}
	if last >= 1<<32 || count >= 1<<31 {
		return fmt.Errorf("wgsl: %s: shape %v strides %v offset %d addresses elements beyond 2^32", what, l.Shape, l.Strides, l.Offset)
	}
	return nil
}

// sameShape reports whether a and b are equal.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// coalesce drops the size-1 dimensions of shape and merges a dimension
// into its outer neighbour when that is contiguous with it in every
// operand (strides[k] are operand k's strides over shape), as
// cpu.newIter does. Without dimensions left it returns shape [1] with
// stride 0. The result has the fewest dimensions that describe the same
// walk.
func coalesce(shape []int, strides [][]int) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if m := len(cs); m > 0 {
			merge := true
			for k := range strides {
				if cst[k][m-1] != strides[k][d]*n {
					merge = false
					break
				}
			}
			if merge {
				cs[m-1] *= n
				for k := range strides {
					cst[k][m-1] = strides[k][d]
				}
				continue
			}
		}
		cs = append(cs, n)
		for k := range strides {
			cst[k] = append(cst[k], strides[k][d])
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
		for k := range cst {
			cst[k] = []int{0}
		}
	}
	return cs, cst
}

// A walk is WGSL code that decomposes a flat row-major index over a shape
// held in a params array and accumulates, per operand, an element offset
// from that operand's strides (another params array).
type walk struct {
	Flat    string   // u32 expression of the flat index
	Shape   string   // params array of extents (outermost first)
	Rank    int      // dimensions (≥ 1)
	Vars    []string // u32 offset variables the code declares
	Inits   []string // their initial values
	Strides []string // params arrays of strides, one per variable
	// Optional: Valid names a bool variable the code declares, true when
	// every coordinate is below the matching element of params array
	// Bounds.
	Valid, Bounds string
}

// Code renders the walk as WGSL statements.
func (w walk) Code() string {
	var b strings.Builder
	for k, v := range w.Vars {
		fmt.Fprintf(&b, "\tvar %s: u32 = %s;\n", v, w.Inits[k])
	}
	if w.Valid != "" {
		fmt.Fprintf(&b, "\tvar %s = true;\n", w.Valid)
	}
	b.WriteString("\t{\n")
	fmt.Fprintf(&b, "\t\tvar rem: u32 = %s;\n", w.Flat)
	for d := w.Rank - 1; d >= 0; d-- {
		c := "rem"
		if d > 0 {
			fmt.Fprintf(&b, "\t\tlet e%d = %s;\n\t\tlet c%d = rem %% e%d;\n\t\trem = rem / e%d;\n", d, ax(w.Shape, d), d, d, d)
			c = fmt.Sprintf("c%d", d)
		}
		for k, v := range w.Vars {
			fmt.Fprintf(&b, "\t\t%s += %s * %s;\n", v, c, ax(w.Strides[k], d))
		}
		if w.Valid != "" {
			fmt.Fprintf(&b, "\t\t%s = %s && %s < %s;\n", w.Valid, w.Valid, c, ax(w.Bounds, d))
		}
	}
	b.WriteString("\t}\n")
	return b.String()
}

// vec4s returns how many vec4<u32> hold rank values (at least 1).
func vec4s(rank int) int { return max(1, (rank+3)/4) }
