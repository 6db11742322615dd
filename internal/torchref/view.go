package torchref

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/layout"
)

// ViewOp is one decoded step of a view chain. Args holds, by Kind:
//
//	transpose: [dim0, dim1]
//	slice:     [dim, start, end, step]   (0 <= start <= end <= size, step >= 1)
//	expand:    the new sizes
//	select:    [dim, index]
//	narrow:    [dim, start, length]
//	permute:   the dims
//	unsqueeze: [dim]
//
// All dims and indices in the files are already normalised (non-negative,
// in range).
type ViewOp struct {
	Kind string
	Args []int
}

// ViewOps decodes t.View.
func (t Tensor) ViewOps() ([]ViewOp, error) {
	ops := make([]ViewOp, 0, len(t.View))
	for i, step := range t.View {
		if len(step) == 0 {
			return nil, fmt.Errorf("view[%d]: empty", i)
		}
		kind, ok := step[0].(string)
		if !ok {
			return nil, fmt.Errorf("view[%d]: kind %v is not a string", i, step[0])
		}
		var args []int
		var err error
		switch kind {
		case "expand", "permute":
			if len(step) != 2 {
				return nil, fmt.Errorf("view[%d]: %s wants one list argument", i, kind)
			}
			l, ok := step[1].([]any)
			if !ok {
				return nil, fmt.Errorf("view[%d]: %s argument %v is not a list", i, kind, step[1])
			}
			args, err = toInts(l)
		case "transpose", "slice", "select", "narrow", "unsqueeze":
			want := map[string]int{"transpose": 2, "slice": 4, "select": 2, "narrow": 3, "unsqueeze": 1}[kind]
			if len(step)-1 != want {
				return nil, fmt.Errorf("view[%d]: %s wants %d arguments, got %d", i, kind, want, len(step)-1)
			}
			args, err = toInts(step[1:])
		default:
			return nil, fmt.Errorf("view[%d]: unknown kind %q", i, kind)
		}
		if err != nil {
			return nil, fmt.Errorf("view[%d]: %s: %w", i, kind, err)
		}
		ops = append(ops, ViewOp{Kind: kind, Args: args})
	}
	return ops, nil
}

// strided is a shape/strides/offset view over a flat buffer.
type strided struct {
	shape, strides []int
	offset         int
}

