package tensor

import "gonum.org/v1/gonum/mat"

// FromDense returns a new 2-D tensor (rows, cols) holding a copy of m's
// values, made as the options say (default: Float64 on the CPU, like
// torch.from_numpy of a float64 array, but a copy). A nil m panics with
// ErrArgument; an empty mat.Dense gives shape (0, 0).
func FromDense(m *mat.Dense, opts ...Option) *Tensor {
	if m == nil {
		fail("FromDense", ErrArgument, "the matrix is a nil *mat.Dense")
	}
	if m.IsEmpty() {
		return From([]float64{}, []int{0, 0}, opts...)
	}
	raw := m.RawMatrix()
	data := make([]float64, 0, raw.Rows*raw.Cols)
	for i := range raw.Rows {
		data = append(data, raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols]...)
	}
	return From(data, []int{raw.Rows, raw.Cols}, opts...)
}

// Dense returns a copy of the 2-D tensor t as a gonum matrix of float64
// values (read from any device and dtype; Bool reads as 0 and 1), for
// gonum's linear algebra and statistics. It panics with ErrShape when t
// is not 2-D or has no elements (gonum has no empty matrices).
func (t *Tensor) Dense() *mat.Dense {
	t.nonNil("Dense", 0)
	if t.Dim() != 2 || t.Numel() == 0 {
		fail("Dense", ErrShape, "a gonum matrix needs a non-empty 2-D tensor", t)
	}
	return mat.NewDense(t.shape[0], t.shape[1], t.Float64s())
}
