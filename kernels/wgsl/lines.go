package wgsl

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/layout"
)

// lines is a view's decomposition into lines along one dimension, as
// cpu.newLineIter makes it: the positions off dim (coalesced across the
// operands), the length of the lines and each operand's stride along dim.
type lines struct {
	shape   []int   // coalesced positions off dim
	strides [][]int // per operand, over shape
	nLines  int
	length  int
	dstep   []int // per operand stride along dim
	offs    []int // per operand offset
}

// Extent checks of planLines: the other operands' extents must equal the
// first operand's off dim (offDim), everywhere (allDims), or only their
// ranks must match (ranksOnly: they are addressed by strides alone).
const (
	offDim = iota
	allDims
	ranksOnly
)

// planLines validates the operands (see the checks above) and plans their
// lines along dim, over the first operand's shape. A 0-d first operand
// counts as shape [1]. With noMerge the positions keep every dimension
// (size-1 ones included), so coordinates stay those of the first operand.
func planLines(what string, ls []Layout, dim int, check int, noMerge bool) (lines, error) {
	for k, l := range ls {
		if err := checkLayout(l, fmt.Sprintf("%s operand %d", what, k)); err != nil {
			return lines{}, err
		}
	}
	if len(ls[0].Shape) == 0 {
		ls = append([]Layout(nil), ls...)
		for k := range ls {
			if len(ls[k].Shape) != 0 {
				return lines{}, fmt.Errorf("wgsl: %s: operand ranks differ", what)
			}
			ls[k] = Layout{Shape: []int{1}, Strides: []int{0}, Offset: ls[k].Offset}
		}
		dim = 0
	}
	rank := len(ls[0].Shape)
	if dim < 0 || dim >= rank {
		return lines{}, fmt.Errorf("wgsl: %s: dim %d out of range for rank %d", what, dim, rank)
	}
	outer := append([]int(nil), ls[0].Shape...)
	outer[dim] = 1
	li := lines{length: ls[0].Shape[dim]}
	var strides [][]int
	for k, l := range ls {
		if len(l.Shape) != rank {
			return lines{}, fmt.Errorf("wgsl: %s: operand %d has rank %d, want %d", what, k, len(l.Shape), rank)
		}
		for d := range l.Shape {
			if l.Shape[d] != ls[0].Shape[d] && (check == allDims || check == offDim && d != dim) {
				return lines{}, fmt.Errorf("wgsl: %s: operand %d has shape %v, want %v", what, k, l.Shape, ls[0].Shape)
			}
		}
		strides = append(strides, l.Strides)
		li.dstep = append(li.dstep, l.Strides[dim])
		li.offs = append(li.offs, l.Offset)
	}
	if noMerge {
		li.shape, li.strides = outer, strides
	} else {
		li.shape, li.strides = coalesce(outer, strides)
	}
	li.nLines = layout.Numel(outer)
	if len(li.shape) > MaxRank {
		return lines{}, fmt.Errorf("wgsl: %s: more than %d dimensions after coalescing", what, MaxRank)
	}
	return li, nil
}

// sideBySide reports whether neighbouring lines of operand k are closer
// in memory than neighbouring elements of one line.
func (li lines) sideBySide(k int) bool {
	return li.nLines > 1 && li.strides[k][len(li.shape)-1] < li.dstep[k]
}