func (v *strided) apply(op ViewOp) error {
	nd := len(v.shape)
	dimOK := func(d int) error {
		if d < 0 || d >= nd {
			return fmt.Errorf("%s: dim %d out of range for rank %d", op.Kind, d, nd)
		}
		return nil
	}
	a := op.Args
	switch op.Kind {
	case "transpose":
		if err := dimOK(a[0]); err != nil {
			return err
		}
		if err := dimOK(a[1]); err != nil {
			return err
		}
		v.shape[a[0]], v.shape[a[1]] = v.shape[a[1]], v.shape[a[0]]
		v.strides[a[0]], v.strides[a[1]] = v.strides[a[1]], v.strides[a[0]]
	case "slice":
		d, s, e, st := a[0], a[1], a[2], a[3]
		if err := dimOK(d); err != nil {
			return err
		}
		if s < 0 || s > e || e > v.shape[d] || st < 1 {
			return fmt.Errorf("slice: [%d:%d:%d] invalid for size %d", s, e, st, v.shape[d])
		}
		v.offset += s * v.strides[d]
		v.shape[d] = (e - s + st - 1) / st
		v.strides[d] *= st
	case "expand":
		if len(a) < nd {
			return fmt.Errorf("expand: %v has fewer dims than %v", a, v.shape)
		}
		lead := len(a) - nd
		shape := make([]int, len(a))
		strides := make([]int, len(a))
		for i, s := range a {
			if i < lead {
				if s < 0 {
					return fmt.Errorf("expand: size %d for new dim", s)
				}
				shape[i], strides[i] = s, 0
				continue
			}
			old := v.shape[i-lead]
			switch {
			case s == -1 || s == old:
				shape[i], strides[i] = old, v.strides[i-lead]
			case old == 1 && s >= 0:
				shape[i], strides[i] = s, 0
			default:
				return fmt.Errorf("expand: cannot expand %v to %v", v.shape, a)
			}
		}
		v.shape, v.strides = shape, strides
	case "select":
		d, i := a[0], a[1]
		if err := dimOK(d); err != nil {
			return err
		}
		if i < 0 || i >= v.shape[d] {
			return fmt.Errorf("select: index %d out of range for size %d", i, v.shape[d])
		}
		v.offset += i * v.strides[d]
		v.shape = append(v.shape[:d:d], v.shape[d+1:]...)
		v.strides = append(v.strides[:d:d], v.strides[d+1:]...)
	case "narrow":
		d, s, l := a[0], a[1], a[2]
		if err := dimOK(d); err != nil {
			return err
		}
		if s < 0 || l < 0 || s+l > v.shape[d] {
			return fmt.Errorf("narrow: start %d length %d invalid for size %d", s, l, v.shape[d])
		}
		v.offset += s * v.strides[d]
		v.shape[d] = l
	case "permute":
		if len(a) != nd {
			return fmt.Errorf("permute: %v for rank %d", a, nd)
		}
		seen := make([]bool, nd)
		shape := make([]int, nd)
		strides := make([]int, nd)
		for i, p := range a {
			if p < 0 || p >= nd || seen[p] {
				return fmt.Errorf("permute: %v is not a permutation", a)
			}
			seen[p] = true
			shape[i], strides[i] = v.shape[p], v.strides[p]
		}
		v.shape, v.strides = shape, strides
	case "unsqueeze":
		d := a[0]
		if d < 0 || d > nd {
			return fmt.Errorf("unsqueeze: dim %d out of range for rank %d", d, nd)
		}
		v.shape = append(v.shape[:d:d], append([]int{1}, v.shape[d:]...)...)
		v.strides = append(v.strides[:d:d], append([]int{0}, v.strides[d:]...)...)
	default:
		return fmt.Errorf("unknown view kind %q", op.Kind)
	}
	return nil
}

// ViewShape returns the shape of the tensor after its View chain (Shape
// itself when there is no chain).
func (t Tensor) ViewShape() ([]int, error) {
	v, err := t.strided()
	if err != nil {
		return nil, err
	}
	return v.shape, nil
}

func (t Tensor) strided() (strided, error) {
	if len(t.Data) != t.Numel() {
		return strided{}, fmt.Errorf("torchref: shape %v wants %d values, have %d", t.Shape, t.Numel(), len(t.Data))
	}
	ops, err := t.ViewOps()
	if err != nil {
		return strided{}, err
	}
	v := strided{shape: append([]int{}, t.Shape...), strides: layout.ContiguousStrides(t.Shape)}
	for i, op := range ops {
		if err := v.apply(op); err != nil {
			return strided{}, fmt.Errorf("torchref: view[%d]: %w", i, err)
		}
	}
	return v, nil
}

// Materialize applies the View chain and returns the resulting logical
// tensor as a contiguous Tensor without a View (RequiresGrad is kept). It is
// the op's actual input, for tests that do not exercise views themselves.
func (t Tensor) Materialize() (Tensor, error) {
	v, err := t.strided()
	if err != nil {
		return Tensor{}, err
	}
	n := layout.Numel(v.shape)
	out := make([]float64, 0, n)
	if n > 0 {
		idx := make([]int, len(v.shape))
		for {
			off := v.offset
			for i, x := range idx {
				off += x * v.strides[i]
			}
			out = append(out, t.Data[off])
			d := len(idx) - 1
			for ; d >= 0; d-- {
				idx[d]++
				if idx[d] < v.shape[d] {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				break
			}
		}
	}
	return Tensor{DType: t.DType, Shape: v.shape, Data: out, RequiresGrad: t.RequiresGrad}, nil
}
