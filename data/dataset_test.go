package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/mnist"
	"github.com/tessera-ml/tessera/tensor"
)

func TestNewInMemoryErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols []Column
		kind error
		says string
	}{
		{"no column", nil, tensor.ErrArgument, "at least one column"},
		{"mismatched lengths", []Column{Col(make([]float32, 12), 4, 3), Col(make([]int32, 5))}, tensor.ErrShape,
			"mismatched lengths: column 0 has 4 examples but column 1 has 5 (shapes [4 3] and [5])"},
		{"shape not filled", []Column{Col(make([]float32, 11), 4, 3)}, tensor.ErrShape, "holds 11 values, which do not fill its shape [4 3]"},
		{"negative size", []Column{Col(make([]float32, 0), -1, 0)}, tensor.ErrShape, "no negative size"},
		{"empty", []Column{Col([]float32{}), Col([]int32{})}, tensor.ErrArgument, "empty dataset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewInMemory(tc.cols...)
			var te *tensor.Error
			if d != nil || !errors.As(err, &te) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a *tensor.Error wrapping %v that says %q", err, tc.kind, tc.says)
			}
		})
	}
	if _, err := FromTensors(tensor.Scalar(1, tensor.Float32, tensor.CPU)); !errors.Is(err, tensor.ErrShape) {
		t.Errorf("FromTensors of a 0-d tensor: %v, want ErrShape", err)
	}
}

// FromTensors batches tensors of every dtype, with the shapes of their
// examples, and views (a transpose) by their values.
func TestFromTensors(t *testing.T) {
	x := tensor.New([]float32{0, 1, 2, 3, 4, 5}, 2, 3).T() // [3 2]: rows (0 3) (1 4) (2 5)
	y := tensor.New([]float64{10, 11, 12})
	m := tensor.New([]bool{true, false, true})
	k := tensor.New([]int32{7, 8, 9, 10, 11, 12}, 3, 1, 2)
	d, err := FromTensors(x, y, m, k)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{tensor.Float32, []int{2}}, {tensor.Float64, []int{}}, {tensor.Bool, []int{}}, {tensor.Int32, []int{1, 2}}}
	if d.Len() != 3 || len(d.Fields()) != 4 {
		t.Fatalf("Len %d, fields %v", d.Len(), d.Fields())
	}
	for i, f := range d.Fields() {
		if f.DType != want[i].DType || !slices.Equal(f.Shape, want[i].Shape) {
			t.Errorf("field %d is %v %v, want %v %v", i, f.DType, f.Shape, want[i].DType, want[i].Shape)
		}
	}
	l := newLoader(t, d, Config{BatchSize: 2})
	b, _ := l.Next()
	defer b.Release()
	if got := b.Tensors[0].Float32s(); !slices.Equal(got, []float32{0, 3, 1, 4}) {
		t.Errorf("x batch %v", got)
	}
	if got := b.Tensors[1].Float64s(); !slices.Equal(got, []float64{10, 11}) {
		t.Errorf("y batch %v", got)
	}
	if got := b.Tensors[2].Bools(); !slices.Equal(got, []bool{true, false}) {
		t.Errorf("mask batch %v", got)
	}
	if got, shape := b.Tensors[3].Int32s(), b.Tensors[3].Shape(); !slices.Equal(got, []int32{7, 8, 9, 10}) || !slices.Equal(shape, []int{2, 1, 2}) {
		t.Errorf("int batch %v of shape %v", got, shape)
	}
}

// tinyMNIST writes a training set of 7 and a test set of 3 images to a
// folder and returns it with the training set.
func tinyMNIST(t *testing.T) (string, *mnist.Set) {
	t.Helper()
	train := &mnist.Set{Pixels: make([]float32, 7*mnist.ImageSize), Labels: []int32{3, 1, 4, 1, 5, 9, 2}}
	for i := range train.Pixels {
		train.Pixels[i] = float32((i*7)%256) / 255
	}
	test := &mnist.Set{Pixels: train.Pixels[:3*mnist.ImageSize], Labels: []int32{6, 5, 3}}
	dir := t.TempDir()
	if err := mnist.WriteDir(dir, train, test); err != nil {
		t.Fatal(err)
	}
	return dir, train
}

func TestMNISTThroughTheLoader(t *testing.T) {
	dir, want := tinyMNIST(t)
	train, test, err := LoadMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 7 || test.Len() != 3 {
		t.Fatalf("%d training and %d test images, want 7 and 3", train.Len(), test.Len())
	}
	l := newLoader(t, train, Config{BatchSize: 4, Shuffle: true, Seed: 11})
	for range 2 {
		tensor.Scope(func() {
			b, _ := l.Next()
			px, lb := b.Tensors[0], b.Tensors[1]
			if !slices.Equal(px.Shape(), []int{len(b.Indices), 784}) || !slices.Equal(lb.Shape(), []int{len(b.Indices)}) {
				t.Fatalf("batch shapes %v and %v", px.Shape(), lb.Shape())
			}
			p, y := px.Float32s(), lb.Int32s()
			for k, i := range b.Indices {
				if y[k] != want.Labels[i] || !slices.Equal(p[k*784:(k+1)*784], want.Pixels[i*784:(i+1)*784]) {
					t.Fatalf("batch example %d is not image %d", k, i)
				}
			}
		})
	}
}

func TestMNISTMissingOrCorrupt(t *testing.T) {
	dir, _ := tinyMNIST(t)
	labels := filepath.Join(dir, mnist.TrainLabelsFile)
	b, err := os.ReadFile(labels)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, b[:len(b)-9], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadMNIST(dir); !errors.Is(err, mnist.ErrFormat) || !strings.Contains(err.Error(), labels) {
		t.Errorf("a truncated labels file: %v, want mnist.ErrFormat naming %s", err, labels)
	}
	empty := t.TempDir()
	if _, _, err := LoadMNIST(empty); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), mnist.TrainImagesFile) {
		t.Errorf("an empty folder: %v, want fs.ErrNotExist naming %s", err, mnist.TrainImagesFile)
	}
}

// The real MNIST (the GoMNIST module's files) through a shuffling loader.
func TestMNISTRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 55 MB of MNIST")
	}
	train, test, err := LoadMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 {
		t.Fatalf("%d training and %d test images, want 60000 and 10000", train.Len(), test.Len())
	}
	l := newLoader(t, train, Config{BatchSize: 100, Shuffle: true, Seed: 1, DropLast: true})
	if l.BatchesPerEpoch() != 600 {
		t.Fatalf("%d batches per epoch, want 600", l.BatchesPerEpoch())
	}
	tensor.Scope(func() {
		b, _ := l.Next()
		counts := b.Tensors[1].Cast(tensor.Float32).Sum().Item()
		if mean := b.Tensors[0].Mean().Item(); mean < 0.05 || mean > 0.25 || counts < 100 {
			t.Errorf("first batch: mean pixel %v, label sum %v", mean, counts)
		}
	})
}
