package data

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
)

// A Field describes one part of every example of a Dataset: its dtype
// and the shape of one example's part (nil for a scalar, such as a
// label). A batch of n examples holds it as a tensor of shape
// [n, Shape...].
type Field struct {
	DType tensor.DType
	Shape []int
}

// size returns the number of elements of one example's part.
func (f Field) size() int {
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	return n
}

// A Dataset is what a Loader batches: Len examples, numbered from 0,
// each made of the fields Fields describes.
//
// Gather writes the part of field f of the examples idx, one after
// another in row-major order, into dst: a []float32, []float64, []int32
// or []bool (as the field's dtype) of len(idx) times the field's size.
// A Loader calls it from its producer goroutine; Loaders sharing a
// dataset call it concurrently, so Gather must only read the dataset (as
// every dataset of this package does).
type Dataset interface {
	Len() int
	Fields() []Field
	Gather(f int, idx []int, dst any)
}

// A Column is one field of an InMemory dataset: host values of one dtype
// with the examples along dimension 0.
type Column struct {
	data  any // []float32, []float64, []int32 or []bool
	dtype tensor.DType
	shape []int // [examples, example shape...]
	len   int   // len(data)
}

// Col returns a column over data (not copied) of the given shape, whose
// first dimension counts the examples: Col(pixels, n, 784) has n
// examples of 784 values; Col(labels, n) has n scalars. With no shape,
// each element is one example. NewInMemory checks that the shape fits.
func Col[T tensor.Element](data []T, shape ...int) Column {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	return Column{data: data, dtype: dtypeOf[T](), shape: slices.Clone(shape), len: len(data)}
}

// dtypeOf returns the tensor dtype of the Go type T.
func dtypeOf[T tensor.Element]() tensor.DType {
	switch any(*new(T)).(type) {
	case float64:
		return tensor.Float64
	case int32:
		return tensor.Int32
	case bool:
		return tensor.Bool
	}
	return tensor.Float32
}

// InMemory is a Dataset of columns held in host memory, indexed along
// dimension 0: inputs and targets, MNIST's pixels and labels.
type InMemory struct {
	n      int
	cols   []Column
	fields []Field
}

// NewInMemory returns a dataset of the given columns. It returns a
// *tensor.Error wrapping ErrArgument when there is no column or no
// example, and ErrShape when a column's data do not fill its shape or
// the columns count different numbers of examples.
func NewInMemory(cols ...Column) (*InMemory, error) {
	if len(cols) == 0 {
		return nil, argErr("NewInMemory", tensor.ErrArgument, "a dataset needs at least one column")
	}
	d := &InMemory{cols: cols}
	for i, c := range cols {
		if len(c.shape) == 0 || slices.ContainsFunc(c.shape, func(n int) bool { return n < 0 }) {
			return nil, argErr("NewInMemory", tensor.ErrShape, "column %d has shape %v; want [examples, ...] with no negative size", i, c.shape)
		}
		f := Field{DType: c.dtype, Shape: slices.Clone(c.shape[1:])}
		if c.shape[0]*f.size() != c.len {
			return nil, argErr("NewInMemory", tensor.ErrShape, "column %d holds %d values, which do not fill its shape %v", i, c.len, c.shape)
		}
		if c.shape[0] != cols[0].shape[0] {
			return nil, argErr("NewInMemory", tensor.ErrShape, "mismatched lengths: column 0 has %d examples but column %d has %d (shapes %v and %v)",
				cols[0].shape[0], i, c.shape[0], cols[0].shape, c.shape)
		}
		d.fields = append(d.fields, f)
	}
	d.n = cols[0].shape[0]
	if d.n == 0 {
		return nil, argErr("NewInMemory", tensor.ErrArgument, "empty dataset: the columns (shapes %v, ...) have no examples", cols[0].shape)
	}
	return d, nil
}

// FromTensors returns a dataset of the tensors' values, copied to the
// host once, with the examples along dimension 0 of each (inputs and
// targets, say). Errors are those of NewInMemory, and an ErrShape error
// for a 0-d tensor.
func FromTensors(ts ...*tensor.Tensor) (*InMemory, error) {
	cols := make([]Column, len(ts))
	for i, t := range ts {
		if t.Dim() == 0 {
			return nil, argErr("FromTensors", tensor.ErrShape, "tensor %d is 0-d; examples are indexed along dimension 0", i)
		}
		var c Column
		switch t.DType() {
		case tensor.Float32:
			c = Col(t.Float32s(), t.Shape()...)
		case tensor.Float64:
			c = Col(t.Float64s(), t.Shape()...)
		case tensor.Int32:
			c = Col(t.Int32s(), t.Shape()...)
		default:
			c = Col(t.Bools(), t.Shape()...)
		}
		cols[i] = c
	}
	return NewInMemory(cols...)
}

// Len returns the number of examples.
func (d *InMemory) Len() int { return d.n }

// Fields returns the fields, one per column.
func (d *InMemory) Fields() []Field { return d.fields }

// Gather copies the rows idx of column f into dst; see Dataset.
func (d *InMemory) Gather(f int, idx []int, dst any) {
	row := d.fields[f].size()
	switch src := d.cols[f].data.(type) {
	case []float32:
		gatherRows(src, row, idx, dst.([]float32))
	case []float64:
		gatherRows(src, row, idx, dst.([]float64))
	case []int32:
		gatherRows(src, row, idx, dst.([]int32))
	case []bool:
		gatherRows(src, row, idx, dst.([]bool))
	default:
		panic(fmt.Sprintf("data: column %d holds %T", f, src))
	}
}

// gatherRows copies rows idx, of row elements each, of src into dst.
func gatherRows[T any](src []T, row int, idx []int, dst []T) {
	for k, i := range idx {
		copy(dst[k*row:(k+1)*row], src[i*row:(i+1)*row])
	}
}

// MNIST returns the MNIST set s as a dataset of two fields: the pixels,
// float32 [784] in [0, 1], and the label, an int32 scalar 0–9. It shares
// s's slices.
func MNIST(s *mnist.Set) (*InMemory, error) {
	return NewInMemory(Col(s.Pixels, s.Len(), mnist.ImageSize), Col(s.Labels, s.Len()))
}

// LoadMNIST reads the MNIST training and test sets from the four files
// in dir, or from mnist.Dir() (the GoMNIST module's data, or
// $TESSERA_MNIST_DIR) when dir is "", as datasets of MNIST's fields. A
// missing or corrupt file is an error naming it (wrapping fs.ErrNotExist
// or mnist.ErrFormat).
func LoadMNIST(dir string) (train, test *InMemory, err error) {
	if dir == "" {
		if dir, err = mnist.Dir(); err != nil {
			return nil, nil, err
		}
	}
	tr, te, err := mnist.LoadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	if train, err = MNIST(tr); err != nil {
		return nil, nil, err
	}
	if test, err = MNIST(te); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
