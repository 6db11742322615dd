package tensor_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/devtest"
	"github.com/tessera-ml/tessera/tensor"
	"gonum.org/v1/gonum/mat"
)

// formatCase is one case of testdata/torch/format.json (made by
// tools/torchref/format.py): a tensor and PyTorch's repr of it.
type formatCase struct {
	Name  string   `json:"name"`
	DType string   `json:"dtype"`
	Shape []int    `json:"shape"`
	Data  []string `json:"data"`
	Repr  string   `json:"repr"`
	// GPURepr is Repr for the tensor on device gpu:0.
	GPURepr string `json:"gpu_repr"`
}

func loadFormatCases(t *testing.T) []formatCase {
	t.Helper()
	b, err := os.ReadFile("../testdata/torch/format.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []formatCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	return file.Cases
}

// build makes the case's tensor on dev.
func (c formatCase) build(t *testing.T, dev tensor.Device) *tensor.Tensor {
	t.Helper()
	vals := make([]float64, len(c.Data))
	for i, s := range c.Data {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		vals[i] = v
	}
	dt := map[string]tensor.DType{"float32": tensor.Float32, "float64": tensor.Float64, "int32": tensor.Int32, "bool": tensor.Bool}[c.DType]
	x := tensor.From(vals, c.Shape).Cast(dt)
	if dev != tensor.CPU {
		x = x.To(dev)
	}
	return x
}

// TestStringMatchesPyTorch checks that tensors print exactly as PyTorch
// 1.13 prints them: number formats, alignment, line breaks, summaries
// past 1000 elements and suffixes; on the GPU the same, with the device.
func TestStringMatchesPyTorch(t *testing.T) {
	cases := loadFormatCases(t)
	if len(cases) < 20 {
		t.Fatalf("only %d cases in format.json", len(cases))
	}
	for _, dev := range devtest.Devices(t) {
		for _, c := range cases {
			if dev != tensor.CPU && c.DType == "float64" {
				continue // float64 stays on the CPU
			}
			want := c.Repr
			if dev != tensor.CPU {
				want = strings.ReplaceAll(c.GPURepr, "gpu:0", dev.String())
			}
			if got := c.build(t, dev).String(); got != want {
				t.Errorf("%v %s:\ngot:\n%s\nwant (PyTorch):\n%s", dev, c.Name, got, want)
			}
		}
	}
}

// TestStringGradSuffixes checks the requires_grad and grad_fn suffixes.
func TestStringGradSuffixes(t *testing.T) {
	x := tensor.From([]float32{1, 2}, []int{2}).SetRequiresGrad(true)
	if got, want := x.String(), "tensor([1., 2.], requires_grad=True)"; got != want {
		t.Errorf("leaf: got %q, want %q", got, want)
	}
	y := x.Mul(x)
	if got, want := y.String(), "tensor([1., 4.], grad_fn=<MulBackward>)"; got != want {
		t.Errorf("computed: got %q, want %q", got, want)
	}
}

// TestStringReadsOnlyTheSummary checks that printing a huge expanded
// view reads only the printed edges instead of failing for memory.
func TestStringReadsOnlyTheSummary(t *testing.T) {
	x := tensor.Full([]int{1, 1}, 2.5).Expand(1<<40, 3)
	want := "tensor([[2.5000, 2.5000, 2.5000],\n        [2.5000, 2.5000, 2.5000],\n        [2.5000, 2.5000, 2.5000],\n        ...,\n" +
		"        [2.5000, 2.5000, 2.5000],\n        [2.5000, 2.5000, 2.5000],\n        [2.5000, 2.5000, 2.5000]])"
	if got := x.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestDenseRoundTrip converts to and from gonum's mat.Dense, including
// a strided sub-matrix, on every device.
func TestDenseRoundTrip(t *testing.T) {
	m := mat.NewDense(4, 5, nil)
	for i := range 4 {
		for j := range 5 {
			m.Set(i, j, float64(10*i+j)+0.5)
		}
	}
	sub := m.Slice(1, 3, 2, 5).(*mat.Dense) // rows 1-2, cols 2-4: a strided view
	for _, dev := range devtest.Devices(t) {
		x := tensor.FromDense(sub, tensor.On(dev), tensor.Of(tensor.Float32))
		if got, want := x.Shape(), []int{2, 3}; !slices.Equal(got, want) {
			t.Fatalf("%v: shape %v, want %v", dev, got, want)
		}
		if !mat.Equal(x.Dense(), sub) {
			t.Errorf("%v: round trip gave %v, want %v", dev, mat.Formatted(x.Dense()), mat.Formatted(sub))
		}
	}
	if x := tensor.FromDense(&mat.Dense{}); !slices.Equal(x.Shape(), []int{0, 0}) || x.DType() != tensor.Float64 {
		t.Errorf("empty matrix gave %v %v", x.Shape(), x.DType())
	}
	for name, f := range map[string]func(){
		"nil matrix":   func() { tensor.FromDense(nil) },
		"1-D tensor":   func() { tensor.Ones([]int{3}).Dense() },
		"empty tensor": func() { tensor.Ones([]int{0, 3}).Dense() },
	} {
		var e *tensor.Error
		if err := tensor.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: got %v, want a *tensor.Error", name, err)
		}
	}
}
